package midscene

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/flow"
)

// tasks reads the tasks: each becomes a flow.Group step (its name) and the
// steps of its flow items; continueOnError is the group's.
func (p *parser) tasks(top, n *yaml.Node) {
	if n == nil {
		p.errf(top, "tasks is required: a list of {name, flow}")
		return
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "tasks must be a non-empty list of {name, flow}")
		return
	}
	for _, t := range n.Content {
		if t.Kind != yaml.MappingNode {
			p.errf(t, "a task is a mapping with name, flow and continueOnError (optional)")
			continue
		}
		var name string
		var items *yaml.Node
		cont := false
		for _, kv := range pairs(t) {
			switch kv[0].Value {
			case "name":
				name = p.str(kv[1], "task name")
			case "flow":
				items = kv[1]
			case "continueOnError":
				cont = p.boolean(kv[1], "continueOnError")
			default:
				p.errf(kv[0], "unknown key %q in a task: a task has name, flow and continueOnError", kv[0].Value)
			}
		}
		if strings.TrimSpace(name) == "" {
			p.errf(t, "the task has no name: add name: <what it does>")
		}
		p.add(flow.Step{Kind: flow.Group, Target: name, Line: t.Line, Column: t.Column, ContinueOnError: cont})
		if items == nil || items.Kind != yaml.SequenceNode {
			where := t
			if items != nil {
				where = items
			}
			p.errf(where, "task %q: flow must be a list of items such as - aiTap: the OK button", name)
			continue
		}
		for _, it := range items.Content {
			first := len(p.steps)
			p.item(it)
			for i := first; i < len(p.steps); i++ {
				p.steps[i].ContinueOnError = cont
			}
		}
	}
	if count := len(p.steps); count > flow.MaxSteps {
		p.errf(top, "the script makes %d steps, more than a flow's limit of %d: split it", count, flow.MaxSteps)
	}
}

// item is one flow item: its keys as a map, and which of them is the
// action.
type item struct {
	n    *yaml.Node
	keys map[string]*yaml.Node
	key  *yaml.Node // the action's key node
	used map[string]bool
}

// actionKeys are the flow items guiagent runs, in the order Midscene's
// player looks for them.
var actionKeys = []string{"aiAct", "aiAction", "ai", "aiAssert", "aiQuery", "aiNumber", "aiString", "aiBoolean", "aiAsk", "aiLocate",
	"aiWaitFor", "sleep", "javascript", "recordToReport", "logScreenshot", "aiInput", "aiKeyboardPress", "aiScroll", "aiTap",
	"aiDoubleClick", "aiRightClick", "aiHover", "aiClearInput", "aiLongPress", "aiDragAndDrop", "launch", "terminate"}

// refusedItems are flow items Midscene knows that guiagent does not run.
var refusedItems = map[string]string{
	"runGherkinScenario":        "guiagent does not run Gherkin scenarios: write their steps as flow items",
	"aiPinch":                   "guiagent's backends have no pinch gesture",
	"runAdbShell":               "guiagent does not run shell commands on the phone",
	"runWdaRequest":             "guiagent does not send WebDriverAgent requests",
	"runHdcShell":               "guiagent does not run shell commands on the phone",
	"Finalize":                  "a planning marker of Midscene's cache",
	"registerFileChooserAccept": "guiagent uploads files with gui_upload, not from a script",
}

func (p *parser) item(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a flow item is a mapping such as - aiTap: the OK button")
		return
	}
	it := &item{n: n, keys: map[string]*yaml.Node{}, used: map[string]bool{}}
	keyNodes := map[string]*yaml.Node{}
	for _, kv := range pairs(n) {
		it.keys[kv[0].Value] = kv[1]
		keyNodes[kv[0].Value] = kv[0]
	}
	var kind string
	for _, k := range actionKeys {
		if _, ok := it.keys[k]; ok {
			kind = k
			break
		}
	}
	if kind == "" {
		for _, kv := range pairs(n) {
			if why, ok := refusedItems[kv[0].Value]; ok {
				p.errf(kv[0], "%s: %s", kv[0].Value, why)
				return
			}
		}
		p.errf(n, "unknown flow item (keys %s): use one of %s", strings.Join(mapKeys(it.keys), ", "), strings.Join(actionKeys, ", "))
		return
	}
	it.key = keyNodes[kind]
	it.used[kind] = true
	before := len(p.steps)
	switch kind {
	case "aiAct", "aiAction", "ai":
		p.act(it, kind)
	case "aiAssert":
		p.assert(it)
	case "aiQuery", "aiNumber", "aiString", "aiBoolean", "aiAsk":
		p.query(it, kind)
	case "aiLocate":
		p.pointer(it, kind, flow.Locate)
		p.named(it, ResultData, "")
	case "aiWaitFor":
		p.waitFor(it)
	case "sleep":
		p.sleep(it)
	case "javascript":
		p.javascript(it)
	case "recordToReport", "logScreenshot":
		p.record(it)
	case "aiInput":
		p.input(it)
	case "aiKeyboardPress":
		p.keyboardPress(it)
	case "aiScroll":
		p.scroll(it)
	case "aiTap":
		p.pointer(it, kind, flow.Click)
	case "aiDoubleClick":
		p.pointer(it, kind, flow.DoubleClick)
	case "aiRightClick":
		p.pointer(it, kind, flow.RightClick)
	case "aiHover":
		p.pointer(it, kind, flow.Hover)
	case "aiDragAndDrop":
		p.dragAndDrop(it)
	case "aiClearInput":
		p.pointer(it, kind, flow.Clear)
	case "aiLongPress":
		if !p.phone() {
			p.errf(it.key, "aiLongPress is a phone's: on this platform use aiRightClick")
		}
		p.pointer(it, kind, flow.RightClick) // a right click is a long press on a phone (desktop.Touch)
	case "launch":
		if !p.phone() {
			p.errf(it.key, "launch opens a phone's app or URL: this script's platform is %s", p.plan.Section)
		}
		p.add(flow.Step{Kind: flow.Launch, Target: p.appName(p.str(it.keys[kind], "launch"))})
	case "terminate":
		if !p.phone() {
			p.errf(it.key, "terminate stops a phone's app: this script's platform is %s", p.plan.Section)
		}
		p.add(flow.Step{Kind: flow.StopApp, Target: p.appName(p.str(it.keys[kind], "terminate"))})
	}
	for i := before; i < len(p.steps); i++ {
		if p.steps[i].Line == 0 {
			p.steps[i].Line, p.steps[i].Column = n.Line, n.Column
		}
	}
	for _, kv := range pairs(n) {
		if !it.used[kv[0].Value] {
			p.refuseKey(kind, kv[0], kv[1])
		}
	}
}

// refuseKey reports a key of a kind item that guiagent does not take.
func (p *parser) refuseKey(kind string, k, v *yaml.Node) {
	switch k.Value {
	case "deepLocate", "deepThink":
		p.errf(k, "%s: %s: guiagent locates in one pass (the accessibility tree, the words on the screen, then the model); it has no deep locate", kind, k.Value)
	case "xpath":
		p.errf(k, "%s: xpath: guiagent does not find elements by XPath: describe the element in words", kind)
	case "images", "convertHttpImage2Base64":
		p.errf(k, "%s: %s: guiagent's locate and vision questions take words only, no reference images", kind, k.Value)
	case "context":
		p.errf(k, "%s: context: put the context into the prompt itself", kind)
	case "fileChooserAccept":
		p.errf(k, "%s: fileChooserAccept: guiagent uploads files with gui_upload, not from a script", kind)
	case "domIncluded":
		p.errf(k, "%s: domIncluded: guiagent answers from the screenshot only", kind)
	case "screenshotIncluded":
		p.errf(k, "%s: screenshotIncluded: guiagent always answers from the screenshot", kind)
	case "observe":
		p.errf(k, "%s: observe is not supported in a script (Midscene refuses it too)", kind)
	case "timeout":
		p.errf(k, "%s: timeout: only aiWaitFor takes a timeout here", kind)
	default:
		if why, ok := refused[k.Value]; ok {
			p.errf(k, "%s: %s: %s", kind, k.Value, why)
			return
		}
		p.errf(k, "%s: unknown key %q: guiagent cannot honour it", kind, k.Value)
	}
}

// phone reports whether the script runs on a phone.
func (p *parser) phone() bool {
	return p.plan.Platform == Android || p.plan.Platform == IOS || p.plan.Platform == Harmony
}

func mapKeys(m map[string]*yaml.Node) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// take marks key used and returns its node (nil when absent).
func (it *item) take(key string) *yaml.Node {
	n, ok := it.keys[key]
	if !ok {
		return nil
	}
	it.used[key] = true
	return n
}

// options reads the item-level options every step may have: cacheable
// (false: the step bypasses the cache), and deepLocate/deepThink set to
// false (true is refused, by refuseKey).
func (p *parser) options(it *item, st *flow.Step) {
	if n := it.take("cacheable"); n != nil && !p.boolean(n, "cacheable") {
		if st.Extra == nil {
			st.Extra = &flow.Extra{}
		}
		st.Extra.NoCache = true
	}
	for _, k := range []string{"deepLocate", "deepThink"} {
		if n, ok := it.keys[k]; ok && n.Value == "false" {
			it.used[k] = true
		}
	}
}

// prompt reads a prompt: text, or a mapping with prompt (images are
// refused); empty when n is null.
func (p *parser) prompt(it *item, n *yaml.Node, what string) string {
	switch {
	case isNull(n):
		return ""
	case n.Kind == yaml.ScalarNode:
		return n.Value
	case n.Kind == yaml.MappingNode:
		var text string
		for _, kv := range pairs(n) {
			switch kv[0].Value {
			case "prompt":
				text = p.str(kv[1], what+".prompt")
			case "locate":
				text = p.prompt(it, kv[1], what+".locate")
			case "cacheable":
				it.keys["cacheable"] = kv[1] // read by options, as if at the item's level
			case "deepLocate", "deepThink":
				if kv[1].Value != "false" {
					p.refuseKey(it.key.Value, kv[0], kv[1])
				}
			case "convertHttpImage2Base64":
				if kv[1].Value != "false" {
					p.refuseKey(it.key.Value, kv[0], kv[1])
				}
			default:
				p.refuseKey(it.key.Value, kv[0], kv[1])
			}
		}
		return text
	}
	p.errf(n, "%s must be text or a mapping with prompt", what)
	return ""
}

// locatePrompt reads the element an item acts on, in every form the player
// takes: `aiTap: words`, `aiTap: {prompt: words}`, `aiTap:` with a sibling
// `locate: words` or `locate: {prompt: words}`, or a sibling `prompt:`.
func (p *parser) locatePrompt(it *item, kind string) string {
	text := p.prompt(it, it.keys[kind], kind)
	if l := it.take("locate"); l != nil {
		if t := p.prompt(it, l, kind+" locate"); text == "" {
			text = t
		}
	}
	if pr := it.take("prompt"); pr != nil && text == "" {
		text = p.str(pr, kind+" prompt")
	}
	return text
}

func (p *parser) pointer(it *item, kind string, k flow.Kind) {
	target := p.locatePrompt(it, kind)
	if strings.TrimSpace(target) == "" {
		p.errf(it.key, "%s has no prompt: describe the element, e.g. %s: the OK button", kind, kind)
	}
	st := flow.Step{Kind: k, Target: target}
	if kind != "aiLocate" {
		it.take("name") // an action's result is nothing Midscene writes
	}
	p.options(it, &st)
	p.add(st)
}

// dragAndDrop reads `aiDragAndDrop: {from: ..., to: ...}` (each end text
// or {prompt: ...}), or from: and to: beside the item's key, as the
// player passes either to the DragAndDrop action.
func (p *parser) dragAndDrop(it *item) {
	const kind = "aiDragAndDrop"
	ends := map[string]*yaml.Node{}
	switch v := it.keys[kind]; {
	case v.Kind == yaml.MappingNode:
		for _, kv := range pairs(v) {
			switch kv[0].Value {
			case "from", "to":
				ends[kv[0].Value] = kv[1]
			default:
				p.refuseKey(kind, kv[0], kv[1])
			}
		}
	case !isNull(v) && v.Value != "":
		p.errf(v, "%s takes from: and to:, each an element, e.g. %s: {from: the report icon, to: the upload area}", kind, kind)
		return
	}
	for _, end := range []string{"from", "to"} {
		if n := it.take(end); n != nil && ends[end] == nil {
			ends[end] = n
		}
	}
	from, to := p.prompt(it, ends["from"], kind+".from"), p.prompt(it, ends["to"], kind+".to")
	if strings.TrimSpace(from) == "" || strings.TrimSpace(to) == "" {
		p.errf(it.key, "%s needs from: and to:, each an element, e.g. %s: {from: the report icon, to: the upload area}", kind, kind)
		return
	}
	it.take("name")
	st := flow.Step{Kind: flow.Drag, Target: from, To: to}
	p.options(it, &st)
	p.add(st)
}

// named records that the last step's answer goes into the output.
func (p *parser) named(it *item, kind, message string) {
	r := Result{Step: len(p.steps), Kind: kind, Message: message}
	if n := it.take("name"); n != nil {
		r.Name = p.str(n, "name")
	}
	p.plan.Results = append(p.plan.Results, r)
}

func (p *parser) act(it *item, kind string) {
	text := p.prompt(it, it.keys[kind], kind)
	if in := it.take("instruction"); in != nil {
		text = p.prompt(it, in, "instruction")
	}
	if strings.TrimSpace(text) == "" {
		p.errf(it.key, "%s has no prompt: say what to do", kind)
	}
	if p.context != "" {
		text = "Background: " + p.context + "\n\n" + text
	}
	st := flow.Step{Kind: flow.Act, Text: text}
	p.options(it, &st)
	p.add(st)
}

func (p *parser) assert(it *item) {
	text := p.prompt(it, it.keys["aiAssert"], "aiAssert")
	if strings.TrimSpace(text) == "" {
		p.errf(it.key, "aiAssert has no statement")
	}
	st := flow.Step{Kind: flow.Assert, Text: text}
	msg := text
	if m := it.take("errorMessage"); m != nil {
		msg = p.str(m, "errorMessage")
		st.Extra = &flow.Extra{ErrorMessage: msg}
	}
	p.options(it, &st)
	p.add(st)
	p.named(it, ResultAssert, msg)
}

// querySchemas are the answer schemas of the typed questions; aiQuery's
// data is any JSON its prompt describes.
var querySchemas = map[string]string{
	"aiQuery":   `{}`,
	"aiNumber":  `{"type":"number"}`,
	"aiString":  `{"type":"string"}`,
	"aiBoolean": `{"type":"boolean"}`,
	"aiAsk":     `{"type":"string"}`,
}

func (p *parser) query(it *item, kind string) {
	text := p.prompt(it, it.keys[kind], kind)
	if strings.TrimSpace(text) == "" {
		p.errf(it.key, "%s has no question", kind)
	}
	st := flow.Step{Kind: flow.Query, Text: text, Schema: json.RawMessage(querySchemas[kind])}
	p.options(it, &st)
	p.add(st)
	p.named(it, ResultData, "")
}

func (p *parser) waitFor(it *item) {
	text := p.prompt(it, it.keys["aiWaitFor"], "aiWaitFor")
	if strings.TrimSpace(text) == "" {
		p.errf(it.key, "aiWaitFor has no condition")
	}
	st := flow.Step{Kind: flow.WaitFor, Text: text, Timeout: DefaultWaitFor, Interval: flow.DefaultWaitInterval}
	if n := it.take("timeout"); n != nil {
		st.Timeout = msDuration(p.positive(n, "aiWaitFor timeout (milliseconds)"))
		if st.Timeout > flow.MaxWaitTimeout {
			p.errf(n, "aiWaitFor timeout %s ms: guiagent waits at most %d ms", n.Value, flow.MaxWaitTimeout.Milliseconds())
		}
	}
	if n := it.take("checkIntervalMs"); n != nil {
		st.Interval = msDuration(p.positive(n, "checkIntervalMs"))
		if st.Interval < flow.MinWaitInterval {
			p.errf(n, "checkIntervalMs %s: give at least %d", n.Value, flow.MinWaitInterval.Milliseconds())
		}
	}
	p.options(it, &st)
	p.add(st)
}

func (p *parser) sleep(it *item) {
	n := it.keys["sleep"]
	ms := p.number(n, "sleep (milliseconds)")
	if ms <= 0 || time.Duration(ms)*time.Millisecond > flow.MaxSleep {
		p.errf(n, "sleep %s ms: give 1 to %d milliseconds (Midscene needs more than 0 too)", n.Value, flow.MaxSleep.Milliseconds())
	}
	p.add(flow.Step{Kind: flow.Sleep, Duration: time.Duration(ms * float64(time.Millisecond))})
}

func (p *parser) javascript(it *item) {
	n := it.keys["javascript"]
	code := p.str(n, "javascript")
	switch {
	case p.plan.Platform != Web:
		p.errf(it.key, "javascript runs in a web page: this script's platform is %s", p.plan.Section)
	case !p.o.AllowJavaScript:
		p.errf(it.key, "javascript: guiagent does not run a script's JavaScript in the page unless you pass --allow-javascript (it runs with the page's rights, outside guiagent's input policy)")
	}
	p.add(flow.Step{Kind: flow.Evaluate, Text: code})
	p.named(it, ResultData, "")
}

func (p *parser) record(it *item) {
	title := "untitled"
	for _, k := range []string{"recordToReport", "logScreenshot"} {
		if n, ok := it.keys[k]; ok {
			it.used[k] = true
			if !isNull(n) && title == "untitled" {
				title = p.str(n, k)
			}
		}
	}
	content := ""
	if n := it.take("content"); n != nil {
		content = p.str(n, "content")
	}
	p.add(flow.Step{Kind: flow.Record, Target: title, Text: content})
}

// input reads aiInput in its forms: `aiInput: field` with `value:`, the
// old `aiInput: value` with `locate: field`, and mode replace (default),
// typeOnly, append or clear.
func (p *parser) input(it *item) {
	var target, value string
	hasValue := false
	if l, ok := it.keys["locate"]; ok && !isNull(l) { // the old form: aiInput is the value
		it.used["locate"] = true
		target = p.prompt(it, l, "aiInput locate")
		if v := it.keys["aiInput"]; !isNull(v) && v.Value != "" {
			value, hasValue = p.str(v, "aiInput"), true
		}
		if v := it.take("value"); v != nil && !hasValue {
			value, hasValue = p.str(v, "value"), true
		}
	} else {
		target = p.prompt(it, it.keys["aiInput"], "aiInput")
		if v := it.take("value"); v != nil {
			value, hasValue = p.str(v, "value"), true
		}
		if pr := it.take("prompt"); pr != nil && target == "" {
			target = p.str(pr, "aiInput prompt")
		}
	}
	mode := "replace"
	var modeNode *yaml.Node
	if n := it.take("mode"); n != nil {
		mode, modeNode = p.str(n, "mode"), n
	}
	var st flow.Step
	switch mode {
	case "clear":
		if target == "" {
			p.errf(it.key, "aiInput mode clear needs the field: aiInput: <the field>")
		}
		st = flow.Step{Kind: flow.Clear, Target: target}
	case "replace", "typeOnly", "append":
		if !hasValue {
			p.errf(it.key, "aiInput has no value: add value: <the text>")
		}
		m := map[string]string{"replace": flow.ModeReplace, "typeOnly": flow.ModeType, "append": flow.ModeAppend}[mode]
		st = flow.Step{Kind: flow.Type, Target: target, Text: value, Mode: m}
		if value == "" { // Midscene types nothing for an empty value
			p.options(it, &st)
			return
		}
	default:
		p.errf(modeNode, "aiInput mode %q: use replace, typeOnly, append or clear", mode)
		return
	}
	p.options(it, &st)
	p.add(st)
}

// keyboardPress reads aiKeyboardPress: `aiKeyboardPress: field` with
// `keyName:`, the old `aiKeyboardPress: key` with `locate: field`, or
// `aiKeyboardPress: key` alone. With a field it is clicked first.
func (p *parser) keyboardPress(it *item) {
	var target, key string
	var keyNode *yaml.Node
	if l, ok := it.keys["locate"]; ok && !isNull(l) {
		it.used["locate"] = true
		target = p.prompt(it, l, "aiKeyboardPress locate")
		keyNode = it.keys["aiKeyboardPress"]
	} else if kn := it.take("keyName"); kn != nil {
		keyNode = kn
		target = p.prompt(it, it.keys["aiKeyboardPress"], "aiKeyboardPress")
	} else {
		keyNode = it.keys["aiKeyboardPress"]
	}
	if isNull(keyNode) {
		p.errf(it.key, "aiKeyboardPress has no key: add keyName: Enter")
		return
	}
	key = p.str(keyNode, "keyName")
	keys, err := desktop.ParseCombo(key)
	if err != nil {
		p.errf(keyNode, "aiKeyboardPress: %v", err)
	}
	if target != "" {
		click := flow.Step{Kind: flow.Click, Target: target}
		p.options(it, &click)
		p.add(click)
	}
	p.add(flow.Step{Kind: flow.Key, Keys: keys})
}

// scrollTypes are Midscene's scroll types and their legacy names: the
// direction of an edge, "" for one scroll.
var scrollTypes = map[string]desktop.Direction{
	"singleAction": "", "once": "",
	"scrollToBottom": desktop.Down, "untilBottom": desktop.Down,
	"scrollToTop": desktop.Up, "untilTop": desktop.Up,
	"scrollToRight": desktop.RightD, "untilRight": desktop.RightD,
	"scrollToLeft": desktop.LeftD, "untilLeft": desktop.LeftD,
}

func (p *parser) scroll(it *item) {
	target := p.locatePrompt(it, "aiScroll")
	dir := desktop.Down
	if n := it.take("direction"); n != nil {
		d, err := desktop.ParseDirection(p.str(n, "direction"))
		if err != nil {
			p.errf(n, "aiScroll direction %q: use down, up, left or right", n.Value)
		}
		dir = d
	}
	edge := desktop.Direction("")
	if n := it.take("scrollType"); n != nil {
		e, ok := scrollTypes[p.str(n, "scrollType")]
		if !ok {
			p.errf(n, "aiScroll scrollType %q: use singleAction, scrollToBottom, scrollToTop, scrollToRight or scrollToLeft", n.Value)
		}
		edge = e
	}
	amount := defaultNotches
	if n := it.take("distance"); n != nil && !isNull(n) {
		px := p.number(n, "distance (pixels)")
		if px <= 0 {
			p.errf(n, "aiScroll distance %s: give a number of pixels above 0", n.Value)
		}
		amount = max(1, int(math.Ceil(px/notchPixels)))
		if amount > 50 {
			p.errf(n, "aiScroll distance %s px: guiagent scrolls at most %d px in one item", n.Value, 50*notchPixels)
		}
	}
	st := flow.Step{Kind: flow.Scroll, Target: target, Direction: dir, Amount: amount}
	if edge != "" {
		st = flow.Step{Kind: flow.ScrollToEdge, Target: target, Direction: edge}
	}
	p.options(it, &st)
	p.add(st)
}
