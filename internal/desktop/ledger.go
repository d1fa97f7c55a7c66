package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Ledger keeps Input's record of held keys and buttons in a small file, so
// that a process killed while something was pressed (SIGKILL, OOM, a crash)
// leaves a note the next start replays as releases (RecoverInput).
//
// The file is written before each press (temporary file, then rename, so a
// reader never sees half a file) and removed when nothing is held. It lives
// in dir/held-input, named after the display and the writing process id, so
// two processes on one display never overwrite each other's note.
type Ledger struct {
	dir, display, path string
	pid                int
	// StateVar names the setting of the state directory in errors (the
	// configuration's variable); "" names the directory only.
	StateVar string
}

// ledgerFile is the file's JSON form.
type ledgerFile struct {
	PID     int       `json:"pid"`
	Display string    `json:"display"`
	Backend string    `json:"backend,omitempty"`
	Keys    []Key     `json:"keys,omitempty"`
	Buttons []Button  `json:"buttons,omitempty"`
	Typing  bool      `json:"typing,omitempty"` // TypeText was running: it may hold keys of its own
	Written time.Time `json:"written"`
}

// NewLedger returns the ledger of this process for display (an X display
// name such as ":0", a VNC address, "" for the native desktop) under
// stateDir, creating the directory. Set it as Input.Ledger.
func NewLedger(stateDir, display string) (*Ledger, error) {
	if stateDir == "" {
		return nil, errors.New("input ledger: no state directory given")
	}
	dir := filepath.Join(stateDir, "held-input")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("input ledger: %w (the state directory %s must be a writable directory)", err, stateDir)
	}
	pid := os.Getpid()
	l := &Ledger{dir: dir, display: display, pid: pid}
	l.path = filepath.Join(dir, ledgerPrefix(display)+strconv.Itoa(pid)+".json")
	return l, nil
}

// stateName names the state directory in an error: its setting, else its path.
func (l *Ledger) stateName() string {
	if l.StateVar != "" {
		return "the state directory (" + l.StateVar + ")"
	}
	return "the state directory " + filepath.Dir(l.dir)
}

// Path is the file this process writes while something is held.
func (l *Ledger) Path() string { return l.path }

// ledgerPrefix turns a display name into a file-name prefix ("d-~3a3." for ":3").
func ledgerPrefix(display string) string {
	var sb strings.Builder
	sb.WriteString("d-")
	for _, r := range display {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			sb.WriteRune(r)
		default:
			sb.WriteString("~" + strconv.FormatInt(int64(r), 16))
		}
	}
	sb.WriteByte('.')
	return sb.String()
}

// save records what is (or is about to be) held; nothing held removes the file.
func (l *Ledger) save(backend string, keys []Key, buttons []Button, typing bool) error {
	if len(keys) == 0 && len(buttons) == 0 && !typing {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("input ledger: %w", err)
		}
		return nil
	}
	data, err := json.Marshal(ledgerFile{PID: l.pid, Display: l.display, Backend: backend,
		Keys: keys, Buttons: buttons, Typing: typing, Written: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("input ledger: %w", err)
	}
	tmp := l.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("input ledger: record held input: %w (%s must be writable)", err, l.stateName())
	}
	if err := os.Rename(tmp, l.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("input ledger: record held input: %w", err)
	}
	return nil
}

// Stuck is implemented by backends that can list and release every key and
// button the display shows pressed through their injection device (X11:
// XQueryKeymap and the pointer's button state, released through XTEST). It
// also catches what TypeText held internally when its process was killed.
type Stuck interface {
	ReleaseStuck(ctx context.Context) ([]string, error)
}

// Recovered is one ledger a dead process left and what replaying it did.
type Recovered struct {
	File     string   `json:"file"`
	PID      int      `json:"pid"`
	Written  string   `json:"written"`
	Keys     []Key    `json:"keys,omitempty"`
	Buttons  []Button `json:"buttons,omitempty"`
	Typing   bool     `json:"typing,omitempty"`
	Released []string `json:"released"` // what the display still showed pressed and was released
	Error    string   `json:"error,omitempty"`
}

// String is a one-line summary for logs and doctor.
func (r Recovered) String() string {
	var held []string
	for _, k := range r.Keys {
		held = append(held, "key "+string(k))
	}
	for _, b := range r.Buttons {
		held = append(held, "button "+b.String())
	}
	if r.Typing {
		held = append(held, "typing")
	}
	s := fmt.Sprintf("process %d (gone) left %s held (recorded %s); released: %s", r.PID,
		orNone(held), r.Written, orNone(r.Released))
	if r.Error != "" {
		s += "; error: " + r.Error
	}
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

// RecoverInput finds the ledgers that dead processes left for display under
// stateDir and releases what they held on s: when s implements Stuck and no
// live process holds input on this display, everything the display shows
// pressed (which includes keys TypeText held and the Shift a shifted key
// added); otherwise each recorded button and key. A replayed ledger is removed; one whose
// release failed is kept for the next try. Call it at start-up, before any
// input, with the backend started.
func RecoverInput(ctx context.Context, s Screen, stateDir, display string) ([]Recovered, error) {
	dir := filepath.Join(stateDir, "held-input")
	names, err := filepath.Glob(filepath.Join(dir, ledgerPrefix(display)+"*.json*"))
	if err != nil {
		return nil, fmt.Errorf("input ledger: %w", err)
	}
	var dead []string
	liveOther := false
	for _, name := range names {
		base, tmp := strings.CutSuffix(strings.TrimPrefix(filepath.Base(name), ledgerPrefix(display)), ".tmp")
		pid, err := strconv.Atoi(strings.TrimSuffix(base, ".json"))
		if err != nil || !strings.HasSuffix(base, ".json") {
			continue // not a ledger
		}
		switch {
		case pid != os.Getpid() && ProcessAlive(pid):
			liveOther = true
		case tmp:
			os.Remove(name) // killed before the rename: the press it announced never happened
		default:
			dead = append(dead, name)
		}
	}
	var out []Recovered
	var errs []error
	for _, name := range dead {
		r := replay(ctx, s, name, !liveOther)
		if r.Error != "" {
			errs = append(errs, fmt.Errorf("input ledger %s: %s", name, r.Error))
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// replay releases what one dead ledger held; sweep allows the Stuck sweep.
func replay(ctx context.Context, s Screen, name string, sweep bool) Recovered {
	r := Recovered{File: name}
	data, err := os.ReadFile(name)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	var f ledgerFile
	if err := json.Unmarshal(data, &f); err != nil {
		os.Remove(name) // unreadable: nothing to replay, and it would fail every start
		r.Error = fmt.Sprintf("unreadable ledger removed: %v", err)
		return r
	}
	r.PID, r.Keys, r.Buttons, r.Typing = f.PID, f.Keys, f.Buttons, f.Typing
	r.Written = f.Written.Format(time.RFC3339)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var errs []error
	if st, ok := s.(Stuck); ok && sweep {
		released, err := st.ReleaseStuck(rctx)
		r.Released = released
		errs = append(errs, err)
	} else {
		if p, ok := s.(Pointer); ok {
			for _, b := range slices.Backward(f.Buttons) {
				errs = append(errs, p.ButtonUp(rctx, b))
				r.Released = append(r.Released, "button "+b.String())
			}
		}
		if k, ok := s.(Keyboard); ok {
			for _, key := range slices.Backward(f.Keys) {
				errs = append(errs, k.KeyUp(rctx, key))
				r.Released = append(r.Released, "key "+string(key))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		r.Error = err.Error()
		return r
	}
	if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.Error = err.Error()
	}
	return r
}
