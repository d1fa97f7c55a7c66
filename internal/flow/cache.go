package flow

import (
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/vision"
)

// Strategy says how a run uses the cache.
type Strategy string

// Cache strategies.
const (
	ReadWrite Strategy = "read-write" // replay verified entries, record new ones (default)
	ReadOnly  Strategy = "read-only"  // replay verified entries, never write the file
	WriteOnly Strategy = "write-only" // always ask the model, record what it answered
	CacheOff  Strategy = "off"        // neither read nor write
)

// ParseStrategy reads a strategy name; "" is ReadWrite.
func ParseStrategy(s string) (Strategy, error) {
	switch st := Strategy(strings.TrimSpace(s)); st {
	case "":
		return ReadWrite, nil
	case ReadWrite, ReadOnly, WriteOnly, CacheOff:
		return st, nil
	}
	return "", fmt.Errorf("cache strategy %q: use read-write, read-only, write-only or off", s)
}

func (s Strategy) reads() bool  { return s == ReadWrite || s == ReadOnly }
func (s Strategy) writes() bool { return s == ReadWrite || s == WriteOnly }

// CachePath is where the cache of a flow lives: FLOW.cache.yaml beside the
// flow file, or, when dir is set (GUI_AGENT_CACHE_DIR), <dir>/FLOW.cache.yaml.
// A flow without a file (gui_run_flow) is named by its name.
func CachePath(flowPath, flowName, dir string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(flowPath), ".yaml"), ".yml")
	if flowPath == "" {
		base = cacheName(flowName)
	}
	if dir == "" {
		dir = filepath.Dir(flowPath)
	}
	return filepath.Join(dir, base+".cache.yaml")
}

// unsafeRun is a run of characters a cache file's name does not keep.
var unsafeRun = regexp.MustCompile(`[^\p{L}\p{N}_.-]+`)

// cacheName is the file name (without .cache.yaml) of a flow known only by
// its name: its letters and digits in any script, lower-cased, other runs of
// characters as "-"; a name with none gets "flow-" and a hash of the name, so
// two such flows do not share a cache.
func cacheName(flowName string) string {
	base := strings.Trim(unsafeRun.ReplaceAllString(strings.ToLower(flowName), "-"), "-.")
	sum := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(flowName)))
	if base == "" {
		return "flow-" + sum
	}
	if len(base) > maxCacheName { // file names are at most 255 bytes
		cut := maxCacheName
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		return base[:cut] + "-" + sum
	}
	return base
}

// maxCacheName is the longest flow name kept whole in a cache file's name.
const maxCacheName = 120

// CacheFile is the cache file's content: human-readable YAML.
type CacheFile struct {
	// Comment is the first line of the file, for a person who opens it.
	Comment string        `yaml:"about"`
	Flow    string        `yaml:"flow"`
	Entries []*CacheEntry `yaml:"entries"`
}

// CacheEntry is what one locating step found: the element's description,
// the screenshot's size, the model that located it, its box in image pixels
// and a fingerprint of its pixels.
type CacheEntry struct {
	Step        int        `yaml:"step"`
	Kind        Kind       `yaml:"kind"`
	Role        string     `yaml:"role,omitempty"` // "to" for a drag's end
	Description string     `yaml:"description"`
	DisplaySize string     `yaml:"display_size,omitempty"` // WxH image pixels of the screenshot
	Model       string     `yaml:"model,omitempty"`
	Box         vision.Box `yaml:"box,omitempty"`
	// FingerprintRect is where Fingerprint was cropped (image pixels): the
	// box plus a margin.
	FingerprintRect [4]int `yaml:"fingerprint_rect,flow,omitempty"`
	// Fingerprint is the crop as base64 PNG.
	Fingerprint string `yaml:"fingerprint,omitempty"`
	// FingerprintKind is what the fingerprint checks: "" (or "box") every
	// pixel of the crop; "field" a text field's surroundings and label, its
	// inside (FingerprintHole, transparent in the PNG) left out, so that
	// what the field holds does not count. Caches without it are "box".
	FingerprintKind string `yaml:"fingerprint_kind,omitempty"`
	// FingerprintHole is the part of a field's crop left out (image pixels).
	FingerprintHole [4]int `yaml:"fingerprint_hole,flow,omitempty"`
	// FingerprintLabel is the part of a field's crop that shows its label,
	// checked on its own (image pixels; absent when none was found).
	FingerprintLabel [4]int `yaml:"fingerprint_label,flow,omitempty"`
	// Element is the element's identity in the accessibility tree (when the
	// desktop has one): replay verifies it first, then the fingerprint.
	Element *Identity `yaml:"element,omitempty"`
	// Actions are what an act step executed, in order (act steps only).
	Actions []CachedAction `yaml:"actions,omitempty"`
	Updated CacheTime      `yaml:"updated"`
}

// CacheTime is when an entry was stored. It reads the timestamps other YAML
// tools write when they re-save the file (PyYAML's "2026-12-01 21:17:10+00:00",
// with a space and an offset) as well as RFC 3339, and writes RFC 3339.
type CacheTime struct{ time.Time }

// cacheTimeLayouts are the timestamp forms CacheTime reads.
var cacheTimeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02t15:04:05.999999999Z07:00", "2006-01-02"}

// UnmarshalYAML reads any of cacheTimeLayouts.
func (t *CacheTime) UnmarshalYAML(n *yaml.Node) error {
	v := strings.TrimSpace(n.Value)
	for _, layout := range cacheTimeLayouts {
		if p, err := time.Parse(layout, v); err == nil {
			t.Time = p.UTC()
			return nil
		}
	}
	return fmt.Errorf("line %d: updated %q is not a timestamp (use 2006-01-02T15:04:05Z)", n.Line, v)
}

// MarshalYAML writes RFC 3339.
func (t CacheTime) MarshalYAML() (any, error) { return t.UTC(), nil }

// Cache holds one flow's cache file in memory.
type Cache struct {
	path     string
	strategy Strategy

	mu    sync.Mutex
	file  CacheFile
	dirty bool
}

// OpenCache reads the cache at path (a missing file is an empty cache) for
// strategy; with CacheOff nothing is read or written.
func OpenCache(path string, strategy Strategy) (*Cache, error) {
	c := &Cache{path: path, strategy: strategy}
	if !strategy.reads() {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the flow cache: %w", err)
	}
	if err := yaml.Unmarshal(b, &c.file); err != nil {
		return nil, fmt.Errorf("flow cache %s is not valid (%v): delete it or run with --cache write-only to rebuild it", path, err)
	}
	return c, nil
}

// Path is the cache file.
func (c *Cache) Path() string { return c.path }

// Strategy is the cache's strategy.
func (c *Cache) Strategy() Strategy { return c.strategy }

// lookup returns the entry of a locating step, or nil.
func (c *Cache) lookup(step int, kind Kind, role, desc string) *CacheEntry {
	if c == nil || !c.strategy.reads() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.file.Entries {
		if e.Step == step && e.Kind == kind && e.Role == role && e.Description == desc {
			return e
		}
	}
	return nil
}

// store records e, replacing the entry of the same step, kind and role.
func (c *Cache) store(e *CacheEntry) {
	if c == nil || !c.strategy.writes() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.file.Entries {
		if o.Step == e.Step && o.Kind == e.Kind && o.Role == e.Role {
			c.file.Entries[i], c.dirty = e, true
			return
		}
	}
	c.file.Entries = append(c.file.Entries, e)
	c.dirty = true
}

// Save writes the cache file when something changed and the strategy writes.
func (c *Cache) Save(flowName string) error {
	if c == nil || !c.strategy.writes() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	c.file.Flow = flowName
	c.file.Comment = "guiagent flow cache: what each locating step found. Replay checks each fingerprint on the screen before acting; delete an entry (or the file) to make the model locate it again."
	b, err := yaml.Marshal(&c.file)
	if err != nil {
		return fmt.Errorf("encode the flow cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("create the flow cache folder (set %s to a writable folder): %w", config.Var("CacheDir"), err)
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write the flow cache (set %s to a writable folder): %w", config.Var("CacheDir"), err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("write the flow cache: %w", err)
	}
	c.dirty = false
	return nil
}

// fingerprint decodes the entry's fingerprint. Replay acts on the entry's
// box, so the box must lie within the fingerprint's place (on the screen):
// a box edited to point elsewhere would be acted on unverified.
func (e *CacheEntry) fingerprint() (fingerprint, error) {
	r := image.Rect(e.FingerprintRect[0], e.FingerprintRect[1], e.FingerprintRect[2], e.FingerprintRect[3])
	var w, h int
	if _, err := fmt.Sscanf(e.DisplaySize, "%dx%d", &w, &h); err != nil {
		return fingerprint{}, fmt.Errorf("display size %q is not WIDTHxHEIGHT", e.DisplaySize)
	}
	b := image.Rect(int(e.Box.X1), int(e.Box.Y1), int(e.Box.X2+0.999), int(e.Box.Y2+0.999)).Intersect(image.Rect(0, 0, w, h))
	if b.Empty() || !b.In(r) {
		return fingerprint{}, fmt.Errorf("box (%g,%g)-(%g,%g) is not within its fingerprint %v: replay would act where it did not verify", e.Box.X1, e.Box.Y1, e.Box.X2, e.Box.Y2, r)
	}
	fp, err := decodeFingerprint(e.Fingerprint, r)
	if err != nil {
		return fingerprint{}, err
	}
	switch e.FingerprintKind {
	case kindBox, "box":
		return fp, nil
	case kindField:
	default:
		return fingerprint{}, fmt.Errorf("fingerprint kind %q is not box or field", e.FingerprintKind)
	}
	hole, label := rectOf(e.FingerprintHole), rectOf(e.FingerprintLabel)
	if hole.Empty() || !hole.In(r) || (!label.Empty() && !label.In(r)) {
		return fingerprint{}, fmt.Errorf("field fingerprint's hole %v and label %v are not within its place %v", hole, label, r)
	}
	fp.Kind, fp.Hole, fp.Label = kindField, hole, label
	fp.sortParts()
	// What is left out is not verified: most of the place must be.
	if fp.ring < minFieldRing || fp.ring*10 < r.Dx()*r.Dy() {
		return fingerprint{}, fmt.Errorf("field fingerprint's hole %v leaves %d pixels of its place %v to verify", hole, fp.ring, r)
	}
	return fp, nil
}

// minFieldRing is the fewest pixels of surroundings a field fingerprint
// verifies.
const minFieldRing = 64

func rectOf(v [4]int) image.Rectangle { return image.Rect(v[0], v[1], v[2], v[3]) }

func rectArray(r image.Rectangle) [4]int { return [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y} }

func sizeString(w, h int) string { return fmt.Sprintf("%dx%d", w, h) }
