package main

import (
	"strings"
	"testing"
)

// `guiagent run /dev/zero` stops reading at the flow size limit.
func TestRunReadsAFlowOfAtMostTheLimit(t *testing.T) {
	_, err := readFlow("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "larger than a flow may be (1048576 bytes, 1 MiB)") {
		t.Fatalf("reading /dev/zero as a flow: %v", err)
	}
}
