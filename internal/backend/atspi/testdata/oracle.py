#!/usr/bin/python3
"""pyatspi walk of a window, the differential oracle of the AT-SPI tests.

oracle.py WINDOW-TITLE [--repeat N]

Walks the window titled WINDOW-TITLE (any application) depth first, reading
what a snapshot reads (so that the benchmark compares like with like):

- of every object: its states (objects that are not showing are neither
  returned nor entered);
- of every showing object: its role, name, child count and children, and
  its extents in screen coordinates (Component);
- of a showing object with a box, as the snapshot does for the elements it
  returns: the text of an editable text field that is not a password field
  (Text.getText), the current value of an object with the Value interface,
  and for an unnamed control (the roles the snapshot calls interactive, and
  lists, trees and tables) its relation set, whose labelled-by target's name
  names it.

Prints one JSON object: {"elements": [{"role", "name", "box": [x, y, w, h],
"value"}], "seconds": [one per walk]}. With --repeat it walks N times in the
same process (the later walks profit from libatspi's own cache) and reports
each walk's time.
"""
import json
import sys
import time

import pyatspi


# AT-SPI role names of the controls the snapshot calls interactive (uitree.Interactive),
# and of lists, trees and tables: unnamed, their labelled-by relation is read.
CONTROLS = {
    "push button", "toggle button", "push button menu", "entry", "password text", "terminal", "editbar",
    "check box", "radio button", "combo box", "autocomplete", "link", "menu", "popup menu", "menu item",
    "check menu item", "radio menu item", "tearoff menu item", "page tab", "list item", "tree item",
    "slider", "dial", "spin button", "table cell", "row header", "table row header", "column header",
    "table column header", "scroll bar", "list", "list box", "description list", "tree", "tree table",
    "table", "document spreadsheet",
}


def extras(obj, role, name, states, element):
    """Reads what the snapshot reads beside the box of an element it returns."""
    if role in ("text", "entry", "terminal", "editbar") and states.contains(pyatspi.STATE_EDITABLE):
        try:
            element["value"] = obj.queryText().getText(0, -1)
        except Exception:
            pass
    elif role in ("slider", "dial", "spin button", "progress bar", "level bar"):
        try:
            element["value"] = obj.queryValue().currentValue
        except Exception:
            pass
    if name == "" and (role in CONTROLS or (role == "text" and states.contains(pyatspi.STATE_EDITABLE))):
        try:
            for rel in obj.getRelationSet():
                if rel.getRelationType() == pyatspi.RELATION_LABELLED_BY and rel.getNTargets() > 0:
                    element["labelled_by"] = rel.getTarget(0).name or ""
                    break
        except Exception:
            pass


def walk(obj, out):
    try:
        states = obj.getState()
    except Exception:
        return
    if not states.contains(pyatspi.STATE_SHOWING):
        return
    role = obj.getRoleName()
    name = obj.name or ""
    try:
        e = obj.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        box = [e.x, e.y, e.width, e.height]
    except Exception:
        box = None
    element = {"role": role, "name": name, "box": box}
    if box is not None and box[2] > 0 and box[3] > 0 and box[0] > -1000:
        extras(obj, role, name, states, element)
    out.append(element)
    for i in range(obj.childCount):
        child = obj.getChildAtIndex(i)
        if child is not None:
            walk(child, out)


def find(title):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        if app is None:
            continue
        for win in app:
            if win is not None and win.name == title:
                return win
    return None


def main():
    title = sys.argv[1]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--repeat" else 1
    win = find(title)
    if win is None:
        print(json.dumps({"error": "no window titled %r" % title}))
        return 1
    seconds = []
    out = []
    for _ in range(repeat):
        out = []
        t = time.perf_counter()
        walk(win, out)
        seconds.append(time.perf_counter() - t)
    print(json.dumps({"elements": out, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
