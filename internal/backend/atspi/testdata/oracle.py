#!/usr/bin/python3
"""pyatspi walk of a window, the differential oracle of the AT-SPI tests.

oracle.py WINDOW-TITLE [--repeat N]

Walks the window titled WINDOW-TITLE (any application) depth first, reading
what a snapshot reads of each showing object: role, name, states and
extents in screen coordinates; objects that are not showing are not entered.
Prints one JSON object: {"elements": [{"role", "name", "box": [x, y, w, h]}],
"seconds": [one per walk]}. With --repeat it walks N times (for the
benchmark) and reports each walk's time.
"""
import json
import sys
import time

import pyatspi


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
    out.append({"role": role, "name": name, "box": box})
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
