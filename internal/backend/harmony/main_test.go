package harmony_test

import (
	"os"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/harmony/harmonytest"
)

// TestMain runs the fake hdc when the backend starts this test binary as
// hdc (harmonytest.Start links it so), else the tests.
func TestMain(m *testing.M) {
	if harmonytest.IsFake() {
		os.Exit(harmonytest.Main(os.Args[1:], os.Stdout))
	}
	os.Exit(m.Run())
}
