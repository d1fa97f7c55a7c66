package harmony

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
)

// ListApps lists the installed bundles (`bm dump -a`).
func (b *Backend) ListApps(ctx context.Context) ([]desktop.App, error) {
	out, err := b.shell(ctx, "bm dump -a")
	if err != nil {
		return nil, err
	}
	var apps []desktop.App
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "ID:") {
			continue
		}
		apps = append(apps, desktop.App{ID: l})
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].ID < apps[j].ID })
	return apps, nil
}

func validName(id string) error {
	if id == "" || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._") != "" {
		return fmt.Errorf("%q is not a HarmonyOS bundle name (such as com.huawei.hmos.settings), nor BUNDLE/ABILITY", id)
	}
	return nil
}

// mainAbility reads the bundle's main ability from `bm dump -n BUNDLE`
// (the line "BUNDLE:" then the bundle's JSON): the entry module's
// mainAbility.
func (b *Backend) mainAbility(ctx context.Context, bundle string) (string, error) {
	out, err := b.shell(ctx, "bm dump -n "+bundle)
	if err != nil {
		return "", err
	}
	i := strings.IndexByte(out, '{')
	var info struct {
		MainEntry string `json:"mainEntry"`
		Modules   []struct {
			ModuleName  string `json:"moduleName"`
			MainAbility string `json:"mainAbility"`
		} `json:"hapModuleInfos"`
	}
	if i < 0 || json.Unmarshal([]byte(out[i:]), &info) != nil {
		return "", fmt.Errorf("HarmonyOS device %s: %s is not installed (see the apps list): %s", b.target, bundle, firstLine(out))
	}
	for _, m := range info.Modules {
		if m.ModuleName == info.MainEntry && m.MainAbility != "" {
			return m.MainAbility, nil
		}
	}
	for _, m := range info.Modules {
		if m.MainAbility != "" {
			return m.MainAbility, nil
		}
	}
	return "", fmt.Errorf("HarmonyOS device %s: %s has no main ability to start; name one as %s/ABILITY", b.target, bundle, bundle)
}

// LaunchApp starts a bundle's main ability (`aa start -a ABILITY -b
// BUNDLE`); id may name the ability as BUNDLE/ABILITY.
func (b *Backend) LaunchApp(ctx context.Context, id string) error {
	bundle, ability, _ := strings.Cut(id, "/")
	if err := validName(bundle); err != nil {
		return err
	}
	if ability != "" {
		if err := validName(ability); err != nil {
			return err
		}
	} else {
		var err error
		if ability, err = b.mainAbility(ctx, bundle); err != nil {
			return err
		}
	}
	out, err := b.shell(ctx, "aa start -a "+ability+" -b "+bundle)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "start ability successfully") {
		return fmt.Errorf("HarmonyOS device %s: starting %s/%s: %s", b.target, bundle, ability, strings.TrimSpace(out))
	}
	return nil
}

// StopApp force-stops the bundle.
func (b *Backend) StopApp(ctx context.Context, id string) error {
	bundle, _, _ := strings.Cut(id, "/")
	if err := validName(bundle); err != nil {
		return err
	}
	out, err := b.shell(ctx, "aa force-stop "+bundle)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "force stop process successfully") {
		return fmt.Errorf("HarmonyOS device %s: stopping %s: %s", b.target, bundle, strings.TrimSpace(out))
	}
	return nil
}

// OpenURL opens a web address or deep link (aa start with the viewData
// action).
func (b *Backend) OpenURL(ctx context.Context, url string) error {
	if url == "" || strings.ContainsAny(url, "\n\r\x00") {
		return fmt.Errorf("bad URL %q", url)
	}
	out, err := b.shell(ctx, "aa start -A ohos.want.action.viewData -U "+quote(url))
	if err != nil {
		return err
	}
	if !strings.Contains(out, "start ability successfully") {
		return fmt.Errorf("HarmonyOS device %s: no app opens %s: %s", b.target, url, strings.TrimSpace(out))
	}
	return nil
}
