#!/usr/bin/python3
"""A GTK 3 test application for the wayland backend's tests, one fullscreen
window per output named on the command line (sway's rules place them). It
prints what it receives as JSON lines on stdout and reads commands as JSON
lines on stdin: fill (paint a rectangle, window coordinates), reset (empty
the entries), where (report the button and entry geometry)."""
import json
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

BUTTONS = {1: "left", 2: "middle", 3: "right"}


def emit(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()


def mods(state):
    out = []
    if state & Gdk.ModifierType.CONTROL_MASK:
        out.append("ctrl")
    if state & Gdk.ModifierType.SHIFT_MASK:
        out.append("shift")
    if state & Gdk.ModifierType.MOD1_MASK:
        out.append("alt")
    if state & (Gdk.ModifierType.SUPER_MASK | Gdk.ModifierType.MOD4_MASK):
        out.append("super")
    return sorted(out)


class Win:
    def __init__(self, name):
        self.name = name
        self.fills = []
        self.win = Gtk.Window(title="guiagent-fixture " + name)
        overlay = Gtk.Overlay()
        self.area = Gtk.DrawingArea()
        self.area.add_events(Gdk.EventMask.POINTER_MOTION_MASK | Gdk.EventMask.BUTTON_PRESS_MASK
                             | Gdk.EventMask.BUTTON_RELEASE_MASK | Gdk.EventMask.SCROLL_MASK
                             | Gdk.EventMask.SMOOTH_SCROLL_MASK | Gdk.EventMask.ENTER_NOTIFY_MASK)
        self.area.connect("draw", self.draw)
        self.area.connect("motion-notify-event", self.motion)
        # The pointer arriving on the window comes as a crossing event, not
        # a motion: it is where the application sees the pointer too.
        self.area.connect("enter-notify-event", self.motion)
        self.area.connect("button-press-event", self.button, "button_down")
        self.area.connect("button-release-event", self.button, "button_up")
        self.area.connect("scroll-event", self.scroll)
        self.entry = Gtk.Entry()
        self.entry.set_halign(Gtk.Align.END)
        self.entry.set_valign(Gtk.Align.END)
        self.entry.set_size_request(300, -1)
        self.entry.connect("changed", lambda e: emit(ev="text", win=name, text=e.get_text()))
        self.press = Gtk.Button(label="Press me")
        self.press.set_halign(Gtk.Align.START)
        self.press.set_valign(Gtk.Align.END)
        self.press.connect("clicked", lambda b: emit(ev="clicked", win=name))
        overlay.add(self.area)
        overlay.add_overlay(self.entry)
        overlay.add_overlay(self.press)
        self.win.add(overlay)
        self.win.connect("key-press-event", self.key, "key_down")
        self.win.connect("key-release-event", self.key, "key_up")
        self.win.show_all()
        # Every motion counts: no merging of motions into one per frame.
        self.win.get_window().set_event_compression(False)
        self.entry.grab_focus()

    def draw(self, widget, cr):
        cr.set_source_rgb(128 / 255, 128 / 255, 128 / 255)
        cr.paint()
        for x, y, w, h, r, g, b in self.fills:
            cr.set_source_rgb(r / 255, g / 255, b / 255)
            cr.rectangle(x, y, w, h)
            cr.fill()
        return False

    def motion(self, w, e):
        global pointer_at
        pointer_at = (self.name, e.x, e.y)
        emit(ev="motion", win=self.name, x=e.x, y=e.y)

    def button(self, w, e, kind):
        if e.type in (Gdk.EventType.BUTTON_PRESS, Gdk.EventType.BUTTON_RELEASE):
            emit(ev=kind, win=self.name, x=e.x, y=e.y, button=BUTTONS.get(e.button, str(e.button)), mods=mods(e.state))
        return False

    def scroll(self, w, e):
        # The direction comes from the smooth deltas, which carry the
        # protocol's axis values: GTK 3's discrete events swap left and right
        # (gdkdevice-wayland.c flush_scroll_event: discrete_x > 0 is LEFT).
        if e.direction != Gdk.ScrollDirection.SMOOTH:
            return False
        ok, dx, dy = e.get_scroll_deltas()
        d = "down" if dy > 0 else "up" if dy < 0 else "right" if dx > 0 else "left" if dx < 0 else ""
        if d:
            emit(ev="scroll", win=self.name, x=e.x, y=e.y, dir=d, mods=mods(e.state))
        return False

    def key(self, w, e, kind):
        emit(ev=kind, win=self.name, key=Gdk.keyval_name(e.keyval) or "", mods=mods(e.state))
        return False

    def geometry(self, widget):
        a = widget.get_allocation()
        x, y = widget.translate_coordinates(self.win, 0, 0)
        return {"x": x, "y": y, "w": a.width, "h": a.height}


# A still screen: grim and the backend must see the same pixels.
Gtk.Settings.get_default().set_property("gtk-cursor-blink", False)
wins = {n: Win(n) for n in sys.argv[1:]}


def after_paint(win, seq):
    clock = win.area.get_frame_clock()
    ids = []

    def done(*_):
        clock.disconnect(ids[0])
        emit(ev="filled", seq=seq)

    ids.append(clock.connect("after-paint", done))
    win.area.queue_draw()


pending = b""


def commands(src, cond):
    global pending
    data = os.read(sys.stdin.fileno(), 65536)
    if not data:
        Gtk.main_quit()
        return False
    pending += data
    while b"\n" in pending:
        line, pending = pending.split(b"\n", 1)
        command(json.loads(line))
    return True


def command(c):
    if c["cmd"] == "fill":
        w = wins[c["win"]]
        w.fills.append((c["x"], c["y"], c["w"], c["h"], c["r"], c["g"], c["b"]))
        after_paint(w, c["seq"])
    elif c["cmd"] == "clear":
        for w in wins.values():
            w.fills = []
            w.area.queue_draw()
    elif c["cmd"] == "reset":
        for w in wins.values():
            w.entry.set_text("")
            w.entry.grab_focus()
        emit(ev="reset", seq=c["seq"])
    elif c["cmd"] == "where":
        for w in wins.values():
            emit(ev="where", win=w.name, button_box=w.geometry(w.press), entry_box=w.geometry(w.entry))


# GTK 3 on Wayland drops a motion event that follows a key release within a
# few milliseconds (seen on the wire with WAYLAND_DEBUG, never as a GDK
# event), though GDK's pointer position follows it: a poll of that position
# reports such moves as motion too.
pointer = Gdk.Display.get_default().get_default_seat().get_pointer()
pointer_at = None


def poll():
    global pointer_at
    for w in wins.values():
        gw = w.win.get_window()
        at = pointer.get_window_at_position()[0]
        if at is None or at.get_toplevel() != gw:
            continue
        _, x, y, _ = gw.get_device_position_double(pointer)
        if pointer_at != (w.name, x, y):
            pointer_at = (w.name, x, y)
            emit(ev="motion", win=w.name, x=x, y=y)
    return True


GLib.timeout_add(10, poll)
GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, commands)
GLib.timeout_add(300, lambda: emit(ev="ready") and False)
Gtk.main()
