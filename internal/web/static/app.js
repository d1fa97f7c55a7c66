// guiagent dashboard: live screen, current task steps (server-sent events),
// Stop, audit log and runs. Untrusted text is only ever set with textContent.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// Live screen: fetch the next frame when the previous one has loaded.
function startScreen() {
  const img = $("screen");
  const next = (delay) => setTimeout(() => { img.src = "/api/screen.jpg?t=" + Date.now(); }, delay);
  img.addEventListener("load", () => next(250));
  img.addEventListener("error", () => next(2000));
  next(0);
}

// Steps of the current task.
const steps = new Map();

function stepItem(n) {
  let s = steps.get(n);
  if (!s) {
    const li = el("li");
    li.dataset.step = n;
    li.append(el("strong", "", "Step " + n), el("div", "obs"), el("div", "acts"), el("div", "meta muted"));
    $("steps").append(li);
    s = { li, obs: li.children[1], acts: li.children[2], meta: li.children[3] };
    steps.set(n, s);
    li.scrollIntoView({ block: "nearest" });
  }
  return s;
}

function setStatus(text) {
  const st = $("task-status");
  st.textContent = text;
  st.className = "pill " + text;
}

function fmtPoint(p) { return p ? "(" + Math.round(p.X) + "," + Math.round(p.Y) + ")" : ""; }

function actionText(a) {
  const act = a.action || {};
  let t = act.kind || "?";
  if (act.text) t += " " + JSON.stringify(act.text);
  if (act.keys && act.keys.length) t += " " + act.keys.join("+");
  if (act.direction) t += " " + act.direction;
  if (act.at) t += " model " + JSON.stringify(act.at);
  if (a.image) t += " image " + fmtPoint(a.image);
  if (a.global) t += " screen " + fmtPoint(a.global);
  t += " → " + (a.outcome || "") + (a.error ? ": " + a.error : "");
  return t;
}

const handlers = {
  start(ev) {
    steps.clear();
    $("steps").replaceChildren();
    $("summary").textContent = "";
    $("task-text").textContent = ev.message || "";
    setStatus("running");
  },
  progress(ev) { $("progress").textContent = ev.message || ""; },
  warning(ev) {
    const s = stepItem(ev.step || 0);
    s.meta.append(el("div", "warn", "⚠ " + (ev.message || "")));
  },
  screenshot(ev) { if (ev.step) stepItem(ev.step); },
  model(ev) {
    const d = ev.decision || {};
    const s = stepItem(ev.step || 0);
    s.obs.textContent = [d.observation, d.reasoning].filter(Boolean).join(" — ");
  },
  action(ev) {
    const a = ev.action || {};
    const s = stepItem(ev.step || 0);
    const ok = !a.error && (!a.outcome || a.outcome === "ok");
    s.acts.append(el("div", ok ? "act" : "act bad", actionText(a)));
  },
  step(ev) {
    const t = ev.step_trace || {};
    const s = stepItem(t.step || ev.step || 0);
    s.li.classList.add("done");
    const u = t.usage || {};
    s.meta.prepend(el("div", "", "model " + (t.model_ms || 0) + " ms · step " + (t.step_ms || 0) + " ms · " +
      (u.input_tokens || 0) + " in / " + (u.output_tokens || 0) + " out tokens"));
  },
  finish(ev) {
    const r = ev.result || {};
    setStatus(r.status || "finished");
    $("summary").textContent = r.summary || "";
    loadRuns();
    setTimeout(loadRuns, 1500); // the record is finalized just after the finish event
  },
};

function startEvents() {
  const conn = $("conn");
  const es = new EventSource("/api/events");
  es.addEventListener("open", () => { conn.textContent = "live"; conn.className = "pill live"; });
  es.addEventListener("error", () => { conn.textContent = "reconnecting…"; conn.className = "pill offline"; });
  for (const kind of Object.keys(handlers)) {
    es.addEventListener(kind, (m) => {
      try { handlers[kind](JSON.parse(m.data)); } catch (e) { console.warn("bad event", kind, e); }
    });
  }
  es.addEventListener("ready", () => { conn.textContent = "live"; conn.className = "pill live"; });
}

async function getJSON(url) {
  const r = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r.json();
}

async function loadAudit() {
  try {
    const a = await getJSON("/api/audit");
    $("audit").textContent = JSON.stringify(a, null, 2);
  } catch (e) { $("audit").textContent = String(e.message); }
}

async function loadRuns() {
  try {
    const runs = await getJSON("/api/runs");
    const rows = (runs || []).slice(0, 50).map((r) => {
      const tr = el("tr");
      const link = el("a", "", "report");
      link.href = r.report_url;
      link.target = "_blank";
      link.rel = "noopener";
      const tdLink = el("td");
      tdLink.append(link);
      tr.append(el("td", "", new Date(r.started).toLocaleString()), el("td", "", r.status),
        el("td", "", r.task || ("session " + (r.session_id || ""))), el("td", "", r.steps), tdLink);
      tr.dataset.run = r.id;
      return tr;
    });
    $("runs").tBodies[0].replaceChildren(...rows);
  } catch (e) { /* shown on the next refresh */ }
}

async function loadCurrent() {
  try {
    const c = await getJSON("/api/current");
    if (c && typeof c === "object" && c.task && !$("task-text").textContent) $("task-text").textContent = c.task;
  } catch (e) { /* optional */ }
}

function setupStop() {
  const btn = $("stop");
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    try {
      const r = await fetch("/api/stop", { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: "{}" });
      const body = await r.json().catch(() => ({}));
      $("stop-result").textContent = r.ok ? "stop sent" : ("stop failed: " + (body.error || r.status));
    } finally {
      btn.disabled = false;
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  startScreen();
  startEvents();
  setupStop();
  loadAudit();
  loadRuns();
  loadCurrent();
  setInterval(loadAudit, 3000);
  setInterval(loadRuns, 10000);
});
