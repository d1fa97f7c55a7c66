#!/usr/bin/python3
"""The agent's GTK 3 test form: a "Sign up" window with a Name and an Email
entry (each named by the label whose mnemonic widget it is), a Save button and
a status line. Each widget has a flat colour of its own (CSS), so a scripted
brain can find it in a screenshot the way the sample application's brains do;
the accessibility tree names them, so a brain can use refs instead. Save shows
"Saved: NAME <EMAIL>" in the status line.

It prints "ready" on stdout once its window is mapped.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

CSS = b"""
#name { background: rgb(200, 230, 255); color: black; }
#email { background: rgb(255, 225, 190); color: black; }
#save, #save:hover, #save:active { background: rgb(40, 170, 80); background-image: none; color: white; }
#status { background: rgb(250, 250, 200); color: black; padding: 6px; }
"""


def main():
    prov = Gtk.CssProvider()
    prov.load_from_data(CSS)
    win = Gtk.Window(title="Sign up")
    Gtk.StyleContext.add_provider_for_screen(win.get_screen(), prov, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION)
    win.set_default_size(520, 300)
    win.move(40, 30)
    win.connect("destroy", Gtk.main_quit)
    grid = Gtk.Grid(column_spacing=12, row_spacing=12, margin=20)
    win.add(grid)
    entries = []
    for row, label in enumerate(("Name", "Email")):
        lab = Gtk.Label(label=label, xalign=0)
        ent = Gtk.Entry(name=label.lower(), hexpand=True)
        lab.set_mnemonic_widget(ent)
        grid.attach(lab, 0, row, 1, 1)
        grid.attach(ent, 1, row, 1, 1)
        entries.append(ent)
    save = Gtk.Button(label="Save", name="save")
    grid.attach(save, 1, 2, 1, 1)
    status = Gtk.Label(label="Not saved", name="status", xalign=0)
    grid.attach(status, 1, 3, 1, 1)

    def saved(_):
        status.set_label("Saved: %s <%s>" % (entries[0].get_text(), entries[1].get_text()))

    save.connect("clicked", saved)

    def mapped(*_):
        print("ready", flush=True)
        return False

    win.connect("map-event", lambda *_: GLib.timeout_add(200, mapped))
    win.show_all()
    win.present()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
