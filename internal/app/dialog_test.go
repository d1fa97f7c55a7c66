package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/ask"
)

// TestAskDialog: a page's dialog is a question on the dashboard when it is
// served (confirm answered yes or no, a prompt's text returned), and is
// dismissed at once when nobody can be asked.
func TestAskDialog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a := &App{questions: ask.NewBroker(false)}
	start := time.Now()
	if ok, _, err := a.askDialog(ctx, "confirm", "Delete?"); ok || err == nil || time.Since(start) > time.Second {
		t.Fatalf("with no dashboard: accept %v, err %v after %v; want a dismissal at once", ok, err, time.Since(start))
	}
	a.questions.SetDashboard(true)
	answer := func(value string) {
		go func() {
			for ctx.Err() == nil {
				if qs := a.questions.Pending(); len(qs) > 0 {
					if !strings.Contains(qs[0].Text, "Delete?") && !strings.Contains(qs[0].Text, "Your name?") {
						t.Errorf("the question does not quote the dialog: %q", qs[0].Text)
					}
					_ = a.questions.Answer(qs[0].ID, ask.Answer{Outcome: ask.Accept, Value: value})
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	answer(ask.Yes)
	if ok, _, err := a.askDialog(ctx, "confirm", "Delete?"); !ok || err != nil {
		t.Errorf("confirm answered yes: accept %v, err %v", ok, err)
	}
	answer("no")
	if ok, _, err := a.askDialog(ctx, "confirm", "Delete?"); ok || err != nil {
		t.Errorf("confirm answered no: accept %v, err %v", ok, err)
	}
	answer("Ada")
	if ok, text, err := a.askDialog(ctx, "prompt", "Your name?"); !ok || text != "Ada" || err != nil {
		t.Errorf("prompt answered Ada: accept %v, text %q, err %v", ok, text, err)
	}
}
