package anthropic

import (
	"os"
	"testing"

	"github.com/guiagent/guiagent/internal/llm/internal/sdkmodels"
)

// TestLifecycleIsTheSDKs: lifecycle_gen.go is what the SDK go.mod pins marks
// deprecated; after an SDK bump, run go generate in this package.
func TestLifecycleIsTheSDKs(t *testing.T) {
	want, err := sdkmodels.Generate("github.com/anthropics/anthropic-sdk-go", "message.go", "anthropic", "sdkLifecycle", []string{"Model"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("lifecycle_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("lifecycle_gen.go is not the pinned SDK's deprecation markers: run go generate in internal/llm/anthropic")
	}
	if len(sdkLifecycle) == 0 {
		t.Fatal("the SDK marks no model deprecated: the markers were not read")
	}
}
