package ios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Error is an error WebDriverAgent answered with: its W3C error code
// ("invalid session id", "unknown error", ...) and message.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("WebDriverAgent: %s: %s (HTTP %d)", e.Code, e.Message, e.Status)
}

// errNoSession is the W3C error of a session WDA no longer has.
const errNoSession = "invalid session id"

// client speaks WebDriverAgent's HTTP API: every answer is
// {"value": ..., "sessionId": ...}, an error's value
// {"error", "message", "traceback"}.
type client struct {
	base string
	http *http.Client

	mu      sync.Mutex
	session string
	created int // sessions created, for tests and logs
}

func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("WebDriverAgent at %s does not answer (%v): start WebDriverAgentRunner on the device or simulator (xcodebuild test-without-building, go-ios runwda, or Appium), and forward its port 8100 (iproxy 8100 8100, go-ios forward 8100 8100), or name its address with --wda-url", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("WebDriverAgent %s %s: %w", method, path, err)
	}
	var env struct {
		Value     json.RawMessage `json:"value"`
		SessionID *string         `json:"sessionId"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		msg := data
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return fmt.Errorf("WebDriverAgent %s %s: not a WebDriver answer (HTTP %d): %q", method, path, resp.StatusCode, msg)
	}
	var werr struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if resp.StatusCode >= 400 || (len(env.Value) > 0 && env.Value[0] == '{' && json.Unmarshal(env.Value, &werr) == nil && werr.Error != "") {
		_ = json.Unmarshal(env.Value, &werr)
		if werr.Error == "" {
			werr.Error = "unknown error"
		}
		return &Error{Status: resp.StatusCode, Code: werr.Error, Message: werr.Message}
	}
	if out != nil {
		if err := json.Unmarshal(env.Value, out); err != nil {
			return fmt.Errorf("WebDriverAgent %s %s: reading the value: %w", method, path, err)
		}
	}
	return nil
}

// newSession creates the server's session (WDA keeps one: a new one ends
// the last).
func (c *client) newSession(ctx context.Context) (string, error) {
	var v struct {
		SessionID string `json:"sessionId"`
	}
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{}, "firstMatch": []any{map[string]any{}}}}
	if err := c.do(ctx, http.MethodPost, "/session", body, &v); err != nil {
		return "", fmt.Errorf("creating a WebDriverAgent session: %w", err)
	}
	if v.SessionID == "" {
		return "", errors.New("WebDriverAgent created a session without an id")
	}
	c.mu.Lock()
	c.session = v.SessionID
	c.created++
	c.mu.Unlock()
	return v.SessionID, nil
}

// inSession calls path under the session, creating one when there is
// none and again once when WDA no longer knows it (WDA restarted, or its
// app crashed).
func (c *client) inSession(ctx context.Context, method, path string, body, out any) error {
	c.mu.Lock()
	id := c.session
	c.mu.Unlock()
	var err error
	if id == "" {
		if id, err = c.newSession(ctx); err != nil {
			return err
		}
	}
	err = c.do(ctx, method, "/session/"+id+path, body, out)
	var we *Error
	if errors.As(err, &we) && (we.Code == errNoSession || strings.Contains(we.Message, "Session does not exist")) {
		if id, err = c.newSession(ctx); err != nil {
			return err
		}
		return c.do(ctx, method, "/session/"+id+path, body, out)
	}
	return err
}

func newClient(base string, timeout time.Duration) *client {
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	return &client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: timeout}}
}
