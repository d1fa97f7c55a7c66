package fakellm

import (
	"image"
	"image/color"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
)

// The brain vocabulary lives in internal/llm/scripted (the demo uses it
// without this test fake); these names let the servers' users say
// fakellm.Turn, fakellm.Reply and so on.
type (
	// Turn is what a brain sees of one request (scripted.Turn).
	Turn = scripted.Turn
	// Reply is a brain's answer (scripted.Reply).
	Reply = scripted.Reply
	// BrainAsk is a question for the user (scripted.BrainAsk).
	BrainAsk = scripted.BrainAsk
	// BrainAction is one action in pixels of the image received (scripted.BrainAction).
	BrainAction = scripted.BrainAction
	// Brain decides the answer to one request (scripted.Brain).
	Brain = scripted.Brain
)

// Script is scripted.Script: the n-th call answered with replies[n-1], the last repeated.
func Script(replies ...func(Turn) Reply) Brain { return scripted.Script(replies...) }

// Fixed is scripted.Fixed: a script entry that always answers r.
func Fixed(r Reply) func(Turn) Reply { return scripted.Fixed(r) }

// ClickAt is scripted.ClickAt: a left click at p (image pixels).
func ClickAt(p image.Point) BrainAction { return scripted.ClickAt(p) }

// ClickRef is scripted.ClickRef: a left click on the element with ref.
func ClickRef(ref string) BrainAction { return scripted.ClickRef(ref) }

// TypeText is scripted.TypeText: an action typing s.
func TypeText(s string) BrainAction { return scripted.TypeText(s) }

// PressKeys is scripted.PressKeys: one key combination.
func PressKeys(keys ...string) BrainAction { return scripted.PressKeys(keys...) }

// Finish is scripted.Finish: a reply ending the task as done with result.
func Finish(result string) Reply { return scripted.Finish(result) }

// FindColor is scripted.FindColor: the centre of the largest blob near c.
func FindColor(img image.Image, c color.RGBA, tol int) (image.Point, bool) {
	return scripted.FindColor(img, c, tol)
}

// StatusOf is scripted.StatusOf: rep.Status or its default.
func StatusOf(rep Reply) llm.Status { return scripted.StatusOf(rep) }
