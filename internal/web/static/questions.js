// guiagent dashboard, Questions panel: the questions a run waits on, each
// with its task, step, screen description and screenshot, answered here with
// POST /api/questions/{id}. GET /api/questions is reloaded on each event of
// /api/questions/events (server-sent events) and every few seconds besides.
// A question comes from a model: its text is only ever set with textContent.
"use strict";

(() => {
  const { $, el } = guiagent;
  const cards = new Map(); // question id -> its card
  const mine = new Set(); // ids of the questions this page answered
  const baseTitle = document.title;
  let available = null; // unknown until the first load
  let loading = null; // the load under way
  let again = false; // another load was asked for meanwhile
  let refocus = false; // focus moves on once an answered card is gone

  const qURL = (id) => "/api/questions/" + encodeURIComponent(id);

  function metaText(q) {
    const parts = [];
    if (q.task) parts.push("Task: " + q.task + (q.step ? " · step " + q.step : ""));
    else parts.push("Asked for a tool call");
    parts.push("asked " + guiagent.fmtTime(q.asked));
    if (q.deadline) parts.push("answer by " + guiagent.fmtTime(q.deadline));
    return parts.join(" · ");
  }

  // outcome says how a finished question ended, from its event.
  function outcome(ev) {
    const a = ev.answer;
    if (ev.kind === "expired" || !a) return "expired: no answer in time, or its run stopped waiting";
    let where = a.by ? "by " + a.by : "";
    if (a.by === "client") where = "from the MCP client";
    if (a.by === "dashboard") where = mine.has(ev.question.id) ? "here" : "from the dashboard";
    if (a.action === "accept") return "answered " + where + ": " + (a.value || "");
    if (a.action === "decline") return "declined " + where;
    return "cancelled " + where;
  }

  function controlsOf(c) { return [...c.querySelectorAll("button, input")]; }

  function say(c, text, kind) {
    const s = c.querySelector(".status");
    s.textContent = text;
    s.className = "status " + (kind || "");
  }

  async function answer(q, c, action, value) {
    for (const x of controlsOf(c)) x.disabled = true;
    say(c, "sending…");
    let r;
    try {
      r = await guiagent.postJSON(qURL(q.id), { action, value });
    } catch (e) {
      r = { ok: false, status: 0, data: { error: "the server cannot be reached: " + e.message } };
    }
    if (r.ok || r.status === 409) {
      if (r.ok) mine.add(q.id);
      else say(c, r.data.error || "answered already", "error");
      refocus = c.contains(document.activeElement) || document.activeElement === document.body;
      load();
      return;
    }
    for (const x of controlsOf(c)) x.disabled = false;
    say(c, (r.data && r.data.error) || "HTTP " + r.status, "error");
    const input = c.querySelector("input");
    (input || controlsOf(c)[0]).focus();
  }

  function button(text, cls, onClick) {
    const b = el("button", cls, text);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }

  // textForm is the input of a text question: a password field for a secret.
  function textForm(q, c) {
    const form = el("form", "answer");
    form.autocomplete = "off";
    const input = el("input");
    input.type = q.secret ? "password" : "text";
    input.autocomplete = "off";
    input.spellcheck = false;
    input.placeholder = q.secret ? "secret: typed for you, never shown" : "your answer";
    input.setAttribute("aria-label", q.secret ? "your answer (secret: it is typed for you and never shown)" : "your answer");
    form.append(input, el("button", "", "Send"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const v = input.value;
      if (q.secret) input.value = "";
      answer(q, c, "accept", v);
    });
    return form;
  }

  function card(q) {
    const c = el("article", "question");
    c.dataset.id = q.id;
    const h = el("h3", "", q.question);
    h.id = "question-" + q.id;
    c.setAttribute("aria-labelledby", h.id);
    const text = el("div", "text");
    text.append(h, el("p", "meta muted", metaText(q)));
    if (q.screen) text.append(el("p", "screen", "Screen: " + q.screen));
    const controls = el("div", "controls");
    controls.setAttribute("role", "group");
    controls.setAttribute("aria-label", "answer");
    if (q.kind === "confirm") {
      controls.append(button("Yes", "", () => answer(q, c, "accept", "yes")), button("No", "", () => answer(q, c, "accept", "no")));
    } else if (q.kind === "choice") {
      for (const o of q.options || []) controls.append(button(o, "", () => answer(q, c, "accept", o)));
    } else {
      controls.append(textForm(q, c));
    }
    const decline = button("Decline", "decline", () => answer(q, c, "decline", ""));
    decline.title = "Refuse to answer: the run ends as blocked, with this question as the reason";
    controls.append(decline);
    const status = el("p", "status");
    status.setAttribute("role", "status");
    text.append(controls, status);
    c.append(text);
    if (q.has_image) {
      const img = el("img", "shot");
      img.alt = "the screen the question is about";
      img.src = qURL(q.id) + "/image";
      c.append(img);
    }
    return c;
  }

  function render(data) {
    const pending = Array.isArray(data.pending) ? data.pending : [];
    const recent = Array.isArray(data.recent) ? data.recent.slice().reverse() : [];
    const live = new Set(pending.map((q) => q.id));
    for (const [id, c] of cards) {
      if (!live.has(id)) { c.remove(); cards.delete(id); }
    }
    for (const q of pending) {
      let c = cards.get(q.id);
      if (!c) {
        c = card(q);
        cards.set(q.id, c);
        $("questions-pending").append(c);
      }
      c.querySelector(".meta").textContent = metaText(q);
    }
    $("questions-recent").replaceChildren(...recent.map((ev) => {
      const li = el("li");
      li.dataset.id = ev.question.id;
      li.tabIndex = -1;
      const ok = ev.kind === "answered" && ev.answer && ev.answer.action === "accept";
      li.append(el("span", "time muted", guiagent.fmtTime(ev.time)), el("strong", "", ev.question.question),
        el("span", "outcome " + (ok ? "answered" : ev.kind), outcome(ev)));
      return li;
    }));
    $("questions-recent-box").hidden = recent.length === 0;
    show(pending);
  }

  // show puts the panel on top and the count in the header and the page title
  // while questions wait.
  function show(pending) {
    const n = pending.length;
    const panel = $("questions-panel");
    panel.classList.toggle("asking", n > 0);
    $("questions-count").textContent = String(n);
    $("questions-note").textContent = n === 0 ? "No question is waiting." :
      (n === 1 ? "A run is waiting for your answer." : n + " questions are waiting for your answer.");
    const badge = $("questions-badge");
    badge.hidden = n === 0;
    badge.textContent = n === 1 ? "1 question waiting" : n + " questions waiting";
    document.title = n > 0 ? "(" + n + ") question" + (n > 1 ? "s" : "") + " waiting · " + baseTitle : baseTitle;
    if (refocus) {
      refocus = false;
      const next = cards.size > 0 ? controlsOf(cards.values().next().value)[0] : $("questions-recent").firstElementChild;
      if (next) next.focus();
    }
  }

  async function load() {
    if (loading) { again = true; return loading; }
    loading = (async () => {
      try {
        const data = await guiagent.getJSON("/api/questions");
        if (!data.available) {
          available = false;
          $("questions-note").textContent = "Questions from tasks are not available on this server.";
          return;
        }
        if (available === null) startEvents();
        available = true;
        render(data);
      } catch (e) {
        $("questions-note").textContent = "The questions cannot be read: " + e.message;
      }
    })();
    await loading;
    loading = null;
    if (again) { again = false; return load(); }
  }

  function startEvents() {
    const es = new EventSource("/api/questions/events");
    for (const kind of ["ready", "asked", "answered", "expired"]) es.addEventListener(kind, () => load());
  }

  guiagent.registerPanel({
    id: "questions-panel",
    start() {
      $("questions-badge").addEventListener("click", () => {
        const first = cards.values().next().value;
        $("questions-panel").scrollIntoView({ block: "start" });
        if (first && controlsOf(first)[0]) controlsOf(first)[0].focus();
      });
      load();
      setInterval(() => { if (available) load(); }, 5000);
    },
  });
})();
