package mcpserver

import (
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
)

// MaxRecentFrames is how many recent screenshots (of every session) the
// server keeps by id, so that a frame_id names one taken in any session.
const MaxRecentFrames = 32

// ErrUnknownFrame: a frame_id names no frame the server still holds.
var ErrUnknownFrame = errors.New("unknown frame_id")

// frameStore keeps the frames clients have seen: the latest per session and
// display, the server's latest per display, and the MaxRecentFrames most
// recent by id (with their images, which session records draw overlays on).
// It is safe for concurrent use.
type frameStore struct {
	mu      sync.Mutex
	session map[*mcp.ServerSession]map[string]heldFrame
	latest  map[string]heldFrame // display id -> the server's latest frame of it
	byID    map[string]heldFrame
	order   []string // the ids of byID, oldest first
}

// heldFrame is a frame and the image the client got for it (nil when none,
// e.g. a frame put without an image).
type heldFrame struct {
	frame geom.Frame
	img   *imaging.Shot
}

func newFrameStore() *frameStore {
	return &frameStore{session: map[*mcp.ServerSession]map[string]heldFrame{}, latest: map[string]heldFrame{}, byID: map[string]heldFrame{}}
}

// frameSource says which frame a point was read over, for results.
type frameSource int

const (
	fromImplicit frameSource = iota // no screenshot yet: the default screenshot size
	fromFrameID                     // the frame_id the caller gave
	fromSession                     // the session's latest screenshot of the display
	fromServer                      // the server's latest screenshot of the display, from another session
)

func (src frameSource) String() string {
	switch src {
	case fromFrameID:
		return "the frame_id given"
	case fromSession:
		return "this session's latest screenshot of the display"
	case fromServer:
		return "the latest screenshot of the display, taken in another MCP session"
	}
	return "no screenshot of the display yet: the size a default screenshot would have"
}

// put stores f (with img, the image sent for it) as the latest frame of its
// display for ss and for the server, and as a recent frame by id.
func (fs *frameStore) put(ss *mcp.ServerSession, f geom.Frame, img *imaging.Shot) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	h := heldFrame{frame: f, img: img}
	if fs.session[ss] == nil {
		fs.session[ss] = map[string]heldFrame{}
	}
	fs.session[ss][f.Display.ID] = h
	fs.latest[f.Display.ID] = h
	if _, dup := fs.byID[f.ID]; !dup {
		fs.order = append(fs.order, f.ID)
	}
	fs.byID[f.ID] = h
	for len(fs.order) > MaxRecentFrames {
		delete(fs.byID, fs.order[0])
		fs.order = fs.order[1:]
	}
}

// get returns the latest frame of display for ss.
func (fs *frameStore) get(ss *mcp.ServerSession, display string) (geom.Frame, bool) {
	h, ok := fs.sessionLatest(ss, display)
	return h.frame, ok
}

// sessionLatest returns the latest frame of display for ss with its image.
func (fs *frameStore) sessionLatest(ss *mcp.ServerSession, display string) (heldFrame, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	h, ok := fs.session[ss][display]
	return h, ok
}

// byFrameID returns the recent frame id, of any session.
func (fs *frameStore) byFrameID(id string) (heldFrame, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	h, ok := fs.byID[id]
	return h, ok
}

// current returns the frame points on display are read over when no frame_id
// is given: the session's latest, else the server's latest.
func (fs *frameStore) current(ss *mcp.ServerSession, display string) (heldFrame, frameSource, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if h, ok := fs.session[ss][display]; ok {
		return h, fromSession, true
	}
	if h, ok := fs.latest[display]; ok {
		return h, fromServer, true
	}
	return heldFrame{}, fromImplicit, false
}

// image returns the image of frame frameID while the server holds it, else nil.
func (fs *frameStore) image(frameID string) *imaging.Shot {
	h, _ := fs.byFrameID(frameID)
	return h.img
}

// forget drops the session's own latest frames; the server-wide ones stay
// (another session may name them).
func (fs *frameStore) forget(ss *mcp.ServerSession) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.session, ss)
}

// held returns how many frames are held by id.
func (fs *frameStore) held() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.byID)
}

// unknownFrame explains a frame_id the server does not hold.
func unknownFrame(id string) error {
	return fmt.Errorf("%w %q: the server keeps only its %d most recent screenshots (of every session), and this is not one of them; take a new screenshot with gui_screenshot and pass its frame_id",
		ErrUnknownFrame, id, MaxRecentFrames)
}
