package trace

import "testing"

func TestZZKeep(t *testing.T) {
	st := NewStore(Options{Dir: "/tmp/h7demo", DebugImages: true})
	run, _ := st.Begin("demo", "open the invoice and read its total", testConfig{APIKey: canary, Model: "m"})
	play(t, run, run.ID(), script{steps: 5, w: 1280, h: 800, finish: true, repeatEach: 3})
	run.Close()
	t.Log(run.Dir())
}
