package windows

import (
	"context"
	"fmt"
	"unicode/utf16"

	"github.com/guiagent/guiagent/internal/desktop"
)

// mapvkVKToVSC is MAPVK_VK_TO_VSC.
const mapvkVKToVSC = 0

// typeChunkStrokes is how many strokes one SendInput batch of TypeText holds;
// cancellation is checked between batches.
const typeChunkStrokes = 128

// scanCode returns the hardware scan code of a virtual key in the active
// layout, which programs reading scan codes (games, remote desktops) need.
func scanCode(vk uint16) uint16 {
	r, _, _ := procMapVirtualKeyW.Call(uintptr(vk), mapvkVKToVSC)
	return uint16(r)
}

func vkDown(k vkKey) input { return keyEvent(k, scanCode(k.VK), false) }
func vkUp(k vkKey) input   { return keyEvent(k, scanCode(k.VK), true) }

// keyEvents returns the events that press k and those that release it. Named
// keys use their virtual key; a character uses the key the active layout
// types it with (VkKeyScanW), holding Shift, Ctrl or AltGr as the layout
// needs; a character the layout lacks is sent as KEYEVENTF_UNICODE.
func keyEvents(k desktop.Key) (downs, ups []input, err error) {
	if v, ok := namedVK(k); ok {
		return []input{vkDown(v)}, []input{vkUp(v)}, nil
	}
	r, ok := k.Rune()
	if !ok {
		return nil, nil, fmt.Errorf("windows: unknown key %q: use names like Return, Tab, Escape, F5, ctrl, or a single character", string(k))
	}
	if r <= 0xFFFF {
		ret, _, _ := procVkKeyScanW.Call(uintptr(r))
		if vk, mods, ok := decodeVkKeyScan(uint16(ret)); ok {
			key := vkKey{VK: vk}
			for _, m := range modifierVKs(mods) {
				downs = append(downs, vkDown(m))
				ups = append([]input{vkUp(m)}, ups...)
			}
			downs = append(downs, vkDown(key))
			ups = append([]input{vkUp(key)}, ups...)
			return downs, ups, nil
		}
	}
	units := utf16.Encode([]rune{r})
	for _, u := range units {
		downs = append(downs, unicodeEvent(u, false))
	}
	for i := len(units) - 1; i >= 0; i-- {
		ups = append(ups, unicodeEvent(units[i], true))
	}
	return downs, ups, nil
}

// KeyDown presses k (and the modifiers the layout needs to type it, for a
// character); KeyUp releases them all.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	downs, ups, err := keyEvents(k)
	if err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if err := b.send(downs); err != nil {
		return err
	}
	b.keys[k] = ups
	return nil
}

// KeyUp releases k and whatever KeyDown pressed with it. It ignores ctx
// cancellation so that a release always happens.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	if err := b.ready(); err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	ups, ok := b.keys[k]
	if !ok {
		var err error
		if _, ups, err = keyEvents(k); err != nil {
			return err
		}
	}
	delete(b.keys, k)
	return b.send(ups)
}

// TypeText types text exactly, whatever the keyboard layout: every character
// is sent as its UTF-16 code units with KEYEVENTF_UNICODE (emoji as surrogate
// pairs), line breaks as Return and tabs as Tab. The clipboard is not used.
// Each key is pressed and released inside one SendInput batch, so nothing
// stays pressed, even on error or cancellation (checked between batches).
// Programs that ignore VK_PACKET input (some games) do not receive the text.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	plan, err := typingPlan(text)
	if err != nil {
		return err
	}
	for start := 0; start < len(plan); {
		end := chunkEnd(plan, start, typeChunkStrokes)
		events := make([]input, 0, 2*(end-start))
		for _, s := range plan[start:end] {
			if s.VK.VK != 0 {
				events = append(events, vkDown(s.VK), vkUp(s.VK))
			} else {
				events = append(events, unicodeEvent(s.Unit, false), unicodeEvent(s.Unit, true))
			}
		}
		b.inMu.Lock()
		err := b.send(events)
		b.inMu.Unlock()
		if err != nil {
			return fmt.Errorf("windows type: after %d of %d keystrokes: %w", start, len(plan), err)
		}
		start = end
		if start < len(plan) {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}
