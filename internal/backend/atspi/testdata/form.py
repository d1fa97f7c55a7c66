#!/usr/bin/python3
"""The AT-SPI tests' GTK 3 application.

form.py [--rows N [--listbox] | --twins] [--title T]

Without --rows it shows a form: labelled entries (a GtkLabel left of each,
one with mnemonic-widget so AT-SPI has a labelled-by relation, one without, so
only the label beside it names it), an entry with no label at all, a password
entry, a checkbox, two buttons and a short list. With --rows N it shows a
list of N rows instead (the 20000-row test) and a "Ping" button whose label
counts its clicks, so a test can tell the application still answers. The
list is a GtkTreeView (whose rows AT-SPI creates on demand), or with
--listbox a GtkListBox of N labels (every row a widget, all in the tree).
With --twins it shows two buttons of the same name, "OK", one under an
"Upper" heading and one under "Lower", and a status label that says which
were clicked ("No clicks", then "Clicked: lower", "Clicked: lower upper"...).

It prints "ready" on stdout once its window is mapped.
"""
import argparse
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def form(win):
    grid = Gtk.Grid(column_spacing=12, row_spacing=8, margin=16)
    win.add(grid)
    name_label = Gtk.Label(label="Name", xalign=0)
    name = Gtk.Entry(text="Ada")
    name_label.set_mnemonic_widget(name)  # a labelled-by relation
    grid.attach(name_label, 0, 0, 1, 1)
    grid.attach(name, 1, 0, 1, 1)
    email_label = Gtk.Label(label="Email", xalign=0)  # no relation: only its place names the field
    email = Gtk.Entry(text="ada@example.org")
    grid.attach(email_label, 0, 1, 1, 1)
    grid.attach(email, 1, 1, 1, 1)
    pw_label = Gtk.Label(label="Password", xalign=0)
    pw = Gtk.Entry(text="hunter2", visibility=False)
    pw_label.set_mnemonic_widget(pw)
    grid.attach(pw_label, 0, 2, 1, 1)
    grid.attach(pw, 1, 2, 1, 1)
    grid.attach(Gtk.Entry(text="orphan"), 1, 3, 1, 1)  # no label anywhere near
    check = Gtk.CheckButton(label="Remember me")
    check.set_active(True)
    grid.attach(check, 1, 4, 1, 1)
    store = Gtk.ListStore(str)
    for fruit in ("Apple", "Banana", "Cherry"):
        store.append([fruit])
    view = Gtk.TreeView(model=store)
    view.append_column(Gtk.TreeViewColumn("Fruit", Gtk.CellRendererText(), text=0))
    grid.attach(view, 1, 5, 1, 1)
    box = Gtk.Box(spacing=8)
    box.pack_start(Gtk.Button(label="Cancel"), False, False, 0)
    box.pack_start(Gtk.Button(label="Save"), False, False, 0)
    grid.attach(box, 1, 6, 1, 1)
    name.grab_focus()


def rows(win, n, listbox):
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4, margin=8)
    win.add(box)
    ping = Gtk.Button(label="Ping 0")
    clicks = [0]

    def pinged(_):
        clicks[0] += 1
        ping.set_label("Ping %d" % clicks[0])

    ping.connect("clicked", pinged)
    box.pack_start(ping, False, False, 0)
    if listbox:
        view = Gtk.ListBox()
        for i in range(n):
            view.add(Gtk.Label(label="Row %d" % i, xalign=0))
    else:
        store = Gtk.ListStore(str)
        for i in range(n):
            store.append(["Row %d" % i])
        view = Gtk.TreeView(model=store)
        view.append_column(Gtk.TreeViewColumn("Item", Gtk.CellRendererText(), text=0))
    scroll = Gtk.ScrolledWindow(vexpand=True)
    scroll.add(view)
    box.pack_start(scroll, True, True, 0)


def twins(win):
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8, margin=16)
    win.add(box)
    status = Gtk.Label(label="No clicks")
    clicked = []

    def click(_, which):
        clicked.append(which)
        status.set_label("Clicked: " + " ".join(clicked))

    for which in ("upper", "lower"):
        box.pack_start(Gtk.Label(label=which.capitalize(), xalign=0), False, False, 0)
        ok = Gtk.Button(label="OK")
        ok.connect("clicked", click, which)
        box.pack_start(ok, False, False, 0)
    box.pack_start(status, False, False, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--listbox", action="store_true")
    ap.add_argument("--twins", action="store_true")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    win = Gtk.Window(title=a.title or ("Rows" if a.rows else "Twins" if a.twins else "Form"))
    win.set_default_size(480, 600 if a.rows else 420)
    win.move(40, 30)
    win.connect("destroy", Gtk.main_quit)
    if a.rows:
        rows(win, a.rows, a.listbox)
    elif a.twins:
        twins(win)
    else:
        form(win)

    def mapped(*_):
        print("ready", flush=True)
        return False

    win.connect("map-event", lambda *_: GLib.timeout_add(200, mapped))
    win.show_all()
    win.present()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
