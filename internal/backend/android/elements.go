package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/desktop"
)

// dumpPath is where uiautomator writes its dump; the shell user may write there.
const dumpPath = "/data/local/tmp/guiagent-ui.xml"

// dumpTries bounds the dumps tried while the screen keeps animating.
const dumpTries = 4

// ErrNotIdle is wrapped by the error of a dump that never found the screen idle.
var ErrNotIdle = errors.New("the screen never became idle")

// Dump reads the UI hierarchy with `uiautomator dump`. A dump that fails
// (uiautomator cannot get an idle state while something animates) is
// tried again, at most dumpTries times and not after budget has passed.
func (b *Backend) Dump(ctx context.Context, budget time.Duration) ([]*phone.Node, error) {
	start := time.Now()
	cmd := "rm -f " + dumpPath + "; uiautomator dump " + dumpPath + " && cat " + dumpPath
	var cause string
	tries := 0
	for tries < dumpTries && (tries == 0 || time.Since(start) < budget) {
		tries++
		r, err := b.dev.Shell(ctx, cmd)
		if err != nil {
			return nil, err
		}
		if i := bytes.Index(r.Stdout, []byte("<?xml")); i >= 0 {
			roots, _, err := phone.ParseUIAutomator(r.Stdout[i:])
			if err != nil {
				return nil, fmt.Errorf("android device %s: %w", b.dev.Serial(), err)
			}
			return roots, nil
		}
		cause = strings.TrimSpace(string(r.Stderr) + " " + string(r.Stdout))
		if !strings.Contains(cause, "idle state") && !strings.Contains(cause, "null root node") {
			return nil, fmt.Errorf("android device %s: uiautomator dump failed: %s", b.dev.Serial(), cause)
		}
		t := time.NewTimer(150 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return nil, fmt.Errorf("android device %s: uiautomator could not read the screen in %d tries (%s): %w; something keeps animating: turn animations off in Settings > Developer options (Window, Transition and Animator animation scale: Off), or run `adb shell settings put global window_animation_scale 0; adb shell settings put global transition_animation_scale 0; adb shell settings put global animator_duration_scale 0`",
		b.dev.Serial(), tries, cause, ErrNotIdle)
}

// Elements reads the UI as elements from a uiautomator dump.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	roots, err := b.Dump(ctx, q.Budget)
	if err != nil {
		return nil, err
	}
	fg := ""
	if len(roots) > 0 {
		fg = roots[0].Package
	}
	b.checkShape(roots)
	if len(q.Bounds) == 0 {
		if s, err := b.screenSize(ctx); err == nil {
			q.Bounds = append(q.Bounds, b.logical(s))
		}
	}
	return phone.Snapshot(ctx, phone.Tree{Source: "uiautomator", Roots: roots, Scale: b.scale, Foreground: fg}, q)
}

// find dumps the screen and returns the node handle names.
// actor is the backend's element actor: its dumps, and input's taps and
// keys.
func (b *Backend) actor() phone.Actor {
	return phone.Actor{System: "an android", Role: RoleOf, Replace: b.replace,
		Read: func(ctx context.Context) ([]*phone.Node, error) { return b.Dump(ctx, desktop.DefaultBudget) },
		Tap: func(ctx context.Context, p image.Point) error {
			_, err := b.dev.Run(ctx, tapCommand(p))
			return err
		}}
}

// Press taps the element's centre.
func (b *Backend) Press(ctx context.Context, handle string) error {
	return b.actor().Press(ctx, handle)
}

// Text reads an element's text from a new dump; a password field's is
// never read.
func (b *Backend) Text(ctx context.Context, handle string) (string, error) {
	return b.actor().Text(ctx, handle)
}

// SetText replaces a text field's text: it taps the field, selects all
// and deletes it (ctrl+a on Android 13+, else the end and one delete a
// character), types text, and reads the field back from a new dump. A
// text that needs a Unicode keyboard the phone lacks is refused first.
func (b *Backend) SetText(ctx context.Context, handle, text string) error {
	if _, err := phone.HandleCentre(handle, "an android"); err != nil {
		return err
	}
	for _, c := range text {
		if !isTypable(c) && c != '\n' && c != '\t' {
			if err := b.checkUnicode(ctx, text); err != nil {
				return err
			}
			break
		}
	}
	return b.actor().SetText(ctx, handle, text)
}

// replace is the actor's Replace: the tap and the clearing in one shell
// command.
func (b *Backend) replace(ctx context.Context, c image.Point, n *phone.Node, text string) error {
	clear := tapCommand(c) + " && "
	if b.sdk >= 33 {
		clear += "input keycombination KEYCODE_CTRL_LEFT KEYCODE_A && input keyevent KEYCODE_DEL"
	} else {
		dels := utf8.RuneCountInString(n.Text) + 1
		if n.Password {
			dels = 128
		}
		clear += "input keyevent KEYCODE_MOVE_END" + strings.Repeat(" KEYCODE_DEL", dels)
	}
	if _, err := b.dev.Run(ctx, clear); err != nil {
		return err
	}
	return b.TypeText(ctx, text)
}

// RoleOf is the role of a node (phone.RoleOf).
func RoleOf(n *phone.Node) desktop.Role { return phone.RoleOf(n) }

// checkShape forgets the screen's size when the dump's windows reach past
// it: the phone turned since the last screenshot, and the next Displays
// reads the size anew, so the boxes of this dump are never placed in a
// frame of the old shape.
func (b *Backend) checkShape(roots []*phone.Node) {
	var ext image.Point
	for _, r := range roots {
		ext.X, ext.Y = max(ext.X, r.Bounds.Max.X), max(ext.Y, r.Bounds.Max.Y)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size != (image.Point{}) && (ext.X > b.size.X+1 || ext.Y > b.size.Y+1) {
		b.size = image.Point{}
	}
}
