// guiagent dashboard: live screen, current task steps (server-sent events),
// Stop, audit log and runs. Untrusted text is only ever set with textContent.
//
// Each panel is a <section class="panel"> in index.html and an object
// registered here with guiagent.registerPanel({id, start}); start runs once
// the page has loaded. A new panel (such as Settings) adds its section and
// registers itself, from this file or its own script, using the helpers of
// the guiagent object.
"use strict";

const guiagent = (() => {
  const panels = [];
  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  async function getJSON(url) {
    const r = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (!r.ok) throw new Error(url + ": HTTP " + r.status);
    return r.json();
  }
  async function postJSON(url, body) {
    const r = await fetch(url, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
    const data = await r.json().catch(() => ({}));
    return { ok: r.ok, status: r.status, data };
  }
  const pad = (n) => String(n).padStart(2, "0");
  // fmtTime shows a timestamp compactly on one line: the time of day for
  // today, else the date and time.
  function fmtTime(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return "";
    const t = pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
    const now = new Date();
    if (d.toDateString() === now.toDateString()) return t;
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + t.slice(0, 5);
  }
  // fmtValue renders a JSON value for reading: strings as they are, lists
  // joined, objects as "key: value" pairs.
  function fmtValue(v) {
    if (v === null || v === undefined) return "";
    if (Array.isArray(v)) return "[" + v.map(fmtValue).join(", ") + "]";
    if (typeof v === "object") return Object.entries(v).map(([k, x]) => k + ": " + fmtValue(x)).join(" · ");
    return String(v);
  }
  // fmtText shows text that holds JSON as readable pairs, other text as it is.
  function fmtText(s) {
    if (typeof s !== "string") return fmtValue(s);
    const t = s.trim();
    if (t.startsWith("{") || t.startsWith("[")) {
      try { return fmtValue(JSON.parse(t)); } catch (e) { /* truncated or not JSON */ }
    }
    return s;
  }
  // liveImage keeps canvas showing the JPEG at url, fetched again delay ms
  // after each frame is drawn (errorDelay after a failure, at least 2 s
  // while the page is hidden). Frames are fetched and drawn, never loaded as
  // an <img>: image loads keep a page loading, so a headless browser's
  // --screenshot would wait on them forever. canvas.dataset.frames counts the
  // frames drawn. It returns a function that stops it.
  function liveImage(canvas, url, delay, errorDelay) {
    const ctx = canvas.getContext("2d");
    let timer = 0, stopped = false;
    async function next() {
      let wait = delay;
      try {
        const r = await fetch(url + (url.includes("?") ? "&" : "?") + "t=" + Date.now(), { credentials: "same-origin", cache: "no-store" });
        if (!r.ok) throw new Error(url + ": HTTP " + r.status);
        const frame = await createImageBitmap(await r.blob());
        if (canvas.width !== frame.width || canvas.height !== frame.height) {
          canvas.width = frame.width;
          canvas.height = frame.height;
        }
        ctx.drawImage(frame, 0, 0);
        frame.close();
        canvas.dataset.frames = String((+canvas.dataset.frames || 0) + 1);
      } catch (e) {
        wait = errorDelay;
      }
      if (document.hidden) wait = Math.max(wait, 2000);
      if (!stopped) timer = setTimeout(next, wait);
    }
    timer = setTimeout(next, 0);
    return () => { stopped = true; clearTimeout(timer); };
  }
  function registerPanel(p) { panels.push(p); }
  function start() {
    for (const p of panels) {
      if (!$(p.id)) continue;
      try { p.start(); } catch (e) { console.error("panel " + p.id + " failed to start", e); }
    }
  }
  return { $, el, getJSON, postJSON, fmtTime, fmtValue, fmtText, liveImage, registerPanel, start };
})();

const { $, el } = guiagent;

// Live screen: fetch the next frame 250 ms after the previous one is drawn.
guiagent.registerPanel({
  id: "screen-panel",
  start() { guiagent.liveImage($("screen"), "/api/screen.jpg", 250, 2000); },
});

// The current task: steps as they happen, a step counter, and Stop.
const task = {
  id: "task-panel",
  steps: new Map(),
  running: false,
  ended: new Set(), // run ids whose finish event arrived: a late poll cannot revive them
  step: 0,
  maxSteps: 0,
  phase: "",

  stepItem(n) {
    let s = this.steps.get(n);
    if (!s) {
      const li = el("li");
      li.dataset.step = n;
      li.append(el("strong", "", "Step " + n), el("div", "obs"), el("div", "acts"), el("div", "meta muted"));
      $("steps").append(li);
      s = { li, obs: li.children[1], acts: li.children[2], meta: li.children[3] };
      this.steps.set(n, s);
      li.scrollIntoView({ block: "nearest" });
    }
    return s;
  },
  setRunning(on, status) {
    this.running = on;
    const st = $("task-status");
    st.textContent = status;
    st.className = "pill " + status;
    $("stop").disabled = !on;
    $("stop").title = on ? "Cancel the current task, like the kill switch" : "No task is running";
    this.showCounter();
  },
  // seeStep moves the counter to step n, the step under way.
  seeStep(n, phase) {
    if (n > this.step) this.step = n;
    if (phase) this.phase = phase;
    this.showCounter();
  },
  showCounter() {
    let t = "";
    if (this.running && this.step > 0) {
      t = "step " + this.step + (this.maxSteps ? " of " + this.maxSteps : "") + (this.phase ? " · " + this.phase : "");
    }
    $("step-counter").textContent = t;
  },
  actionText(a) {
    const act = a.action || {};
    const fmtPoint = (p) => (p ? "(" + Math.round(p.X) + "," + Math.round(p.Y) + ")" : "");
    let t = act.kind || "?";
    if (act.text) t += " " + JSON.stringify(act.text);
    if (act.keys && act.keys.length) t += " " + act.keys.join("+");
    if (act.direction) t += " " + act.direction;
    if (act.at) t += " model [" + act.at.join(", ") + "]";
    if (a.image) t += " image " + fmtPoint(a.image);
    if (a.global) t += " screen " + fmtPoint(a.global);
    t += " → " + (a.outcome || "") + (a.error ? ": " + a.error : "");
    return t;
  },
  handlers: {
    start(ev) {
      task.steps.clear();
      task.step = 0;
      task.phase = "";
      $("steps").replaceChildren();
      $("summary").textContent = "";
      $("progress").textContent = "";
      $("task-text").textContent = ev.message || "";
      $("task-text").className = "";
      task.setRunning(true, "running");
    },
    progress(ev) {
      $("progress").textContent = ev.message || "";
      if (ev.total) task.maxSteps = ev.total;
      if (ev.step) task.seeStep(ev.step);
    },
    warning(ev) {
      const s = task.stepItem(ev.step || 0);
      s.meta.append(el("div", "warn", "⚠ " + (ev.message || "")));
    },
    screenshot(ev) { if (ev.step) { task.stepItem(ev.step); task.seeStep(ev.step); } },
    model(ev) {
      const d = ev.decision || {};
      const s = task.stepItem(ev.step || 0);
      task.seeStep(ev.step || 0);
      s.obs.textContent = [d.observation, d.reasoning].filter(Boolean).join(" — ");
    },
    action(ev) {
      const a = ev.action || {};
      const s = task.stepItem(ev.step || 0);
      const ok = !a.error && (!a.outcome || a.outcome === "ok");
      s.acts.append(el("div", ok ? "act" : "act bad", task.actionText(a)));
    },
    step(ev) {
      const t = ev.step_trace || {};
      const s = task.stepItem(t.step || ev.step || 0);
      s.li.classList.add("done");
      const u = t.usage || {};
      s.meta.prepend(el("div", "", "model " + (t.model_ms || 0) + " ms · step " + (t.step_ms || 0) + " ms · " +
        (u.input_tokens || 0) + " in / " + (u.output_tokens || 0) + " out tokens"));
    },
    finish(ev) {
      const r = ev.result || {};
      if (ev.run_id) task.ended.add(ev.run_id);
      task.setRunning(false, r.status || "finished");
      $("summary").textContent = r.summary || "";
      runs.load();
      setTimeout(() => runs.load(), 1500); // the record is finalized just after the finish event
    },
  },
  startEvents() {
    const conn = $("conn");
    const es = new EventSource("/api/events");
    const live = () => { conn.textContent = "live"; conn.className = "pill live"; };
    es.addEventListener("open", live);
    es.addEventListener("ready", live);
    es.addEventListener("error", () => { conn.textContent = "reconnecting…"; conn.className = "pill offline"; });
    for (const kind of Object.keys(this.handlers)) {
      es.addEventListener(kind, (m) => {
        try { this.handlers[kind](JSON.parse(m.data)); } catch (e) { console.warn("bad event", kind, e); }
      });
    }
  },
  // poll asks the server what runs now: the source of truth for Stop and the counter.
  async poll() {
    try {
      const c = await guiagent.getJSON("/api/current");
      if (c && typeof c === "object" && c.run_id && !this.ended.has(c.run_id)) {
        if (!$("task-text").textContent || !this.running) {
          $("task-text").textContent = c.task || "";
          $("task-text").className = "";
        }
        if (!this.running) this.setRunning(true, "running");
        this.maxSteps = c.max_steps || this.maxSteps;
        this.step = c.step || this.step;
        this.phase = c.phase || "";
        this.showCounter();
      } else if (this.running && !(c && this.ended.has(c.run_id))) {
        this.setRunning(false, "idle"); // the finish event was missed
      }
    } catch (e) { /* shown by the connection pill */ }
  },
  setupStop() {
    const btn = $("stop");
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      const r = await guiagent.postJSON("/api/stop");
      $("stop-result").textContent = r.ok ? "stop sent" : ("stop failed: " + (r.data.error || r.status));
      this.poll();
    });
  },
  start() {
    this.setRunning(false, "idle");
    this.setupStop();
    this.startEvents();
    this.poll();
    setInterval(() => this.poll(), 1000);
  },
};
guiagent.registerPanel(task);

// The audit log: the last tool calls, newest first, as readable rows.
guiagent.registerPanel({
  id: "audit-panel",
  async load() {
    let entries;
    try { entries = await guiagent.getJSON("/api/audit"); } catch (e) {
      $("audit-empty").textContent = "The audit log cannot be read: " + e.message;
      return;
    }
    entries = Array.isArray(entries) ? entries.slice().reverse().slice(0, 200) : [];
    $("audit-empty").hidden = entries.length > 0;
    $("audit-empty").textContent = "No tool calls yet. Calls made by MCP clients show up here.";
    $("audit").hidden = entries.length === 0;
    const open = new Set([...$("audit").tBodies[0].rows].filter((r) => r.classList.contains("open")).map((r) => r.dataset.key));
    $("audit").tBodies[0].replaceChildren(...entries.map((e) => {
      const tr = el("tr", e.error ? "bad" : "");
      const cell = (cls, text) => { const td = el("td", cls); td.append(el("div", "clamp", text)); return td; };
      tr.append(el("td", "time", guiagent.fmtTime(e.time)), el("td", "tool", e.tool), cell("args", guiagent.fmtValue(e.args)),
        cell("result", e.error ? e.error : guiagent.fmtText(e.result || "")), el("td", "num", (e.ms || 0) + " ms"));
      tr.title = new Date(e.time).toLocaleString() + " · click to show it all";
      tr.dataset.key = e.time + " " + e.tool;
      if (open.has(tr.dataset.key)) tr.classList.add("open");
      return tr;
    }));
  },
  start() {
    $("audit").tBodies[0].addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr");
      if (tr) tr.classList.toggle("open");
    });
    this.load();
    setInterval(() => this.load(), 3000);
  },
});

// Recorded runs with links to their reports.
const runs = {
  id: "runs-panel",
  statusTitle: {
    open: "The MCP session is open on the server and made a call in the last minute.",
    idle: "The MCP session is open on the server but made no call for a minute; it ends when the client disconnects or after the server's idle timeout.",
    recorded: "The MCP session has ended; its record is complete.",
    incomplete: "Recording stopped without a result (the process stopped or was killed).",
  },
  async load() {
    let list;
    try { list = await guiagent.getJSON("/api/runs"); } catch (e) { return; /* shown on the next refresh */ }
    list = Array.isArray(list) ? list.slice(0, 50) : [];
    $("runs-empty").hidden = list.length > 0;
    $("runs").tBodies[0].replaceChildren(...list.map((r) => {
      const tr = el("tr");
      const link = el("a", "", "report");
      link.href = r.report_url;
      link.target = "_blank";
      link.rel = "noopener";
      const tdLink = el("td");
      tdLink.append(link);
      const status = el("td", "", "");
      const pill = el("span", "pill " + r.status, r.status);
      pill.title = this.statusTitle[r.status] || "";
      status.append(pill);
      const label = r.kind === "session" ? "MCP session " + (r.session_id || "(stdio)") : (r.task || r.id);
      const started = el("td", "time", guiagent.fmtTime(r.started));
      started.title = new Date(r.started).toLocaleString();
      tr.append(started, status, el("td", "task", label), el("td", "num", r.steps), tdLink);
      tr.dataset.run = r.id;
      return tr;
    }));
  },
  start() {
    this.load();
    setInterval(() => this.load(), 3000);
  },
};
guiagent.registerPanel(runs);

// A new one-time login link, for another browser or after the printed one was used.
guiagent.registerPanel({
  id: "login-link",
  start() {
    $("login-link").addEventListener("click", async () => {
      const r = await guiagent.postJSON("/api/login-link");
      const box = $("login-link-box");
      box.hidden = false;
      $("login-link-url").value = r.ok ? r.data.url : ("failed: " + (r.data.error || r.status));
      $("login-link-url").select();
    });
    $("logout-all").addEventListener("click", async () => {
      await guiagent.postJSON("/api/logout-all");
      location.assign("/login");
    });
  },
});

document.addEventListener("DOMContentLoaded", () => guiagent.start());
