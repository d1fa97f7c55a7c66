package hosting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// JSON-RPC error codes of messages refused before the SDK sees them.
const (
	errCodeParse          = -32700
	errCodeInvalidRequest = -32600
)

// maxStdioDepth is the deepest nesting of arrays and objects a stdio message
// may have. MCP arguments are shallow; a 100,000-deep message only costs.
const maxStdioDepth = 512

// messageVetter checks each stdio line before the SDK decodes it: the SDK's
// stdio connection ends the whole session (and serve exits) on the first
// message it cannot decode, so a malformed line is answered here with a
// JSON-RPC error (id null when none can be read) and the session goes on, as
// the HTTP transport answers 400 and goes on.
type messageVetter struct {
	out     func([]byte) error // writes one response line
	log     *slog.Logger
	batches bool // whether the negotiated protocol still allows JSON-RPC batches
}

func newMessageVetter(out func([]byte) error, log *slog.Logger) *messageVetter {
	// Before initialize the SDK speaks 2025-03-26, which allows batches.
	return &messageVetter{out: out, log: log, batches: true}
}

// vet reports whether line goes on to the SDK; a refused line has been
// answered (or, when nothing may be answered, logged).
func (v *messageVetter) vet(line []byte) (pass bool, err error) {
	msg := bytes.TrimSpace(line)
	if len(msg) == 0 {
		return false, nil
	}
	problem, code := checkSyntax(msg)
	if problem == "" {
		switch msg[0] {
		case '{':
			var id json.RawMessage
			if id, problem = checkMessage(msg); problem == "" {
				v.noteProtocol(msg)
				return true, nil
			}
			return false, v.refuse(errCodeInvalidRequest, problem, id)
		case '[':
			return v.vetBatch(msg)
		default:
			problem, code = "a JSON-RPC message is an object (or, before protocol 2025-06-18, an array of objects)", errCodeInvalidRequest
		}
	}
	return false, v.refuse(code, problem, nil)
}

// vetBatch passes a batch whose every message is sound while the protocol
// allows batches; otherwise every request in it is answered with an error.
func (v *messageVetter) vetBatch(msg []byte) (bool, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(msg, &items); err != nil {
		return false, v.refuse(errCodeParse, "parse error: "+err.Error(), nil)
	}
	if len(items) == 0 {
		return false, v.refuse(errCodeInvalidRequest, "an empty batch is not a JSON-RPC message", nil)
	}
	type verdict struct {
		id      json.RawMessage
		problem string
	}
	verdicts := make([]verdict, len(items))
	sound, seen := true, map[string]bool{}
	for i, item := range items {
		id, problem := checkMessage(bytes.TrimSpace(item))
		if problem == "" && id != nil {
			if seen[string(id)] {
				problem = "the batch uses the id " + string(id) + " twice"
			}
			seen[string(id)] = true
		}
		verdicts[i] = verdict{id, problem}
		sound = sound && problem == ""
	}
	if sound && v.batches {
		return true, nil
	}
	var replies []json.RawMessage
	for _, vd := range verdicts {
		problem := vd.problem
		if problem == "" {
			if vd.id == nil {
				continue // a notification gets no answer
			}
			problem = "JSON-RPC batches are not supported in protocol 2025-06-18 and later: send one message per line"
		}
		replies = append(replies, errorResponse(errCodeInvalidRequest, problem, vd.id))
	}
	v.log.Warn("refused a stdio batch", "messages", len(items))
	if len(replies) == 0 {
		return false, nil
	}
	b, err := json.Marshal(replies)
	if err != nil {
		return false, err
	}
	return false, v.out(b)
}

func (v *messageVetter) refuse(code int, problem string, id json.RawMessage) error {
	v.log.Warn("refused a malformed stdio message", "problem", problem, "id", string(id))
	return v.out(errorResponse(code, problem, id))
}

// noteProtocol follows the protocol version an initialize request asks for:
// the server takes it when it supports it, and only 2024-11-05 and 2025-03-26
// allow batches.
func (v *messageVetter) noteProtocol(msg []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "initialize" {
		return
	}
	switch m.Params.ProtocolVersion {
	case "2024-11-05", "2025-03-26":
		v.batches = true
	default:
		v.batches = false
	}
}

func errorResponse(code int, problem string, id json.RawMessage) json.RawMessage {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": problem},
	})
	return b
}

// checkSyntax says what is wrong with msg as JSON text, and the error code.
func checkSyntax(msg []byte) (string, int) {
	if !utf8.Valid(msg) {
		return "parse error: the message is not valid UTF-8", errCodeParse
	}
	if d := depth(msg); d > maxStdioDepth {
		return fmt.Sprintf("the message nests arrays and objects deeper than %d levels", maxStdioDepth), errCodeInvalidRequest
	}
	if !json.Valid(msg) {
		return "parse error: the message is not one JSON value (control characters such as NUL must be escaped inside strings)", errCodeParse
	}
	return "", 0
}

// depth is the deepest nesting of [ and { outside strings, stopping early
// once it passes maxStdioDepth.
func depth(b []byte) int {
	d, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			d++
			if d > deepest {
				deepest = d
				if deepest > maxStdioDepth {
					return deepest
				}
			}
		case c == ']' || c == '}':
			d--
		}
	}
	return deepest
}

var integerID = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// checkMessage checks one JSON-RPC 2.0 message object as the SDK will decode
// it, and returns its id when the id is usable in an answer.
func checkMessage(msg []byte) (json.RawMessage, string) {
	if len(msg) == 0 || msg[0] != '{' {
		return nil, "a JSON-RPC message is an object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, "parse error: " + err.Error()
	}
	id, idProblem := checkID(m["id"])
	if v := string(m["jsonrpc"]); v != `"2.0"` {
		return id, fmt.Sprintf(`"jsonrpc" must be "2.0" (got %s)`, orMissing(v))
	}
	if idProblem != "" {
		return nil, idProblem
	}
	if e, ok := m["error"]; ok && e[0] != '{' && string(e) != "null" {
		return id, `"error" must be an object`
	}
	method, isRequest := m["method"]
	switch {
	case isRequest && method[0] != '"':
		return id, `"method" must be a string`
	case !isRequest && id == nil:
		return nil, `a message without "method" is a response and needs the "id" of the request it answers`
	}
	return id, ""
}

// checkID accepts a string or an integer id that fits 64 bits (the SDK keeps
// ids as int64 or string and would answer another number); raw is nil when
// the message has none.
func checkID(raw json.RawMessage) (json.RawMessage, string) {
	if raw == nil || string(raw) == "null" {
		return nil, ""
	}
	switch {
	case raw[0] == '"':
		return raw, ""
	case integerID.Match(raw):
		if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return raw, ""
		}
		return nil, fmt.Sprintf(`"id" %s does not fit in 64 bits: use a smaller integer or a string`, raw)
	}
	return nil, fmt.Sprintf(`"id" must be a string or an integer (got %s)`, truncate(string(raw), 40))
}

func orMissing(v string) string {
	if v == "" {
		return "nothing"
	}
	return truncate(v, 40)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
