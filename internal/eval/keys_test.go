package eval

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/secret"
)

// keyProxy stands before a fakellm server of one wire format and keeps the
// credentials each request carried (fakellm drops them from its records).
type keyProxy struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
}

func newKeyProxy(t *testing.T, wire string) *keyProxy {
	t.Helper()
	fake, err := fakellm.Start(wire, fakellm.Fixed(fakellm.Finish("done")), geom.Profile{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	u, err := url.Parse(fake.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	kp := &keyProxy{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	kp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kp.mu.Lock()
		for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
			if v := r.Header.Get(h); v != "" {
				kp.keys = append(kp.keys, h+": "+v)
			}
		}
		kp.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(kp.Close)
	kp.URL += u.Path // the wire's base path (/v1 for OpenAI's)
	return kp
}

func (kp *keyProxy) received() []string {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return append([]string(nil), kp.keys...)
}

// screenshot is a small blank screenshot to show a model.
func screenshot(t *testing.T) llm.Image {
	t.Helper()
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 640, H: 400}, Scale: 1}
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 640, 400))); err != nil {
		t.Fatal(err)
	}
	f := geom.NewFrame("f1", d, d.Bounds, d.Bounds.Size())
	f.Prepared = d.Bounds.Size()
	return llm.Image{MIME: "image/png", Data: b.Bytes(), Frame: f, Step: 1}
}

// TestEvalModelsOfTwoProvidersEachGetTheirOwnKey: `guiagent eval --model
// anthropic:... --model openai:...` with each provider's own key and
// endpoint (GUI_AGENT_ANTHROPIC_*, OPENAI_API_KEY with
// GUI_AGENT_OPENAI_BASE_URL) and GUI_AGENT_API_KEY set without
// GUI_AGENT_PROVIDER: the configuration loads, each model's run talks to its
// provider's server with its provider's key, the generic key goes nowhere,
// and the run's scrubber redacts every key.
func TestEvalModelsOfTwoProvidersEachGetTheirOwnKey(t *testing.T) {
	ant, oai := newKeyProxy(t, "anthropic"), newKeyProxy(t, "responses")
	const antKey, oaiKey, generic = "sk-ant-test-1111111111", "sk-oai-test-2222222222", "sk-generic-3333333333"
	env := map[string]string{
		"GUI_AGENT_ANTHROPIC_API_KEY": antKey, "GUI_AGENT_ANTHROPIC_BASE_URL": ant.URL,
		"OPENAI_API_KEY": oaiKey, "GUI_AGENT_OPENAI_BASE_URL": oai.URL,
		"GUI_AGENT_API_KEY": generic, "HOME": t.TempDir(),
	}
	base, _, err := config.LoadWithModels("eval", nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("eval's configuration with a key and no GUI_AGENT_PROVIDER: %v", err)
	}
	base.ModelTimeout = 10 * time.Second
	o := Options{Config: base, Repeat: 1, Parallel: 1, Out: t.TempDir()}
	for _, c := range []struct {
		model string
		proxy *keyProxy
		want  string
	}{
		{"anthropic:claude-sonnet-5-5", ant, "X-Api-Key: " + antKey},
		{"openai:gpt-5.5", oai, "Authorization: Bearer " + oaiKey},
	} {
		m, err := ParseModel(c.model)
		if err != nil {
			t.Fatal(err)
		}
		o.Models = append(o.Models, m)
		cfg, stop, err := m.configure(base)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		defer stop()
		a, err := app.NewAdapter(cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		if _, err := a.NewSession("a task").Next(context.Background(), llm.Observation{Step: 1, Task: "a task", Screenshot: screenshot(t)}); err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		got := c.proxy.received()
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%s: its provider's server received %q, want %q", c.model, got, c.want)
		}
		for _, k := range got {
			if strings.Contains(k, generic) || (c.proxy == ant) == strings.Contains(k, oaiKey) {
				t.Errorf("%s: its provider's server received another key: %q", c.model, k)
			}
		}
		scrub := secret.NewScrubber(cfg.Secrets()...)
		line := "keys " + antKey + " " + oaiKey + " " + generic
		if got := scrub.String(line); strings.Contains(got, "sk-") {
			t.Errorf("%s: the run's scrubber leaves a key in %q", c.model, got)
		}
	}
	if err := o.check(); err != nil {
		t.Errorf("both models have keys, yet: %v", err)
	}
}

// TestEvalModelWithoutKey: a model whose provider has no key of its own is
// refused before anything runs, naming where its key goes; GUI_AGENT_API_KEY
// of another provider is never lent to it.
func TestEvalModelWithoutKey(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"GUI_AGENT_API_KEY": "sk-x-123456"}, []string{"GUI_AGENT_GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GUI_AGENT_GEMINI_BASE_URL", "GUI_AGENT_PROVIDER, which is not set"}},
		{map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "gpt-5.5", "GUI_AGENT_API_KEY": "sk-x-123456"}, []string{"GUI_AGENT_GEMINI_API_KEY", "GUI_AGENT_PROVIDER=openai's key", "never sent to another provider"}},
	} {
		base, _, err := config.LoadWithModels("eval", nil, func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseModel("gemini:gemini-2.5-computer-use-preview-10-2025")
		if err != nil {
			t.Fatal(err)
		}
		err = Options{Config: base, Models: []Model{m}, Repeat: 1, Parallel: 1, Out: t.TempDir()}.check()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("env %v: %v, want it to say %q", c.env, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "sk-x") {
			t.Errorf("the error shows the key: %v", err)
		}
	}
}
