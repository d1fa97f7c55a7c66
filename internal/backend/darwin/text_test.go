package darwin

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// replay rebuilds the text the steps type.
func replay(t *testing.T, steps []typeStep) string {
	t.Helper()
	var sb strings.Builder
	for i, st := range steps {
		switch {
		case st.key == "Return":
			sb.WriteByte('\n')
		case st.key == "Tab":
			sb.WriteByte('\t')
		case st.key != "":
			t.Fatalf("step %d: unexpected key %q", i, st.key)
		default:
			if len(st.text) == 0 || len(st.text) > maxUnicodePerEvent {
				t.Fatalf("step %d: %d UTF-16 units, want 1..%d", i, len(st.text), maxUnicodePerEvent)
			}
			s := string(utf16.Decode(st.text))
			if strings.ContainsRune(s, utf8.RuneError) {
				t.Fatalf("step %d splits a character: %q", i, s)
			}
			sb.WriteString(s)
		}
	}
	return sb.String()
}

func TestPlanTypingKeepsTextExact(t *testing.T) {
	cases := map[string]string{
		"":                            "",
		"hello":                       "hello",
		"a\nb\r\nc\rd\te":             "a\nb\nc\nd\te",
		"你好，世界":                       "你好，世界",
		strings.Repeat("x", 19) + "😀": strings.Repeat("x", 19) + "😀",
		strings.Repeat("é😀", 30):      strings.Repeat("é😀", 30),
		"line1\n\nline3\n":            "line1\n\nline3\n",
	}
	for in, want := range cases {
		if got := replay(t, planTyping(in)); got != want {
			t.Errorf("planTyping(%q) types %q, want %q", in, got, want)
		}
	}
}

func TestPlanTypingChunksAndKeys(t *testing.T) {
	steps := planTyping(strings.Repeat("a", 45))
	if len(steps) != 3 || len(steps[0].text) != 20 || len(steps[1].text) != 20 || len(steps[2].text) != 5 {
		t.Fatalf("45 letters: chunks %v, want 20+20+5", chunkSizes(steps))
	}
	steps = planTyping(strings.Repeat("x", 19) + "😀")
	if got := chunkSizes(steps); len(got) != 2 || got[0] != 19 || got[1] != 2 {
		t.Fatalf("19 letters and an emoji: chunks %v, want [19 2] (no split surrogate pair)", got)
	}
	steps = planTyping("ok\r\n")
	if len(steps) != 2 || steps[1].key != "Return" {
		t.Fatalf("CRLF must be one Return: %+v", steps)
	}
}

func TestPlanTypingRandomText(t *testing.T) {
	alphabet := []rune("ab \n\t\r€你😀🇫🇷é")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		rs := make([]rune, rng.IntN(80))
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		in := string(rs)
		want := strings.ReplaceAll(strings.ReplaceAll(in, "\r\n", "\n"), "\r", "\n")
		if got := replay(t, planTyping(in)); got != want {
			t.Fatalf("planTyping(%q) types %q, want %q", in, got, want)
		}
	}
}

func chunkSizes(steps []typeStep) []int {
	var n []int
	for _, s := range steps {
		n = append(n, len(s.text))
	}
	return n
}
