package atspi

// roleNames are AT-SPI's role names by AtspiRole number, as
// atspi_role_get_name spells them (at-spi2-core 2.46; 130 roles).
var roleNames = [...]string{
	"invalid", "accelerator label", "alert", "animation", "arrow", "calendar", "canvas", "check box",
	"check menu item", "color chooser", "column header", "combo box", "date editor", "desktop icon",
	"desktop frame", "dial", "dialog", "directory pane", "drawing area", "file chooser", "filler",
	"focus traversable", "font chooser", "frame", "glass pane", "html container", "icon", "image",
	"internal frame", "label", "layered pane", "list", "list item", "menu", "menu bar", "menu item",
	"option pane", "page tab", "page tab list", "panel", "password text", "popup menu", "progress bar",
	"push button", "radio button", "radio menu item", "root pane", "row header", "scroll bar",
	"scroll pane", "separator", "slider", "spin button", "split pane", "status bar", "table",
	"table cell", "table column header", "table row header", "tearoff menu item", "terminal", "text",
	"toggle button", "tool bar", "tool tip", "tree", "tree table", "unknown", "viewport", "window",
	"extended", "header", "footer", "paragraph", "ruler", "application", "autocomplete", "editbar",
	"embedded", "entry", "chart", "caption", "document frame", "heading", "page", "section",
	"redundant object", "form", "link", "input method window", "table row", "tree item",
	"document spreadsheet", "document presentation", "document text", "document web",
	"document email", "comment", "list box", "grouping", "image map", "notification", "info bar",
	"level bar", "title bar", "block quote", "audio", "video", "definition", "article", "landmark",
	"log", "marquee", "math", "rating", "timer", "static", "math fraction", "math root", "subscript",
	"superscript", "description list", "description term", "description value", "footnote",
	"content deletion", "content insertion", "mark", "suggestion", "push button menu",
}

// Role numbers the walk treats specially.
const (
	roleApplication = 75
	roleFrame       = 23
	roleWindow      = 69
	roleDialog      = 16
	roleAlert       = 2
	roleScrollPane  = 49
	roleViewport    = 68
	roleFiller      = 20
	rolePanel       = 39
	roleTable       = 55
	roleTree        = 65
	roleTreeTable   = 66
)

func roleName(r uint32) string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "unknown"
}

// AT-SPI state bits (AtspiStateType), as a 64-bit set.
const (
	stateActive             = 1
	stateChecked            = 4
	stateEditable           = 7
	stateEnabled            = 8
	stateExpanded           = 10
	stateFocused            = 12
	statePressed            = 20
	stateSelected           = 23
	stateSensitive          = 24
	stateShowing            = 25
	stateVisible            = 30
	stateManagesDescendants = 31
)

type stateSet uint64

func (s stateSet) has(bit uint) bool { return s&(1<<bit) != 0 }

func states(words []uint32) stateSet {
	var s stateSet
	for i, w := range words {
		if i < 2 {
			s |= stateSet(w) << (32 * uint(i))
		}
	}
	return s
}

// Interfaces an object offers, as bits.
const (
	ifComponent = 1 << iota
	ifText
	ifEditableText
	ifValue
	ifAction
)

func interfaces(names []string) uint8 {
	var m uint8
	for _, n := range names {
		switch n {
		case "org.a11y.atspi.Component":
			m |= ifComponent
		case "org.a11y.atspi.Text":
			m |= ifText
		case "org.a11y.atspi.EditableText":
			m |= ifEditableText
		case "org.a11y.atspi.Value":
			m |= ifValue
		case "org.a11y.atspi.Action":
			m |= ifAction
		}
	}
	return m
}

// relationLabelledBy is ATSPI_RELATION_LABELLED_BY.
const relationLabelledBy = 2
