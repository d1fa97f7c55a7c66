#!/usr/bin/python3
"""A GTK 3 application with its accessibility tree on (GDK_BACKEND=wayland),
for the element tree's tests on sway: one window per title on the command
line, 300x200, with one magenta button at (30, 30) in it, so that a
screenshot shows where the button is; a title ending in " CSD" gets a header
bar (client-side decorations, a shadow inside the surface). It prints JSON
lines: ready, clicked (with the window's title), where (the button's box in
the GTK window's coordinates), state (whether a window is still tiled, once
GTK has laid it out)."""
import json
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def emit(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()


css = Gtk.CssProvider()
css.load_from_data(b"""
window { background: rgb(128, 128, 128); }
button { background: rgb(255, 0, 255); background-image: none; border: none;
         border-radius: 0; box-shadow: none; outline: none; margin: 0; padding: 8px 12px; }
button label { color: rgb(0, 0, 0); }
""")
Gtk.StyleContext.add_provider_for_screen(Gdk.Screen.get_default(), css, Gtk.STYLE_PROVIDER_PRIORITY_USER)
Gtk.Settings.get_default().set_property("gtk-cursor-blink", False)

wins = []
for title in sys.argv[1:]:
    w = Gtk.Window(title=title)
    w.set_default_size(300, 200)
    if title.endswith(" CSD"):
        # A header bar: GTK draws the decorations and a shadow inside the
        # surface, whose corner its coordinates count from.
        hb = Gtk.HeaderBar(title=title)
        hb.set_show_close_button(True)
        w.set_titlebar(hb)
    fixed = Gtk.Fixed()
    b = Gtk.Button(label="Press " + title.split()[-1])
    b.set_size_request(120, 50)
    b.connect("clicked", lambda _b, t=title: emit(ev="clicked", win=t))
    fixed.put(b, 30, 30)
    w.add(fixed)
    w.show_all()
    wins.append((title, w, b))


def where():
    for title, w, b in wins:
        x, y = b.translate_coordinates(w, 0, 0)
        a = b.get_allocation()
        emit(ev="where", win=title, button_box={"x": x, "y": y, "w": a.width, "h": a.height})


def state(title):
    # After the layout that a configure from the compositor queued: at a
    # priority below GTK's resize and redraw.
    def tell():
        for t, w, _b in wins:
            if t == title:
                st = w.get_window().get_state()
                emit(ev="state", win=t, tiled=bool(st & Gdk.WindowState.TILED))
        return False
    GLib.idle_add(tell, priority=GLib.PRIORITY_LOW)


def commands(src, cond):
    line = sys.stdin.readline()
    if not line:
        Gtk.main_quit()
        return False
    cmd = json.loads(line)
    if cmd.get("cmd") == "where":
        where()
    elif cmd.get("cmd") == "state":
        state(cmd.get("win"))
    return True


GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, commands)
GLib.timeout_add(300, lambda: emit(ev="ready") and False)
Gtk.main()
