// guiagent dashboard: the live desktops of a desktop-per-session server
// (serve --http --desktop-per-session), each with its screen. The panel stays
// hidden on a server with one shared desktop. Untrusted text is only ever set
// with textContent.
"use strict";

(function () {
  const panel = document.getElementById("desktops-panel");
  const list = document.getElementById("desktops");
  const count = document.getElementById("desktops-count");
  const cards = new Map(); // session id -> {card, screen, cap, stop}

  function card(d) {
    const c = document.createElement("figure");
    c.className = "desktop";
    const screen = document.createElement("canvas");
    screen.setAttribute("role", "img");
    screen.setAttribute("aria-label", "screen of the desktop of session " + d.id);
    const cap = document.createElement("figcaption");
    c.append(screen, cap);
    const stop = guiagent.liveImage(screen, "/api/desktops/" + encodeURIComponent(d.id) + "/screen.jpg", 1000, 3000);
    return { card: c, screen: screen, cap: cap, stop: stop };
  }

  async function refresh() {
    let desktops;
    try {
      const r = await fetch("/api/desktops", { credentials: "same-origin" });
      if (!r.ok) { panel.hidden = true; return; }
      desktops = await r.json();
    } catch (e) {
      return;
    }
    if (!Array.isArray(desktops)) { panel.hidden = true; return; }
    panel.hidden = false;
    count.textContent = String(desktops.length);
    const live = new Set();
    for (const d of desktops) {
      live.add(d.id);
      let e = cards.get(d.id);
      if (!e) {
        e = card(d);
        cards.set(d.id, e);
        list.append(e.card);
      }
      e.cap.textContent = (d.display || "starting…") + " · session " + d.id.slice(0, 8) +
        " · since " + new Date(d.started).toLocaleTimeString();
    }
    for (const [id, e] of cards) {
      if (!live.has(id)) {
        e.stop();
        e.card.remove();
        cards.delete(id);
      }
    }
  }

  refresh();
  setInterval(refresh, 2000);
})();
