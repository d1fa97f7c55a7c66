package ios

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
)

// ListApps lists the apps running now (/wda/apps/list): WebDriverAgent
// cannot list the installed ones (that takes the device's installation
// service, outside WDA).
func (b *Backend) ListApps(ctx context.Context) ([]desktop.App, error) {
	var list []struct {
		PID      int    `json:"pid"`
		BundleID string `json:"bundleId"`
	}
	if err := b.c.inSession(ctx, http.MethodGet, "/wda/apps/list", nil, &list); err != nil {
		return nil, err
	}
	var apps []desktop.App
	for _, a := range list {
		if a.BundleID != "" {
			apps = append(apps, desktop.App{ID: a.BundleID})
		}
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].ID < apps[j].ID })
	return apps, nil
}

func validBundle(id string) error {
	if id == "" || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
		return fmt.Errorf("%q is not an iOS bundle id (such as com.apple.Preferences)", id)
	}
	return nil
}

// LaunchApp launches the app (or brings it to the front).
func (b *Backend) LaunchApp(ctx context.Context, id string) error {
	if err := validBundle(id); err != nil {
		return err
	}
	return b.c.inSession(ctx, http.MethodPost, "/wda/apps/launch", map[string]any{"bundleId": id}, nil)
}

// StopApp terminates the app.
func (b *Backend) StopApp(ctx context.Context, id string) error {
	if err := validBundle(id); err != nil {
		return err
	}
	var ok bool
	if err := b.c.inSession(ctx, http.MethodPost, "/wda/apps/terminate", map[string]any{"bundleId": id}, &ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("WebDriverAgent did not terminate %s (is it running? see the apps list)", id)
	}
	return nil
}

// OpenURL opens a web address or deep link in the app that handles it.
func (b *Backend) OpenURL(ctx context.Context, url string) error {
	if url == "" || strings.ContainsAny(url, "\n\r\x00") {
		return fmt.Errorf("bad URL %q", url)
	}
	return b.c.inSession(ctx, http.MethodPost, "/url", map[string]any{"url": url}, nil)
}
