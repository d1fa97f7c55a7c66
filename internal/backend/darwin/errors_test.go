package darwin

import (
	"errors"
	"strings"
	"testing"
)

func TestPermissionErrorsNameTheSettingToGrant(t *testing.T) {
	err := accessibilityError()
	if !errors.Is(err, ErrAccessibility) {
		t.Fatalf("%v is not ErrAccessibility", err)
	}
	if !strings.Contains(err.Error(), "System Settings > Privacy & Security > Accessibility") {
		t.Errorf("accessibility error %q does not name the setting", err)
	}
	err = screenRecordingError("the capture returned no image")
	if !errors.Is(err, ErrScreenRecording) {
		t.Fatalf("%v is not ErrScreenRecording", err)
	}
	for _, want := range []string{"System Settings > Privacy & Security > Screen Recording", "the capture returned no image", "restart"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("screen recording error %q lacks %q", err, want)
		}
	}
}
