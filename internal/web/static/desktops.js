// guiagent dashboard: the live desktops of a desktop-per-session server
// (serve --http --desktop-per-session), each with its screen. The panel stays
// hidden on a server with one shared desktop. Untrusted text is only ever set
// with textContent.
"use strict";

(function () {
  const panel = document.getElementById("desktops-panel");
  const list = document.getElementById("desktops");
  const count = document.getElementById("desktops-count");
  const cards = new Map(); // session id -> {card, img, timer}

  function card(d) {
    const c = document.createElement("figure");
    c.className = "desktop";
    const img = document.createElement("img");
    img.alt = "screen of the desktop of session " + d.id;
    const cap = document.createElement("figcaption");
    c.append(img, cap);
    const entry = { card: c, img: img, cap: cap, timer: 0 };
    const next = (delay) => {
      entry.timer = setTimeout(() => {
        img.src = "/api/desktops/" + encodeURIComponent(d.id) + "/screen.jpg?t=" + Date.now();
      }, delay);
    };
    img.addEventListener("load", () => next(1000));
    img.addEventListener("error", () => next(3000));
    next(0);
    return entry;
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
        clearTimeout(e.timer);
        e.card.remove();
        cards.delete(id);
      }
    }
  }

  refresh();
  setInterval(refresh, 2000);
})();
