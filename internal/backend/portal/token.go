package portal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/godbus/dbus/v5"
)

// tokenFile is where the restore token of the input grant is kept, "" when
// there is no state directory.
func (b *Backend) tokenFile() string {
	if b.opts.StateDir == "" {
		return ""
	}
	return filepath.Join(b.opts.StateDir, "portal", "remote-desktop.token")
}

// tokenNote names the file in messages: " in FILE".
func (b *Backend) tokenNote() string {
	if f := b.tokenFile(); f != "" {
		return " in " + f
	}
	return ""
}

// loadToken reads the restore token of the last grant, "" when none.
func (b *Backend) loadToken() (string, error) {
	f := b.tokenFile()
	if f == "" {
		return "", nil
	}
	data, err := os.ReadFile(f)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("portal input: read the restore token: %w%s", err, b.stateFix())
	}
	return strings.TrimSpace(string(data)), nil
}

// saveToken keeps Start's new restore_token (a token is good for one
// restore), or removes the spent one when the portal gave none.
func (b *Backend) saveToken(res map[string]dbus.Variant) error {
	f := b.tokenFile()
	if f == "" {
		return nil
	}
	tok, _ := res["restore_token"].Value().(string)
	if tok == "" {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("portal input: remove the spent restore token: %w%s", err, b.stateFix())
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return fmt.Errorf("portal input: keep the restore token: %w%s", err, b.stateFix())
	}
	tmp := f + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return fmt.Errorf("portal input: keep the restore token: %w%s", err, b.stateFix())
	}
	if err := os.Rename(tmp, f); err != nil {
		return fmt.Errorf("portal input: keep the restore token: %w%s", err, b.stateFix())
	}
	return nil
}

func (b *Backend) stateFix() string {
	if b.opts.StateSetting == "" {
		return ""
	}
	return " (set " + b.opts.StateSetting + " to a writable directory)"
}
