// swaycam control panel: a client of the service's JSON API (README, "Control service").
// Every change is a same-origin fetch() with Content-Type: application/json; no form posts.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { hair: null, touched: {}, exprNames: [], keys: {}, mode: "toggle", fade: 150, on: {} };

function say(text, error = false) {
  const m = $("message");
  m.textContent = text || "";
  m.classList.toggle("error", !!error);
}

async function api(method, path, body) {
  const opts = { method, headers: { "Accept": "application/json" }, cache: "no-store" };
  if (method !== "GET") {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body || {});
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    say(`${method} ${path}: the service does not answer`, true);
    return null;
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    say(`${method} ${path}: ${(data && data.error) || res.status}`, true);
    return null;
  }
  return data;
}

function fill(select, items, current, label = (x) => x) {
  select.replaceChildren(...items.map((v) => {
    const o = document.createElement("option");
    o.value = v; o.textContent = label(v); o.selected = v === current;
    return o;
  }));
}

// ---------------------------------------------------------------- status
function chip(id, text, cls) {
  const c = $(id); c.textContent = text;
  c.classList.remove("ok", "bad"); if (cls) c.classList.add(cls);
}
async function pollStatus() {
  const s = await api("GET", "/status");
  if (s) {
    chip("st-fps", s.fps == null ? "– fps" : `${s.fps.toFixed(1)} fps`);
    chip("st-latency", s.latency_ms_p50 == null ? "latency –" : `latency ${s.latency_ms_p50.toFixed(0)} ms`);
    chip("st-tracker", s.tracker_ms_p50 == null ? "tracker –" : `tracker ${s.tracker_ms_p50.toFixed(1)} ms`);
    chip("st-face", s.face_found ? "face found" : "no face", s.face_found ? "ok" : "bad");
    chip("st-substeps", s.substeps_per_frame == null ? "substeps –" : `${s.substeps_per_frame.toFixed(2)} substeps`);
    const q = s.quality;
    chip("st-quality", q == null ? "quality –" : q.active.length ? `quality: ${q.active.join(", ")}` + (q.pin !== "auto" ? " (pinned)" : "")
      : "quality full", q && q.active.length ? "bad" : null);
    document.body.dataset.solver = s.solver;
    // the server's truth: a change made elsewhere (a window key, another client, a hairstyle
    // fitted meanwhile) refreshes the pickers it touches
    const seen = state.seen || {};
    if (seen.avatar !== undefined && seen.avatar !== s.avatar) { loadAvatars(); loadHair(); loadExpressions(); }
    if (seen.hairstyle !== undefined && seen.hairstyle !== s.hairstyle) { loadHairstyles(); loadHair(); loadView(); }
    if (seen.solver !== undefined && seen.solver !== s.solver) loadHair();
    if ((seen.paused !== undefined && seen.paused !== s.paused) || (state.view && state.view.settle)) loadView();
    state.seen = { avatar: s.avatar, hairstyle: s.hairstyle, solver: s.solver, paused: s.paused };
  }
  setTimeout(pollStatus, 1000);
}

// ---------------------------------------------------------------- pickers
async function loadAvatars() {
  const a = await api("GET", "/avatars");
  if (!a) return;
  const sel = $("avatar");
  const items = a.avatars.slice();
  if (a.current == null) items.unshift("");
  fill(sel, items, a.current == null ? "" : a.current, (v) => v || (a.path ? a.path.split("/").pop() : "default"));
  sel.dataset.current = a.current == null ? "" : a.current;
  sel.disabled = !a.folder;
  sel.title = a.folder ? "" : "start with --avatar-dir to pick avatars";
}
async function loadHairstyles() {
  const h = await api("GET", "/hairstyles");
  const row = $("hairstyle-row");
  if (!h || !h.styles || !h.styles.length) { row.hidden = true; return; }
  row.hidden = false;
  fill($("hairstyle"), ["", ...h.styles], h.pending || h.current || "", (v) => v || "avatar's own hair");
  return h;
}
async function followHairstyle(name) {
  // until the server says the fit is done (or failed): the message follows its state
  for (let i = 0; i < 600; i++) {
    const h = await loadHairstyles();
    if (!h) return;
    if (!h.switching && !h.pending) {
      if (h.error && (h.current || "") !== (name || "")) say(`hairstyle: ${h.error}`, true);
      else say(h.current ? `hairstyle: ${h.current}` : "the avatar's own hair");
      loadHair();
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
async function loadClips() {
  const c = await api("GET", "/clips");
  const row = $("clip-row");
  if (!c || !c.motion) { row.hidden = true; return; }
  row.hidden = false;
  const items = c.clips.includes(c.playing) || c.playing == null ? c.clips : [c.playing, ...c.clips];
  fill($("clip"), items, c.playing);
}

// ---------------------------------------------------------------- hair
const SLIDERS = { k: "hair-k", c: "hair-c", gravity: "hair-gravity", hit_radius: "hair-hit" };
const mean = (a) => a.reduce((x, y) => x + y, 0) / Math.max(a.length, 1);
// k and c span decades: their sliders move log10 of the value
const LOG = { k: true, c: true };
const fmt = (key, v) => (v >= 100 ? v.toFixed(0) : v.toFixed(key === "k" ? 1 : 2));
function showSlider(key, v) {
  const el = $(SLIDERS[key]);
  const shown = key === "hit_radius" ? v * 1000 : v;
  el.value = LOG[key] ? Math.log10(Math.max(shown, 1e-3)) : shown;
  $(`${SLIDERS[key]}-out`).textContent = fmt(key, shown);
}
function currentSpringValues() {
  const springs = state.hair.springs; const names = Object.keys(springs);
  const pick = $("spring").value; const list = pick ? [springs[pick]] : names.map((n) => springs[n]);
  if (!list.length) return null;
  const all = (f) => mean(list.map((s) => mean(f(s))));
  return { k: all((s) => s.k), c: all((s) => s.c), gravity: all((s) => s.gravity.map((g) => Math.hypot(...g))),
           hit_radius: all((s) => s.hit_radius) };
}
async function loadHair() {
  const h = await api("GET", "/hair");
  if (!h) return;
  state.hair = h;
  showWind(h.params && h.params.wind);
  fill($("solver"), h.solvers, h.solver);
  const sel = $("spring"); const pick = sel.value;
  fill(sel, ["", ...Object.keys(h.springs)], pick, (v) => v || "all springs");
  refreshSliders();
}
function refreshSliders() {
  const v = currentSpringValues();
  for (const key of Object.keys(SLIDERS)) { $(SLIDERS[key]).disabled = !v; if (v) showSlider(key, v[key]); }
}
function sliderValue(key) {
  const raw = parseFloat($(SLIDERS[key]).value);
  const x = LOG[key] ? Number(Math.pow(10, raw).toPrecision(4)) : raw;
  if (key === "hit_radius") return x / 1000;
  if (key === "gravity") return [0, -x, 0];
  return x;
}
let hairTimer = null, hairBusy = false, hairAgain = false;
function hairTable() {
  const params = JSON.parse(JSON.stringify(state.hair.params || {}));
  const pick = $("spring").value;
  const target = pick ? ((params.springs = params.springs || {})[pick] = params.springs[pick] || {}) : params;
  for (const key of Object.keys(state.touched)) target[key] = sliderValue(key);
  if (pick) state.touched = {};
  return params;
}
async function sendHair() {
  if (hairBusy) { hairAgain = true; return; }
  hairBusy = true;
  const params = hairTable();
  const r = await api("POST", "/hair", { params });
  if (r) { state.hair.params = r.params; state.hair.springs = r.springs; say(r.warnings && r.warnings.length ? r.warnings.join("; ") : ""); }
  else await loadHair();               // refused: the sliders show what runs
  hairBusy = false;
  if (hairAgain) { hairAgain = false; sendHair(); }
}
function onSlider(key) {
  state.touched[key] = true;
  const v = sliderValue(key);
  const shown = key === "hit_radius" ? v * 1000 : key === "gravity" ? -v[1] : v;
  $(`${SLIDERS[key]}-out`).textContent = fmt(key, shown);
  clearTimeout(hairTimer);
  hairTimer = setTimeout(sendHair, 60);        // live while dragging, at most ~15 requests/s
}

// ---------------------------------------------------------------- wind (POST /wind)
function showWind(w) {
  if (!w) return;
  // the select shows where the wind comes from; the API takes where it blows to
  const from = (w.direction || [1, 0, 0]).map((x) => Math.round(-x) || 0).join(",");
  for (const o of $("wind-from").options) o.selected = o.value === from;
  $("wind-strength").value = w.strength || 0; $("wind-gusts").value = w.gusts || 0;
  $("wind-strength-out").textContent = Number(w.strength || 0).toFixed(1);
  $("wind-gusts-out").textContent = Number(w.gusts || 0).toFixed(2);
}
function windBody() {
  const from = $("wind-from").value.split(",").map(Number);
  return { direction: from.map((x) => -x || 0), strength: parseFloat($("wind-strength").value),
           gusts: parseFloat($("wind-gusts").value) };
}
let windTimer = null;
async function sendWind(body) {
  const r = await api("POST", "/wind", body);
  if (r) {
    showWind(r.wind);
    $("wind-now").textContent = r.now && r.now.length ? `now ${Math.hypot(...r.now).toFixed(1)} m/s` : "";
    if (state.hair && state.hair.params) state.hair.params.wind = r.wind;
  }
  return r;
}
function onWind() {
  $("wind-strength-out").textContent = Number($("wind-strength").value).toFixed(1);
  $("wind-gusts-out").textContent = Number($("wind-gusts").value).toFixed(2);
  clearTimeout(windTimer);
  windTimer = setTimeout(() => sendWind(windBody()), 80);   // eased in by the solver: never a jump
}

// ---------------------------------------------------------------- expressions
async function loadExpressions() {
  const e = await api("GET", "/expressions");
  if (!e) return;
  state.exprNames = e.expressions; state.keys = e.keys; state.mode = e.mode; state.fade = e.fade_ms;
  state.on = Object.fromEntries(Object.keys(e.triggered).map((n) => [n, true]));
  $("expr-mode").value = e.mode; $("expr-fade").value = e.fade_ms;
  const keyOf = Object.fromEntries(Object.entries(e.keys).map(([k, n]) => [n, k]));
  $("expressions").replaceChildren(...e.expressions.map((name) => {
    const b = document.createElement("button");
    b.type = "button"; b.dataset.expr = name;
    b.textContent = keyOf[name] ? `${name} · ${keyOf[name].toUpperCase()}` : name;
    b.classList.toggle("on", !!state.on[name]);
    b.addEventListener("click", () => { if (state.mode === "toggle") setExpr(name, !state.on[name]); });
    b.addEventListener("pointerdown", () => { if (state.mode === "hold") setExpr(name, true); });
    for (const ev of ["pointerup", "pointerleave", "pointercancel"]) {
      b.addEventListener(ev, () => { if (state.mode === "hold" && state.on[name]) setExpr(name, false); });
    }
    return b;
  }));
  $("hotkeys").replaceChildren(...e.expressions.flatMap((name) => {
    const l = document.createElement("span"); l.textContent = name;
    const i = document.createElement("input"); i.readOnly = true; i.value = keyOf[name] || ""; i.dataset.expr = name;
    i.setAttribute("aria-label", `hotkey of ${name}`);
    i.addEventListener("keydown", (ev) => {
      ev.preventDefault(); ev.stopPropagation();
      const keys = {}; for (const [k, n] of Object.entries(state.keys)) if (n !== name) keys[n] = k;
      if (ev.key !== "Delete" && ev.key !== "Backspace") keys[name] = keyName(ev);
      api("POST", "/hotkeys", { keys }).then((r) => { if (r) loadExpressions(); });
    });
    return [l, i];
  }));
}
async function setExpr(name, on) {
  state.on[name] = on;
  const b = document.querySelector(`#expressions button[data-expr="${CSS.escape(name)}"]`);
  if (b) b.classList.toggle("on", on);
  const r = await api("POST", "/expression", { name, weight: on ? 1 : 0, fade_ms: state.fade });
  if (!r) await loadExpressions();     // refused: the buttons show the server's state again
}
function keyName(ev) {
  if (ev.key === " ") return "space";
  return ev.key.length === 1 ? ev.key.toLowerCase() : ev.key.toLowerCase();
}
function typing(ev) {
  const t = ev.target;
  return t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA");
}
document.addEventListener("keydown", (ev) => {
  if (typing(ev) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const name = state.keys[keyName(ev)];
  if (!name) return;
  ev.preventDefault();
  if (ev.repeat) return;
  setExpr(name, state.mode === "hold" ? true : !state.on[name]);
});
document.addEventListener("keyup", (ev) => {
  const name = state.keys[keyName(ev)];
  if (name && state.mode === "hold" && !typing(ev)) { ev.preventDefault(); setExpr(name, false); }
});

// ---------------------------------------------------------------- calibration
async function calibrate(phase) {
  const r = await api("POST", "/calibrate", { phase });
  if (!r) return;
  if (r.calibration) {
    say("calibration in use (not saved)");
    $("cal-status").textContent = "ranges: " + Object.entries(r.calibration).map(([k, v]) => `${k} ${v[0]}–${v[1]}`).join(", ");
  } else {
    const f = r.frames || {};
    $("cal-status").textContent = (r.phase ? `collecting "${r.phase}"… ` : "") +
      `frames: neutral ${f.neutral || 0}, blink ${f.blink || 0}, mouth ${f.mouth || 0}`;
  }
}

async function voiceTake(vowel) {
  const r = await api("POST", "/calibrate/voice", { vowel });
  if (!r) return;
  $("voice-status").textContent = `recording "${vowel}"…`;
  setTimeout(async () => {
    const s = await api("POST", "/calibrate/voice", { vowel: "cancel" });
    if (s) $("voice-status").textContent = "windows: " + Object.entries(s.windows).map(([k, n]) => `${k} ${n}`).join(", ");
  }, 2000);
}

async function voiceApply() {
  const r = await api("POST", "/calibrate/voice", { vowel: "apply" });
  if (r) { say("voice profile in use and saved"); $("voice-status").textContent = `saved to ${r.voice_profile}`; }
}

// ---------------------------------------------------------------- outputs
async function loadOutputs() {
  const o = await api("GET", "/outputs");
  if (!o) return;
  state.outputs = o;
  const bg = o.background.toLowerCase();
  const kind = bg === "transparent" ? "transparent" : (bg === "green" || bg === "chroma") ? "green" : "colour";
  document.querySelector(`input[name=bg][value=${kind}]`).checked = true;
  if (kind === "colour" && /^#?[0-9a-f]{6}$/.test(bg)) $("bg-colour").value = bg.startsWith("#") ? bg : `#${bg}`;
  $("outputs").textContent = `outputs: ${o.outputs.join(", ") || "none"}`;
  showOutputs(o);
}
function showOutputs(o) {
  $("vcam").checked = o.vcam.on;
  $("vcam").disabled = o.vcam.on && !o.vcam.panel;          // a --output vcam stays on
  const rec = [];
  for (const kind of ["video", "poses"]) {
    const r = o.recording[kind];
    const b = $(kind === "video" ? "rec-video" : "rec-poses");
    b.textContent = `${r ? "Stop" : "Record"} ${kind === "video" ? "video" : "pose track"}`;
    b.classList.toggle("on", !!r);
    if (r) rec.push(`recording ${kind} → ${r.path}`);
  }
  $("recording").textContent = rec.join("; ") || `recordings go to ${o.record_dir}`;
}
async function setVcam() {
  const r = await api("POST", "/vcam", { on: $("vcam").checked });
  if (r) say(r.vcam.on ? `virtual camera on (${r.vcam.device || "?"})` : "virtual camera off");
  await loadOutputs();                 // the server's state, success or error
}
async function toggleRecording(kind) {
  const o = await api("GET", "/outputs");
  if (!o) return;
  const r = await api("POST", "/record", { kind, on: !o.recording[kind] });
  if (r) {
    if (r.stopped) say(`saved ${r.stopped.frames} frames to ${r.stopped.path}`);
    else say(`recording ${kind} → ${r.recording[kind].path}`);
  }
  await loadOutputs();
}
async function setBackground() {
  const kind = document.querySelector("input[name=bg]:checked").value;
  const r = await api("POST", "/background", { background: kind === "colour" ? $("bg-colour").value : kind });
  if (r) say("");
  await loadOutputs();                 // a refused background (409) puts the radio back
}

// ---------------------------------------------------------------- wiring
// ---------------------------------------------------------------- view and playback
const STATES = ["attached", "joined", "rejected"];
function showView(v) {
  if (!v) return;
  state.view = v;
  $("framing").value = v.framing;
  $("inspect").value = v.inspect;
  $("roots").checked = v.roots;
  $("chain").value = v.chain;
  $("chain-row").hidden = v.inspect !== "weights";
  $("follow").checked = v.follow;
  $("compare").checked = v.compare;
  $("pause").textContent = v.paused ? "Resume" : "Pause";
  $("step").disabled = !v.paused;
  const g = v.guides;
  $("inspect").disabled = !g; $("roots").disabled = !g;
  $("guides-download").hidden = !g;
  $("guides-note").textContent = g
    ? `${g.candidates} guides: ${STATES.map((s) => `${g[s]} ${s}`).join(", ")} (cyan attached to the scalp, green joined, orange rejected)`
    : "the avatar's own hair: pick a hairstyle to inspect its guides";
  const st = v.settle;
  const settle = !st ? "" : st.phase === "moving" ? ` · moving ${st.clip_s.toFixed(1)} s`
    : st.phase === "settling" ? " · settling…" : ` · settled in ${st.settle_s.toFixed(2)} s`;
  const last = st && st.last_2s_mm != null ? ` (last 2 s: ${st.last_2s_mm.toFixed(3)} mm)` : "";
  $("playback-note").textContent = (v.compare ? `left ${v.solvers[0]}, right ${v.solvers[1]}` : `solver ${v.solvers[0]}`)
    + settle + last;
  document.body.dataset.yaw = String(v.orbit.yaw);
}
async function loadView() { showView(await api("GET", "/view")); }
async function setView(change) { showView(await api("POST", "/view", change)); }
async function playback(change) { showView(await api("POST", "/playback", change)); }

// drags on the preview orbit the view (pan with shift or the right button); one request in
// flight at a time, the moves in between are added up
const drag = { on: false, x: 0, y: 0, dx: 0, dy: 0, pan: false, busy: false, notches: 0 };
// touch: one finger orbits, two pinch (zoom: 1.1x per notch, as the wheel)
const touches = new Map();
let pinch = 0;
const spread = () => { const p = [...touches.values()]; return Math.hypot(p[0].x - p[1].x, p[0].y - p[1].y); };
async function flushDrag() {
  if (drag.busy || (drag.dx === 0 && drag.dy === 0 && Math.abs(drag.notches) < 0.05)) return;
  const d = [drag.dx, drag.dy], pan = drag.pan, notches = drag.notches;
  drag.dx = 0; drag.dy = 0; drag.notches = 0; drag.busy = true;
  const body = { height: $("preview").clientHeight || 270 };
  if (d[0] || d[1]) body[pan ? "pan" : "drag"] = d;
  if (Math.abs(notches) >= 0.05) body.wheel = Math.max(-100, Math.min(100, notches));
  await setView(body);
  drag.busy = false;
  flushDrag();
}
function wirePreview() {
  const img = $("preview");
  img.draggable = false;
  img.addEventListener("pointerdown", (ev) => {
    touches.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (touches.size === 2) { drag.on = false; pinch = spread(); }
    else { drag.on = true; drag.x = ev.clientX; drag.y = ev.clientY; drag.pan = ev.shiftKey || ev.button === 2; }
    img.setPointerCapture(ev.pointerId); ev.preventDefault();
  });
  img.addEventListener("pointermove", (ev) => {
    if (touches.has(ev.pointerId)) touches.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (touches.size === 2 && pinch > 0) {
      const s = spread();
      drag.notches += Math.log(s / pinch) / Math.log(1.1); pinch = s;
      flushDrag();
      return;
    }
    if (!drag.on) return;
    drag.dx += ev.clientX - drag.x; drag.dy += ev.clientY - drag.y;
    drag.x = ev.clientX; drag.y = ev.clientY;
    flushDrag();
  });
  const end = (ev) => { touches.delete(ev.pointerId); if (touches.size < 2) pinch = 0; drag.on = false; flushDrag(); };
  img.addEventListener("pointerup", end);
  img.addEventListener("pointercancel", end);
  img.addEventListener("contextmenu", (ev) => ev.preventDefault());
  img.addEventListener("wheel", (ev) => { ev.preventDefault(); setView({ wheel: ev.deltaY < 0 ? 1 : -1 }); },
                       { passive: false });
}

function wire() {
  wirePreview();
  $("framing").addEventListener("change", (ev) => setView({ framing: ev.target.value }));
  $("inspect").addEventListener("change", (ev) => setView({ inspect: ev.target.value }));
  $("roots").addEventListener("change", (ev) => setView({ roots: ev.target.checked }));
  $("chain").addEventListener("change", (ev) => setView({ chain: Math.max(0, Math.round(Number(ev.target.value) || 0)) }));
  $("follow").addEventListener("change", (ev) => setView({ follow: ev.target.checked }));
  $("view-reset").addEventListener("click", () => setView({ reset: true }));
  $("pause").addEventListener("click", () => playback({ paused: !(state.view && state.view.paused) }));
  $("step").addEventListener("click", () => playback({ steps: 1 }));
  $("restart").addEventListener("click", async () => { await playback({ restart: true }); say("clip restarted"); });
  $("compare").addEventListener("change", (ev) => playback({ compare: ev.target.checked }));
  for (const b of document.querySelectorAll("[data-clip]")) b.addEventListener("click", async () => {
    const r = await api("POST", "/motion", { clip: b.dataset.clip });
    if (r) say(`playing ${r.playing}`);
    await Promise.all([loadClips(), loadView()]);
  });
  $("avatar").addEventListener("change", async (ev) => {
    if (!ev.target.value) return;
    say("loading avatar…");
    const r = await api("POST", "/avatar", { path: ev.target.value });
    if (r) say(`avatar: ${r.avatar.split("/").pop()}`);
    await Promise.all([loadHair(), loadExpressions(), loadAvatars(), loadHairstyles()]);
    if (r && r.hairstyle_pending) followHairstyle(r.hairstyle_pending);
  });
  $("hairstyle").addEventListener("change", async (ev) => {
    const name = ev.target.value || null;
    const r = await api("POST", "/hairstyle", { name, wait: false });
    if (r) { say(name ? `fitting ${name}…` : "back to the avatar's own hair"); followHairstyle(name); }
    else loadHairstyles();
  });
  $("clip").addEventListener("change", async (ev) => {
    const r = await api("POST", "/motion", { clip: ev.target.value });
    if (r) say(`playing ${r.playing}`);
    await loadClips();
  });
  $("solver").addEventListener("change", async (ev) => {
    await api("POST", "/hair", { solver: ev.target.value });
    await loadHair();
  });
  $("spring").addEventListener("change", () => { state.touched = {}; refreshSliders(); });
  for (const id of ["wind-from", "wind-strength", "wind-gusts"]) $(id).addEventListener("input", onWind);
  $("wind-from").addEventListener("change", onWind);
  $("wind-calm").addEventListener("click", () => { $("wind-strength").value = 0; onWind(); });
  $("hair-flip").addEventListener("click", async () => {
    if (await sendWind({ impulse: [0, 2.5, -1.5] })) say("hair flip");
  });
  for (const key of Object.keys(SLIDERS)) $(SLIDERS[key]).addEventListener("input", () => onSlider(key));
  $("hair-reset").addEventListener("click", async () => {
    state.touched = {};
    const r = await api("POST", "/hair", { params: {} });
    if (r) say("the avatar's own hair values (not saved)");
    await loadHair();
  });
  $("save").addEventListener("click", async () => {
    const r = await api("POST", "/config/save", {});
    if (r) say(`saved to ${r.path}`);
  });
  $("expr-mode").addEventListener("change", async (ev) => {
    const r = await api("POST", "/hotkeys", { mode: ev.target.value });
    if (r) state.mode = r.mode;
  });
  $("expr-fade").addEventListener("change", async (ev) => {
    const r = await api("POST", "/hotkeys", { fade_ms: Number(ev.target.value) });
    if (r) state.fade = r.fade_ms;
  });
  $("recenter").addEventListener("click", async () => { if (await api("POST", "/recenter", {})) say("recentered"); });
  for (const b of document.querySelectorAll("[data-phase]")) b.addEventListener("click", () => calibrate(b.dataset.phase));
  $("cal-apply").addEventListener("click", () => calibrate("apply"));
  $("cal-cancel").addEventListener("click", () => calibrate("cancel"));
  for (const b of document.querySelectorAll("[data-vowel]")) b.addEventListener("click", () => voiceTake(b.dataset.vowel));
  $("voice-apply").addEventListener("click", voiceApply);
  for (const r of document.querySelectorAll("input[name=bg]")) r.addEventListener("change", setBackground);
  $("vcam").addEventListener("change", setVcam);
  $("rec-video").addEventListener("click", () => toggleRecording("video"));
  $("rec-poses").addEventListener("click", () => toggleRecording("poses"));
  $("bg-colour").addEventListener("change", () => {
    document.querySelector("input[name=bg][value=colour]").checked = true; setBackground();
  });
}

async function main() {
  wire();
  $("preview").src = "/preview.mjpg";
  await Promise.all([loadAvatars(), loadHairstyles(), loadClips(), loadHair(), loadExpressions(), loadOutputs(),
                     loadView()]);
  document.body.dataset.ready = "1";
  pollStatus();
}
main();
