// Package testenv names what a test needs beyond the Go toolchain: an X
// server it starts (Xvfb, Xvnc), an Xorg dummy server, sway, Wine, Chromium or Node.js. Each
// Need function skips the test in the short lane (go test -short), saying
// what it needs, so that a change to a pure package tests in seconds; without
// -short (CI and the README's go test ./...) it does nothing and the test runs,
// failing when what it needs is missing.
//
// The helpers that start these things (xvfbtest, winetest, browsertest, the
// e2e harness) call them, and so does any test that has the product start a
// display itself (a virtual display option). DieWithTest ties a program a
// test starts to the test binary's life; DBusDaemon starts a private bus
// (the AT-SPI and portal tests); WaitUntil polls a condition; Buffer
// collects a program's output while the test reads it. Standard library
// only.
package testenv

import (
	"os/exec"
	"testing"
	"time"
)

// NeedX: the test starts an X server of its own (Xvfb or Xvnc), directly or
// through the product's virtual display.
func NeedX(t testing.TB) {
	t.Helper()
	skipShort(t, "an X server it starts (Xvfb)")
}

// NeedXorg: the test starts an Xorg server with the dummy driver (two monitors).
func NeedXorg(t testing.TB) {
	t.Helper()
	skipShort(t, "an Xorg dummy server it starts")
}

// NeedSway: the test starts a headless sway (a wlroots Wayland compositor) of its own.
func NeedSway(t testing.TB) {
	t.Helper()
	skipShort(t, "a headless sway it starts")
}

// NeedWine: the test runs Windows programs under Wine (and builds them with mingw-w64).
func NeedWine(t testing.TB) {
	t.Helper()
	skipShort(t, "Wine and mingw-w64")
}

// NeedChromium: the test drives a headless Chromium.
func NeedChromium(t testing.TB) {
	t.Helper()
	skipShort(t, "a headless Chromium")
}

// NeedNode: the test runs a Node.js program installed with npm (a peer MCP
// server measured beside guiagent). Without node or npm it fails, saying so.
func NeedNode(t testing.TB) {
	t.Helper()
	skipShort(t, "Node.js and npm")
	for _, prog := range []string{"node", "npm"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("%s is not installed: this test runs a Node.js program installed with npm (Debian: apt-get install nodejs npm)", prog)
		}
	}
}

func skipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: skipped in the short lane (-short); run go test without -short to include it", what)
	}
}

// WaitUntil polls cond every 20 ms until it holds (true) or d has passed
// (false).
func WaitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
