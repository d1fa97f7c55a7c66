package testenv

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// TestUser is the unprivileged user that programs refusing root (sway) run
// as when the tests run as root.
const TestUser = "guiagent-test"

var userMu sync.Mutex

// Unprivileged returns who a program that refuses root should run as: nil
// and our own ids when the test does not run as root; else TestUser's
// credential and ids, creating the user (a system user without a home or a
// login shell) when it is missing, so that `go test ./...` passes as root on
// a fresh machine whichever package runs first. Every test that needs the
// user calls this: it is the one place that creates it.
func Unprivileged(t testing.TB) (cred *syscall.Credential, uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil, os.Geteuid(), os.Getegid()
	}
	userMu.Lock()
	defer userMu.Unlock()
	u, err := user.Lookup(TestUser)
	if err != nil {
		out, aerr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TestUser).CombinedOutput()
		// Another test binary may have created it meanwhile (useradd exits 9).
		if u, err = user.Lookup(TestUser); err != nil {
			t.Fatalf("the test user %q is missing and could not be created (sway refuses to run as root): %v: %s; create it with `useradd --system --no-create-home %s`", TestUser, aerr, out, TestUser)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid
}
