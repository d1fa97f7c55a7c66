package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

//go:embed report.html.tmpl
var reportTemplateText string

//go:embed report.css
var reportCSS string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":     fmtMillis,
	"tokens": fmtTokens,
	"json":   func(v any) string { b, _ := json.MarshalIndent(v, "", "  "); return string(b) },
	"imgArgs": func(class string, src template.HTMLAttr, rec *ImageRecord, alt string) imgArgs {
		return imgArgs{Class: class, Src: src, Rec: rec, Alt: alt}
	},
}).Parse(reportTemplateText))

// fmtTokens shows token usage as "in / out", or says none was reported
// (a scripted model, a provider that reports none) rather than show 0 / 0.
func fmtTokens(u llm.Usage) string {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return "none reported"
	}
	return fmt.Sprintf("%d / %d", u.InputTokens, u.OutputTokens)
}

// ReportCSP is a Content-Security-Policy under which report.html renders
// completely when served over HTTP: it allows only the report's own inline
// style (by hash) and images embedded in it (data: URIs) or from the same
// origin, and no script at all.
var ReportCSP = func() string {
	sum := sha256.Sum256([]byte(reportCSS))
	return "default-src 'none'; img-src 'self' data:; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

type reportView struct {
	CSS       template.CSS
	Meta      RunInfo
	Task      string
	Config    string
	Result    *agent.Result
	HasResult bool
	Running   bool
	Session   bool
	Steps     []*stepView
	Notes     []noteView
	Warnings  []string
	Usage     llm.Usage
	WallMS    int64
	Generated time.Time
	ImagesOff bool
	// OneNote marks a log of a single entry (shown as a compact card).
	OneNote bool
}

// imgArgs are the arguments of the report's "img" and "shot" templates.
type imgArgs struct {
	Class string
	Src   template.HTMLAttr
	Rec   *ImageRecord
	Alt   string
}

type noteView struct {
	At      string
	Kind    string
	Message string
}

type stepView struct {
	N        int
	Shot     *ImageRecord
	Overlay  *ImageRecord
	Decision *llm.Decision
	Trace    *agent.StepTrace
	Actions  []actionView
	Notes    []noteView
	Files    []string
	Tool     *toolView
	Class    string
	// ShotSrc and OverlaySrc are src attributes with the images as data: URIs ("" when not stored).
	ShotSrc, OverlaySrc template.HTMLAttr
	// Cols are the action table's coordinate columns after collapsing.
	Cols []coordColumn
	// OutcomeOK says the step's outcome means every action ran.
	OutcomeOK bool

	actionEvents []action.Trace
	shots        []*ImageRecord
}

type toolView struct {
	Name    string
	Args    string
	Result  string
	IsError bool
	Millis  int64
}

type actionView struct {
	N                    int
	Detail               string // action.Action.Label: the action for humans, without its points
	Model, Image, Global string
	Outcome, Error, Warn string
	Millis               int64
	OK                   bool
	// Coords are the cells of the step's Cols.
	Coords []string
	// Ask is an ask_user's question and answer (nil for other actions).
	Ask *askView
}

func fmtMillis(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// ReadLines parses events.jsonl of dir line by line; a partial or damaged line
// (as a killed process may leave at the end) is skipped and counted.
func ReadLines(dir string) (lines []Line, skipped int, err error) {
	f, err := os.Open(filepath.Join(dir, EventsFile))
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var ln Line
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if json.Unmarshal(sc.Bytes(), &ln) != nil {
			skipped++
			continue
		}
		lines = append(lines, ln)
	}
	return lines, skipped, sc.Err()
}

// loadReport builds the report view from a run directory's files.
func loadReport(dir string, running bool) (*reportView, error) {
	v := &reportView{CSS: template.CSS(reportCSS), Running: running, Generated: time.Now().UTC()}
	readRunFiles(dir, running, v)
	lines, skipped, err := ReadLines(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("trace: cannot read %s: %w", filepath.Join(dir, EventsFile), err)
	}
	if skipped > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("%d damaged line(s) of %s were skipped", skipped, EventsFile))
	}
	b := &reportBuilder{v: v, steps: map[int]*stepView{}}
	for _, ln := range lines {
		if b.t0.IsZero() {
			b.t0 = ln.Time
		}
		if add, ok := lineReaders[ln.Kind]; ok {
			add(b, ln)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, ResultFile)); err == nil {
		var res agent.Result
		if json.Unmarshal(data, &res) == nil {
			v.Result = &res
		}
	}
	v.HasResult = v.Result != nil
	if v.Result != nil {
		v.Warnings = append(v.Warnings, v.Result.Warnings...)
		v.Usage, v.WallMS = v.Result.Usage.Usage, v.Result.Usage.WallMillis
	}
	if v.WallMS == 0 && len(lines) > 1 {
		v.WallMS = lines[len(lines)-1].Time.Sub(lines[0].Time).Milliseconds()
	}
	b.finishSteps()
	emb := &imageEmbedder{dir: dir, cache: map[string]template.HTMLAttr{}}
	for _, s := range v.Steps {
		s.ShotSrc, s.OverlaySrc = emb.src(s.Shot), emb.src(s.Overlay)
	}
	dedupe(&v.Warnings)
	v.OneNote = len(v.Notes) == 1
	return v, nil
}

// readRunFiles reads the run's meta, task and config files into v.
func readRunFiles(dir string, running bool, v *reportView) {
	if b, err := os.ReadFile(filepath.Join(dir, MetaFile)); err == nil {
		json.Unmarshal(b, &v.Meta)
	}
	if v.Meta.ID == "" {
		v.Meta.ID = filepath.Base(dir)
	}
	if v.Meta.Status == StatusRunning && !running {
		v.Meta.Status = StatusIncomplete
	}
	v.Session = v.Meta.Kind == KindSession
	if v.Session && v.Meta.Status == StatusRunning {
		v.Meta.Status = StatusOpen
	}
	if b, err := os.ReadFile(filepath.Join(dir, TaskFile)); err == nil {
		v.Task = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ConfigFile)); err == nil {
		v.Config = prettyText(string(b))
	}
	if _, err := os.Stat(filepath.Join(dir, ImagesDir)); err != nil {
		v.ImagesOff = true
	}
}

// reportBuilder gathers the lines of events.jsonl into the report's steps.
type reportBuilder struct {
	v     *reportView
	steps map[int]*stepView
	t0    time.Time
}

// step returns the view of step n, creating it.
func (b *reportBuilder) step(n int) *stepView {
	s := b.steps[n]
	if s == nil {
		s = &stepView{N: n}
		b.steps[n] = s
	}
	return s
}

// lineReaders reads each kind of line into the report.
var lineReaders = map[string]func(b *reportBuilder, ln Line){
	string(agent.EvStart): func(b *reportBuilder, ln Line) {
		b.v.Notes = append(b.v.Notes, noteView{b.at(ln), "start", ln.Message})
	},
	string(agent.EvProgress):   (*reportBuilder).note,
	string(agent.EvWarning):    (*reportBuilder).note,
	string(agent.EvScreenshot): (*reportBuilder).screenshot,
	string(agent.EvModel):      (*reportBuilder).model,
	string(agent.EvAction):     (*reportBuilder).action,
	string(agent.EvStep):       (*reportBuilder).stepDone,
	KindOverlay:                func(b *reportBuilder, ln Line) { b.step(ln.Step).Overlay = ln.Image },
	string(agent.EvFinish):     (*reportBuilder).finish,
	KindTool:                   (*reportBuilder).tool,
}

// at is the line's time since the first line.
func (b *reportBuilder) at(ln Line) string {
	return fmt.Sprintf("+%.1f s", ln.Time.Sub(b.t0).Seconds())
}

func (b *reportBuilder) note(ln Line) {
	n := noteView{b.at(ln), ln.Kind, ln.Message}
	if ln.Kind == string(agent.EvWarning) {
		b.v.Warnings = append(b.v.Warnings, ln.Message)
	}
	if ln.Step > 0 {
		b.step(ln.Step).Notes = append(b.step(ln.Step).Notes, n)
	} else {
		b.v.Notes = append(b.v.Notes, n)
	}
}

func (b *reportBuilder) screenshot(ln Line) {
	if ln.Image != nil {
		s := b.step(ln.Step)
		s.shots = append(s.shots, ln.Image)
	}
}

func (b *reportBuilder) model(ln Line) {
	var d llm.Decision
	if json.Unmarshal(ln.Decision, &d) == nil {
		b.step(ln.Step).Decision = &d
	}
	b.step(ln.Step).Files = append(b.step(ln.Step).Files, ln.Files...)
}

func (b *reportBuilder) action(ln Line) {
	var a action.Trace
	if json.Unmarshal(ln.Action, &a) == nil {
		b.step(ln.Step).actionEvents = append(b.step(ln.Step).actionEvents, a)
	}
}

func (b *reportBuilder) stepDone(ln Line) {
	var st agent.StepTrace
	if json.Unmarshal(ln.StepTrace, &st) == nil {
		n := st.Step
		if n == 0 {
			n = ln.Step
		}
		b.step(n).Trace = &st
	}
}

func (b *reportBuilder) finish(ln Line) {
	var res agent.Result
	if json.Unmarshal(ln.Result, &res) == nil {
		b.v.Result = &res
	}
}

func (b *reportBuilder) tool(ln Line) {
	s := b.step(ln.Step)
	tv := &toolView{Name: ln.Tool, Result: prettyText(ln.ToolResult), IsError: ln.IsError, Millis: ln.Millis}
	if len(ln.Args) > 0 {
		tv.Args = prettyText(string(ln.Args))
	}
	s.Tool = tv
	if ln.Image != nil {
		s.shots = append(s.shots, ln.Image)
	}
	if len(ln.Actions) > 0 {
		json.Unmarshal(ln.Actions, &s.actionEvents)
	}
}

// finishSteps orders the steps into the view and sums their usage when the
// result gives none.
func (b *reportBuilder) finishSteps() {
	var sumUsage llm.Usage
	for _, n := range sortedKeys(b.steps) {
		s := b.steps[n]
		if n == 0 && s.Trace == nil && s.Decision == nil && s.Tool == nil {
			continue // pre-step screenshots only
		}
		finishStep(s)
		if s.Trace != nil {
			sumUsage = sumUsage.Add(s.Trace.Usage)
		} else if s.Decision != nil {
			sumUsage = sumUsage.Add(s.Decision.Usage)
		}
		b.v.Steps = append(b.v.Steps, s)
	}
	if b.v.Usage == (llm.Usage{}) {
		b.v.Usage = sumUsage
	}
}

func sortedKeys(m map[int]*stepView) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

func dedupe(ss *[]string) {
	seen := map[string]bool{}
	out := (*ss)[:0]
	for _, s := range *ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	*ss = out
}

// finishStep picks the step's screenshot and action list and its CSS class.
func finishStep(s *stepView) {
	for _, sh := range s.shots {
		s.Shot = sh
		if s.Trace != nil && s.Trace.FrameID != "" && sh.Frame.ID == s.Trace.FrameID {
			break
		}
	}
	acts := s.actionEvents
	if s.Trace != nil && len(s.Trace.Actions) > 0 {
		acts = s.Trace.Actions
	}
	allOK := true
	for i, a := range acts {
		av := actionView{N: i + 1, Detail: actionLabel(a.Action), Outcome: a.Outcome,
			Error: a.Error, Warn: a.Warning, Millis: a.Millis}
		av.OK = (a.Outcome == "" || a.OK()) && a.Error == ""
		allOK = allOK && av.OK
		if a.Action.Kind == action.AskUser {
			av.Ask = newAskView(av.N, a)
		}
		if a.Action.At != nil {
			av.Model = a.Action.At.String()
			if a.Action.To != nil {
				av.Model += " → " + a.Action.To.String()
			}
		}
		if a.Image != nil {
			av.Image = a.Image.String()
			if a.ImageTo != nil {
				av.Image += " → " + a.ImageTo.String()
			}
		}
		if a.Global != nil {
			av.Global = a.Global.String()
			if a.GlobalTo != nil {
				av.Global += " → " + a.GlobalTo.String()
			}
		}
		s.Actions = append(s.Actions, av)
	}
	s.coordTable()
	s.OutcomeOK = s.Trace != nil && outcomeOK(s.Trace.Outcome) && allOK
	switch {
	case s.Tool != nil && s.Tool.IsError, !allOK:
		s.Class = "bad"
	case s.Trace != nil && len(s.Trace.Warnings) > 0:
		s.Class = "warn"
	case s.Trace == nil && s.Tool == nil:
		s.Class = "open"
	default:
		s.Class = "ok"
	}
}

// renderReport returns the HTML report of the run directory dir.
func renderReport(dir string, running bool) ([]byte, error) {
	v, err := loadReport(dir, running)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := reportTemplate.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("trace: report template: %w", err)
	}
	return buf.Bytes(), nil
}

// writeReport (re)generates dir/report.html.
func writeReport(dir string, scrub *secret.Scrubber, running bool) error {
	b, err := renderReport(dir, running)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ReportFile), scrub.Bytes(b))
}

// Observation is what the model said it saw at this step.
func (s *stepView) Observation() string {
	if s.Decision != nil && s.Decision.Observation != "" {
		return s.Decision.Observation
	}
	if s.Trace != nil {
		return s.Trace.Observation
	}
	return ""
}

// Reasoning is the model's reasoning at this step.
func (s *stepView) Reasoning() string {
	if s.Decision != nil && s.Decision.Reasoning != "" {
		return s.Decision.Reasoning
	}
	if s.Trace != nil {
		return s.Trace.Reasoning
	}
	return ""
}

// Expected is the outcome the model expected from its actions.
func (s *stepView) Expected() string {
	if s.Decision != nil && s.Decision.ExpectedOutcome != "" {
		return s.Decision.ExpectedOutcome
	}
	if s.Trace != nil {
		return s.Trace.ExpectedOutcome
	}
	return ""
}

// ModelStatus is the model's verdict at this step.
func (s *stepView) ModelStatus() string {
	if s.Decision != nil && s.Decision.Status != "" {
		return string(s.Decision.Status)
	}
	if s.Trace != nil {
		return string(s.Trace.ModelStatus)
	}
	return ""
}
