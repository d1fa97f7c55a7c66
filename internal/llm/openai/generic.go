package openai

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// Generic is the default adapter: Chat Completions with image parts and the
// JSON answer of llm.AnswerInstructions, coordinates in the model's profile.
type Generic struct {
	c       *client
	profile geom.Profile
	system  string
}

var _ llm.Adapter = (*Generic)(nil)

// NewGeneric returns the generic adapter for cfg. Provider "gemini" defaults to
// Gemini's OpenAI-compatible endpoint (GeminiBaseURL); other providers than
// openai and gemini need cfg.BaseURL.
func NewGeneric(cfg llm.Config) (llm.Adapter, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	p := c.profile(llm.AdapterGeneric)
	system := genericSystem(p)
	if cfg.Refs {
		system += llm.RefInstructions()
	}
	system += llm.DeviceInstructions(cfg.Device)
	return &Generic{c: c, profile: p, system: system}, nil
}

// Name returns "generic".
func (g *Generic) Name() string { return llm.AdapterGeneric }

// Profile returns the coordinate convention answers are read in.
func (g *Generic) Profile() geom.Profile { return g.profile }

// NewSession starts a conversation for task.
func (g *Generic) NewSession(task string) llm.Session {
	return &genericSession{g: g, task: task}
}

func genericSystem(p geom.Profile) string {
	return `You operate a computer desktop through its screen, mouse and keyboard to complete the user's task. ` +
		`Each turn you receive the task, what you remembered, the recent steps and their outcomes, and screenshots (the last one is the screen now). ` +
		`Decide the next actions from what you see on the current screenshot.

` + llm.AnswerInstructions(p)
}

type genericSession struct {
	g    *Generic
	task string
	// lastRaw is the previous answer, shown back to the model on a re-ask.
	lastRaw string
}

// Next implements llm.Session. On a malformed answer it returns an error
// wrapping llm.ErrBadOutput together with a Decision carrying only Usage,
// Request and Response.
func (s *genericSession) Next(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
	if len(obs.Screenshot.Data) == 0 {
		return nil, fmt.Errorf("observation for step %d has no screenshot: the loop must capture one before asking the model", obs.Step)
	}
	refs := &imageRefs{}
	parts := []oai.ChatCompletionContentPartUnionParam{oai.TextContentPart(s.promptText(obs))}
	parts = append(parts, imageParts(obs, s.g.c.cfg.KeepImages, s.g.c.imageDetail(), refs)...)
	parts = append(parts, oai.TextContentPart(llm.ImageSizeLine(obs.Screenshot.Frame.ImageSize())+" "+
		llm.CoordinateConvention(s.g.profile)+" Answer with the JSON object only."))
	msgs := []oai.ChatCompletionMessageParamUnion{
		oai.SystemMessage(s.g.system),
		oai.UserMessage(parts),
	}
	ex, err := s.g.c.call(ctx, msgs, refs)
	d := &llm.Decision{Usage: ex.Usage, Request: ex.Request, Response: ex.Response}
	if err != nil {
		return d, err
	}
	s.lastRaw = ex.Text
	parsed, err := llm.ParseAnswer(ex.Text, s.g.profile)
	if err != nil {
		return d, err
	}
	parsed.Usage, parsed.Request, parsed.Response = d.Usage, d.Request, d.Response
	return parsed, nil
}

// promptText is the text part before the images: task, memory, history,
// warnings, feedback and the user's answers to the model's questions.
func (s *genericSession) promptText(obs llm.Observation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n\nStep %d.\n", s.task, obs.Step)
	if m := strings.TrimSpace(obs.Memory); m != "" {
		b.WriteString("\nMemory:\n" + m + "\n")
	}
	if h := strings.TrimSpace(obs.History); h != "" {
		b.WriteString("\nRecent steps:\n" + h + "\n")
	}
	if len(obs.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range obs.Warnings {
			b.WriteString("- " + w + "\n")
		}
	}
	if f := strings.TrimSpace(obs.Feedback); f != "" {
		if obs.ReAsk {
			if s.lastRaw != "" {
				b.WriteString("\nYour previous answer was:\n" + clip(s.lastRaw, 2000) + "\n")
			}
			b.WriteString("\nIt could not be used: " + f + "\nAnswer again with one valid JSON object as documented.\n")
		} else {
			b.WriteString("\nWhat happened after your previous actions: " + f + "\n")
		}
	}
	if len(obs.Answers) > 0 {
		b.WriteString("\n" + strings.Join(llm.AnswerNotes(obs.Answers), "\n") + "\n")
	}
	if e := strings.TrimSpace(obs.Elements); e != "" {
		b.WriteString("\n" + e + "\n")
	}
	if obs.Marked {
		b.WriteString("\nThe current screenshot shows numbered marks on the UI's elements: mark N is the element with ref eN.\n")
	}
	return b.String()
}

// imageParts returns the last keep screenshots (current included) as image
// parts, each after a caption, with older screenshots named in one line of
// text. refs receives each image's Image.Ref, in order, for records.
func imageParts(obs llm.Observation, keep int, detail string, refs *imageRefs) []oai.ChatCompletionContentPartUnionParam {
	var parts []oai.ChatCompletionContentPartUnionParam
	recent := obs.Recent
	if keep < 1 {
		keep = 1
	}
	if n := keep - 1; len(recent) > n {
		dropped := recent[:len(recent)-n]
		recent = recent[len(recent)-n:]
		steps := make([]string, len(dropped))
		for i, im := range dropped {
			steps[i] = fmt.Sprint(im.Step)
		}
		parts = append(parts, oai.TextContentPart(fmt.Sprintf("(Screenshots of steps %s are no longer shown; the recent steps above describe them.)", strings.Join(steps, ", "))))
	}
	for _, im := range recent {
		if len(im.Data) == 0 {
			continue
		}
		parts = append(parts, oai.TextContentPart(fmt.Sprintf("Earlier screenshot, step %d:", im.Step)))
		parts = append(parts, imagePart(im, detail, refs))
	}
	parts = append(parts, oai.TextContentPart(fmt.Sprintf("Current screenshot, step %d:", obs.Step)))
	parts = append(parts, imagePart(obs.Screenshot, detail, refs))
	return parts
}

func imagePart(im llm.Image, detail string, refs *imageRefs) oai.ChatCompletionContentPartUnionParam {
	mime := im.MIME
	if mime == "" {
		mime = "image/jpeg"
	}
	url := "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
	ref := im.Ref
	if ref == "" {
		ref = fmt.Sprintf("image:step-%d", im.Step)
	}
	refs.add(ref)
	return oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: url, Detail: detail})
}
