// guiagent dashboard, Settings panel: reads GET /api/settings and
// /api/displays, sends only the changed fields with PUT /api/settings. The
// API key is write-only: the page never receives it, only whether one is set.
// Untrusted text is only ever set with textContent.
"use strict";

(() => {
  const form = () => document.getElementById("settings-form");
  const status = () => document.getElementById("settings-status");
  const textFields = ["model", "base_url", "grounding_model", "memory_model"];
  const selectFields = ["provider", "display", "coordinate_mode", "adapter"];
  let loaded = null; // the settings as last read

  function option(value, label) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    return o;
  }

  function fillSelect(sel, values, current, defaultLabel) {
    sel.replaceChildren(option("", defaultLabel));
    for (const v of values) sel.append(typeof v === "string" ? option(v, v) : v);
    if (current && ![...sel.options].some((o) => o.value === current)) sel.append(option(current, current));
    sel.value = current || "";
  }

  function say(text, kind) {
    const s = status();
    s.textContent = text;
    s.className = kind || "";
  }

  async function load() {
    const [sr, dr] = await Promise.all([
      fetch("/api/settings", { credentials: "same-origin", cache: "no-store" }),
      fetch("/api/displays", { credentials: "same-origin", cache: "no-store" }),
    ]);
    if (!sr.ok) throw new Error("GET /api/settings: " + sr.status + " " + (await sr.text()));
    const s = await sr.json();
    const displays = dr.ok ? (await dr.json()).displays || [] : [];
    const f = form();
    for (const name of textFields) f.elements[name].value = s[name] || "";
    const ch = s.choices || {};
    fillSelect(f.elements.provider, ch.provider || [], s.provider, "(none)");
    fillSelect(f.elements.adapter, ch.adapter || [], s.adapter, "by provider and model");
    fillSelect(f.elements.coordinate_mode, ch.coordinate_mode || [], s.coordinate_mode, "by model");
    fillSelect(f.elements.display, displays.map((d) =>
      option(d.id, d.id + ": " + d.name + " " + d.width + "x" + d.height + (d.primary ? " (primary)" : ""))), s.display, "primary display");
    const key = f.elements.api_key;
    key.value = "";
    key.placeholder = s.api_key_set ? "set (type to replace)" : "not set";
    f.elements.clear_key.checked = false;
    f.elements.clear_key.disabled = !s.api_key_set;
    // A setting from a flag, the environment or the host program ranks above
    // this panel: show it, do not offer to change it.
    for (const name of [...textFields, ...selectFields, "api_key"]) {
      const input = f.elements[name];
      const src = (s.sources || {})[name] || "default";
      const locked = src === "flag" || src === "environment" || src === "Go options";
      input.disabled = locked;
      input.title = "source: " + src;
      const label = input.closest("label");
      label.querySelector(".locked")?.remove();
      if (locked) {
        const note = document.createElement("span");
        note.className = "locked";
        note.textContent = "set by the " + src;
        label.append(note);
      }
    }
    document.getElementById("settings-note").textContent = s.settings_file ? "saved in " + s.settings_file : "not saved: no settings file";
    loaded = s;
  }

  // changes returns the fields that differ from what was loaded.
  function changes() {
    const f = form();
    const out = {};
    for (const name of [...textFields, ...selectFields]) {
      const el = f.elements[name];
      if (!el.disabled && el.value.trim() !== (loaded[name] || "")) out[name] = el.value.trim();
    }
    if (f.elements.api_key.value !== "") out.api_key = f.elements.api_key.value;
    else if (f.elements.clear_key.checked) out.api_key = "";
    return out;
  }

  async function save(ev) {
    ev.preventDefault();
    const body = changes();
    if (Object.keys(body).length === 0) {
      say("nothing changed", "");
      return;
    }
    const btn = document.getElementById("settings-save");
    btn.disabled = true;
    say("saving…", "");
    try {
      const r = await fetch("/api/settings", {
        method: "PUT", credentials: "same-origin",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      const res = await r.json().catch(() => ({ error: "HTTP " + r.status }));
      if (!r.ok) {
        say(res.error || "HTTP " + r.status, "error");
        return;
      }
      await load();
      say("Saved: the next task uses these settings.", "ok");
    } catch (e) {
      say("saving failed: " + e.message, "error");
    } finally {
      btn.disabled = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    form().addEventListener("submit", save);
    load().catch((e) => say("settings unavailable: " + e.message, "error"));
  });
})();
