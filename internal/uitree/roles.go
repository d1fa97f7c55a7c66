// Package uitree holds the pure parts of seeing the UI as elements, shared by
// every element source and by the tools that use snapshots: normalizing
// platform roles to desktop.Role, naming unnamed fields from the label next
// to them, finding the element a target phrase means, and the compact text
// outline of a snapshot. It does no I/O.
package uitree

import (
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
)

// platformRoles maps platform role names (AT-SPI's role names, lower case, as
// atspi_role_get_name spells them) to normalized roles. Names not listed are
// generic; normalized names map to themselves.
var platformRoles = map[string]desktop.Role{
	"push button": desktop.RoleButton, "toggle button": desktop.RoleButton, "push button menu": desktop.RoleButton,
	"entry": desktop.RoleTextbox, "password text": desktop.RoleTextbox, "terminal": desktop.RoleTextbox, "editbar": desktop.RoleTextbox,
	"check box":    desktop.RoleCheckbox,
	"radio button": desktop.RoleRadio,
	"combo box":    desktop.RoleCombobox, "autocomplete": desktop.RoleCombobox,
	"link": desktop.RoleLink,
	"menu": desktop.RoleMenu, "popup menu": desktop.RoleMenu,
	"menu bar":  desktop.RoleMenuBar,
	"menu item": desktop.RoleMenuItem, "check menu item": desktop.RoleMenuItem, "radio menu item": desktop.RoleMenuItem, "tearoff menu item": desktop.RoleMenuItem,
	"page tab":      desktop.RoleTab,
	"page tab list": desktop.RoleTabList,
	"list":          desktop.RoleList, "list box": desktop.RoleList, "description list": desktop.RoleList,
	"list item": desktop.RoleListItem,
	"tree":      desktop.RoleTree, "tree table": desktop.RoleTree,
	"tree item": desktop.RoleTreeItem,
	"table":     desktop.RoleTable, "document spreadsheet": desktop.RoleTable,
	"table row":  desktop.RoleRow,
	"table cell": desktop.RoleCell, "row header": desktop.RoleCell, "table row header": desktop.RoleCell,
	"column header": desktop.RoleColumnHeader, "table column header": desktop.RoleColumnHeader,
	"slider": desktop.RoleSlider, "dial": desktop.RoleSlider,
	"spin button":  desktop.RoleSpinButton,
	"scroll bar":   desktop.RoleScrollBar,
	"progress bar": desktop.RoleProgressBar, "level bar": desktop.RoleProgressBar,
	"heading": desktop.RoleHeading,
	"label":   desktop.RoleText, "static": desktop.RoleText, "caption": desktop.RoleText, "paragraph": desktop.RoleText,
	"accelerator label": desktop.RoleText, "description term": desktop.RoleText, "description value": desktop.RoleText,
	"image": desktop.RoleImage, "icon": desktop.RoleImage, "animation": desktop.RoleImage, "image map": desktop.RoleImage,
	"canvas": desktop.RoleImage, "drawing area": desktop.RoleImage, "chart": desktop.RoleImage,
	"dialog": desktop.RoleDialog, "file chooser": desktop.RoleDialog, "font chooser": desktop.RoleDialog,
	"color chooser": desktop.RoleDialog, "option pane": desktop.RoleDialog,
	"alert": desktop.RoleAlert, "notification": desktop.RoleAlert,
	"frame": desktop.RoleWindow, "window": desktop.RoleWindow, "internal frame": desktop.RoleWindow,
	"tool bar":   desktop.RoleToolbar,
	"status bar": desktop.RoleStatus, "info bar": desktop.RoleStatus,
	"tool tip": desktop.RoleTooltip,
	"grouping": desktop.RoleGroup, "form": desktop.RoleGroup, "landmark": desktop.RoleGroup,
	"document frame": desktop.RoleDocument, "document web": desktop.RoleDocument, "document text": desktop.RoleDocument,
	"document email": desktop.RoleDocument, "document presentation": desktop.RoleDocument, "article": desktop.RoleDocument,
	"separator":   desktop.RoleSeparator,
	"application": desktop.RoleApplication,
}

var normalized = map[desktop.Role]bool{}

func init() {
	for _, r := range platformRoles {
		normalized[r] = true
	}
	normalized[desktop.RoleGeneric] = true
}

// NormalizeRole maps a platform role name to the normalized role. The states
// decide the one ambiguous AT-SPI role, "text": an editable one is a textbox
// (GTK 3 entries and text views), the rest is text. Unknown names are generic.
func NormalizeRole(platform string, st desktop.States) desktop.Role {
	p := strings.ToLower(strings.TrimSpace(platform))
	if p == "text" {
		if st.Editable || st.Protected {
			return desktop.RoleTextbox
		}
		return desktop.RoleText
	}
	if r, ok := platformRoles[p]; ok {
		return r
	}
	if normalized[desktop.Role(p)] {
		return desktop.Role(p)
	}
	return desktop.RoleGeneric
}

// Interactive reports whether r is something a user operates (as opposed to
// text, images and containers).
func Interactive(r desktop.Role) bool {
	switch r {
	case desktop.RoleButton, desktop.RoleTextbox, desktop.RoleCheckbox, desktop.RoleRadio, desktop.RoleCombobox,
		desktop.RoleLink, desktop.RoleMenuItem, desktop.RoleTab, desktop.RoleListItem, desktop.RoleTreeItem,
		desktop.RoleSlider, desktop.RoleSpinButton, desktop.RoleCell, desktop.RoleColumnHeader, desktop.RoleScrollBar, desktop.RoleMenu:
		return true
	}
	return false
}

// Field reports whether r is a control that takes a value and is often left
// unnamed by toolkits, so that the label beside it names it.
func Field(r desktop.Role) bool {
	switch r {
	case desktop.RoleTextbox, desktop.RoleCombobox, desktop.RoleSlider, desktop.RoleSpinButton:
		return true
	}
	return false
}
