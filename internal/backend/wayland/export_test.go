package wayland

import "time"

// LastCaptureTiming is the split of the latest capture's time: the
// compositor's answer with the format, its frame (the wait for a repaint and
// its copy), and our conversion.
func (b *Backend) LastCaptureTiming() (offer, frame, convert time.Duration) {
	b.capMu.Lock()
	defer b.capMu.Unlock()
	t := b.capTime
	return t.Offer, t.Frame, t.Convert
}
