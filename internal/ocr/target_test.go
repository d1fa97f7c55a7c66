package ocr

import (
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func TestParseTarget(t *testing.T) {
	cases := []struct {
		desc string
		ok   bool
		want Target
	}{
		{`"BLUE"`, true, Target{Text: "BLUE", Match: Exact, Quoted: true}},
		{`the "Save as" button`, true, Target{Text: "Save as", Match: Exact, Quoted: true, Role: "button"}},
		{`the second "OK" button`, true, Target{Text: "OK", Match: Exact, Quoted: true, Nth: 2, Role: "button"}},
		{`click “Weiter”`, true, Target{Text: "Weiter", Match: Exact, Quoted: true}},
		{`Item 3`, true, Target{Text: "Item 3", Match: Exact}},
		{`Submit`, true, Target{Text: "Submit", Match: Exact}},
		{`the Submit button`, true, Target{Text: "Submit", Match: Exact, Role: "button"}},
		{`the last Item 2 row`, true, Target{Text: "Item 2", Match: Exact, Nth: -1, Role: "row"}},
		{`the 3rd OK`, true, Target{Text: "OK", Match: Exact, Nth: 3}},
		{`Sign in link`, true, Target{Text: "Sign in", Match: Exact, Role: "link"}},
		{`Menu`, true, Target{Text: "Menu", Match: Exact}}, // a lone role word is a label
		{`the red button`, false, Target{}},                // a colour, not words on the screen
		{`the field under Email`, false, Target{}},
		{`the Name field`, false, Target{}}, // Name is the field's label, beside it: left to the tree or the model
		{`the Email text field`, false, Target{}},
		{`the "Name" field`, false, Target{}},
		{`the Save button at the bottom of the dialog`, false, Target{}},
		{`don't press it`, false, Target{}}, // an apostrophe is not a quote
		{`""`, false, Target{}},
		{``, false, Target{}},
	}
	for _, c := range cases {
		got, ok := ParseTarget(c.desc)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v, %v", c.desc, got, ok, c.want, c.ok)
		}
	}
}

func TestPick(t *testing.T) {
	p := page("OK Cancel", "BLUE Blue", "OK")
	find := func(text string) []Match {
		ms, err := Find(p, Query{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	oks := find("OK")
	_, err := Pick(oks, Target{Text: "OK"})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || !errors.Is(err, ErrAmbiguous) || len(amb.Matches) != 2 ||
		!strings.Contains(err.Error(), "the second OK") || !strings.Contains(err.Error(), oks[1].Box.String()) {
		t.Errorf("two OKs: %v, want an AmbiguousError listing both places and how to say which", err)
	}
	if m, err := Pick(oks, Target{Text: "OK", Nth: 2}); err != nil || m.Line != 2 {
		t.Errorf("the second OK: %+v, %v", m, err)
	}
	if m, err := Pick(oks, Target{Text: "OK", Nth: -1}); err != nil || m.Line != 2 {
		t.Errorf("the last OK: %+v, %v", m, err)
	}
	if _, err := Pick(oks, Target{Text: "OK", Nth: 3}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "2 places") {
		t.Errorf("the third of two: %v", err)
	}
	region := geom.ImageRect{X: 0, Y: p.Lines[2].Box.Y - 1, W: 100, H: 14}
	if m, err := Pick(oks, Target{Text: "OK", Region: region}); err != nil || m.Line != 2 {
		t.Errorf("OK in a region: %+v, %v", m, err)
	}
	if m, err := Pick(find("Blue"), Target{Text: "Blue"}); err != nil || m.Text != "Blue" {
		t.Errorf("Blue among BLUE and Blue: %+v, %v; want the one in the target's case", m, err)
	}
	if _, err := Pick(find("Nothing"), Target{Text: "Nothing"}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"Nothing"`) {
		t.Errorf("no match: %v", err)
	}
}
