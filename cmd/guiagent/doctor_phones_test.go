package main

import (
	"context"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/ios/iostest"
	"github.com/guiagent/guiagent/internal/config"
)

func TestDoctorPhones(t *testing.T) {
	w := iostest.Start(t)
	env := map[string]string{config.Var("Backend"): "ios", config.Var("WDAURL"): w.URL}
	c, _, err := config.Load("doctor", nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var cs checks
	checkPhones(context.Background(), c, &cs)
	if len(cs) != 1 || cs[0].level != "ok" || !strings.Contains(cs[0].detail, "WebDriverAgent 9.3.3") || !strings.Contains(cs[0].detail, "iOS 17.5, screen 375x667 points at scale 2") {
		t.Errorf("doctor with --backend ios: %+v", cs)
	}

	env = map[string]string{config.Var("Backend"): "harmony", config.Var("HDC"): "/nonexistent/hdc"}
	if c, _, err = config.Load("doctor", nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	cs = nil
	checkPhones(context.Background(), c, &cs)
	if len(cs) != 1 || cs[0].level != "FAIL" || !strings.Contains(cs[0].detail, "hdc not found") || !strings.Contains(cs[0].fix, config.Var("HDC")) {
		t.Errorf("doctor with --backend harmony and no hdc: %+v", cs)
	}
}
