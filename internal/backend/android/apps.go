package android

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
)

// ListApps lists the apps the user installed (pm list packages -3). Labels
// are left out: Android's shell has no cheap way to read them.
func (b *Backend) ListApps(ctx context.Context) ([]desktop.App, error) {
	out, err := b.dev.Run(ctx, "pm list packages -3")
	if err != nil {
		return nil, err
	}
	var apps []desktop.App
	for _, l := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(l), "package:"); ok && id != "" {
			apps = append(apps, desktop.App{ID: id})
		}
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].ID < apps[j].ID })
	return apps, nil
}

func validPackage(id string) error {
	if id == "" || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._") != "" {
		return fmt.Errorf("%q is not an Android package name (such as com.android.settings)", id)
	}
	return nil
}

// LaunchApp starts the app's launcher activity.
func (b *Backend) LaunchApp(ctx context.Context, id string) error {
	if err := validPackage(id); err != nil {
		return err
	}
	out, err := b.dev.Run(ctx, "cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER "+id)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	comp := strings.TrimSpace(lines[len(lines)-1])
	if !strings.Contains(comp, "/") {
		// resolve-activity may be missing (Android 6 and older): ask monkey.
		r, err := b.dev.Shell(ctx, "monkey -p "+id+" -c android.intent.category.LAUNCHER 1")
		if err != nil {
			return err
		}
		if !strings.Contains(string(r.Stdout), "Events injected: 1") {
			return fmt.Errorf("android device %s: %s has no launcher activity (is it installed? see the apps list): %s", b.dev.Serial(), id, strings.TrimSpace(string(r.Stderr)+" "+comp))
		}
		return nil
	}
	r, err := b.dev.Shell(ctx, "am start -n "+shellQuote(comp))
	if err != nil {
		return err
	}
	if msg := strings.TrimSpace(string(r.Stderr)); r.Exit > 0 || strings.Contains(msg, "Error") {
		return fmt.Errorf("android device %s: starting %s: %s", b.dev.Serial(), comp, msg)
	}
	return nil
}

// StopApp force-stops the app.
func (b *Backend) StopApp(ctx context.Context, id string) error {
	if err := validPackage(id); err != nil {
		return err
	}
	_, err := b.dev.Run(ctx, "am force-stop "+id)
	return err
}

// OpenURL opens a web address or deep link in the app that handles it.
func (b *Backend) OpenURL(ctx context.Context, url string) error {
	if url == "" || strings.ContainsAny(url, "\n\r\x00") {
		return fmt.Errorf("bad URL %q", url)
	}
	r, err := b.dev.Shell(ctx, "am start -a android.intent.action.VIEW -d "+shellQuote(url))
	if err != nil {
		return err
	}
	if msg := strings.TrimSpace(string(r.Stderr)); r.Exit > 0 || strings.Contains(msg, "Error") {
		return fmt.Errorf("android device %s: no app opens %s: %s", b.dev.Serial(), url, msg)
	}
	return nil
}
