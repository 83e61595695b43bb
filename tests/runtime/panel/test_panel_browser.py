"""The control panel in a real headless Chromium (Debian's chromium + chromium-driver, driven by
selenium; nothing is downloaded) against a running ``swaycam run --service`` on a pose track:
pickers, background, the stiffness slider changing the running hair in place, an expression in
the next frame's pixels, save to config and reload, no console errors, no horizontal overflow
at 390 px, and a page of another origin that cannot drive the service."""

from __future__ import annotations

import http.client
import http.server
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from avatars.assets import asset_path

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)),
    reason="needs Debian's chromium and chromium-driver (installed by .ci/system-deps.sh)")]
selenium = pytest.importorskip("selenium", reason="needs selenium (pyproject dev extra)")

ROOT = Path(__file__).resolve().parents[3]
#: Phone width the layout must fit without horizontal scrolling, CSS pixels.
PHONE_WIDTH = 390
#: Pixels that differ between two frames of a still scene (head, body and hair at rest).
STILL_CHANGED_MAX = 0
#: Pixels an expression (happy: eyes closed, mouth) must change at least, at 640x360.
EXPRESSION_CHANGED_MIN = 150
#: The lowered stiffness must move the settled hair tips at least this far within 2 s, metres.
SAG_MIN_M = 0.005
#: Stiffness the slider is moved to, 1/s² (log slider: 10**1.3 = 19.95 -> 19.95 at 4 digits).
K_SLIDER = 1.3
K_EXPECTED = 19.95
#: A tail moves at most this far per 120 Hz substep (0.24 m/s) in the idle sway; a reset to the
#: rest arc would jump by the whole lag at once.
MAX_TAIL_STEP_M = 0.002


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = None if body is None else json.dumps(body)
    hdrs = {"Content-Type": "application/json"} if body is not None else {}
    hdrs.update(headers or {})
    c.request(method, path, body=data, headers=hdrs)
    r = c.getresponse()
    raw = r.read()
    c.close()
    ctype = r.getheader("Content-Type") or ""
    return r.status, (json.loads(raw) if ctype.startswith("application/json") else raw)


def frame(port) -> np.ndarray:
    from PIL import Image

    status, png = request(port, "GET", "/frame.png")
    assert status == 200
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def frames_after(port, n=2):
    """Wait until ``n`` more frames are drawn."""
    f0 = request(port, "GET", "/status")[1]["frames"]
    deadline = time.monotonic() + 20
    while request(port, "GET", "/status")[1]["frames"] < f0 + n:
        assert time.monotonic() < deadline, "the run stopped drawing frames"
        time.sleep(0.05)


def still_track(path: Path, seconds: float = 900.0, rate_hz: int = 10) -> None:
    from tracking.track_io import PoseTrackWriter

    with PoseTrackWriter(path) as w:
        for i in range(int(seconds * rate_hz)):
            w.write(i * 10**9 // rate_hz, [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0], {}, 1.0, True)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``swaycam run --service`` on a still pose track (the body at rest), its port, config file."""
    tmp = tmp_path_factory.mktemp("panel")
    avatars = tmp / "avatars"
    avatars.mkdir()
    shutil.copy(asset_path("vrm", "Godette_vrm_v4.vrm"), avatars / "godette.vrm")
    track = tmp / "still.jsonl"
    still_track(track)
    cfg = tmp / "swaycam.toml"
    cfg.write_text('fps = 15\n\n[drive]\nneck_share = 0.35\n')
    cmd = [sys.executable, "-m", "runtime.cli", "run", "--service", "--port", "0", "--config", str(cfg),
           "--source", str(track), "--realtime", "--duration", "900", "--motion", "rest", "--size", "640x360",
           "--avatar-dir", str(avatars), "--output", f"video:{tmp / 'out.mp4'}", "--hair-dir", str(tmp)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port, lines = None, []
    deadline = time.monotonic() + 600
    while port is None:
        line = proc.stdout.readline()
        if not line:
            pytest.fail("swaycam run ended before serving:\n" + "".join(lines))
        lines.append(line)
        m = re.search(r"control panel: http://127\.0\.0\.1:(\d+)/", line)
        if m:
            port = int(m.group(1))
        assert time.monotonic() < deadline
    threading.Thread(target=proc.stdout.read, daemon=True).start()     # keep the pipe drained
    frames_after(port, 3)
    yield port, cfg, tmp
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1366,900",
              "--disable-background-networking", "--no-first-run", "--disable-extensions"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    d.set_page_load_timeout(60)
    yield d
    d.quit()


def open_panel(d, port):
    d.get(f"http://127.0.0.1:{port}/")
    wait_for(lambda: d.execute_script("return document.body.dataset.ready === '1'"), "the panel to load")


def wait_for(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def severe(d) -> list:
    return [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def hair(port, tails=False):
    return request(port, "GET", "/hair?tails=1" if tails else "/hair")[1]


def test_panel_drives_the_run(run, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    port, cfg, tmp = run
    d = browser
    open_panel(d, port)
    # the preview streams (MJPEG): the image has decoded frames of the output's aspect
    wait_for(lambda: d.execute_script("const i = document.getElementById('preview');"
                                      "return i.complete && i.naturalWidth > 0"), "the preview")
    w, h = d.execute_script("const i = document.getElementById('preview'); return [i.naturalWidth, i.naturalHeight]")
    assert (w, h) == (480, 270)                               # PREVIEW_WIDTH, the output aspect
    wait_for(lambda: "fps" in d.find_element(By.ID, "st-fps").text and "–" not in d.find_element(By.ID, "st-fps").text,
             "the fps chip")
    assert d.find_element(By.ID, "st-face").text == "face found"

    def quality_shown():          # the chip says what /status says (the governor may step meanwhile)
        q = request(port, "GET", "/status")[1]["quality"]
        want = "quality: " + ", ".join(q["active"]) if q["active"] else "quality full"
        return d.find_element(By.ID, "st-quality").text == want
    wait_for(quality_shown, "the quality chip")

    # --- an expression shows in the next frames' pixels (still scene: identical frames before)
    a, b = frame(port), (frames_after(port), frame(port))[1]
    assert int((np.abs(a - b).sum(axis=2) > 0).sum()) <= STILL_CHANGED_MAX
    d.execute_script("document.getElementById('expr-fade').value = 0;"
                     "document.getElementById('expr-fade').dispatchEvent(new Event('change'))")
    wait_for(lambda: request(port, "GET", "/expressions")[1]["fade_ms"] == 0, "fade 0")
    d.find_element(By.CSS_SELECTOR, "#expressions button[data-expr='happy']").click()
    wait_for(lambda: request(port, "GET", "/expressions")[1]["triggered"] == {"happy": 1.0}, "happy on")
    frames_after(port, 2)
    c = frame(port)
    assert int((np.abs(c - b).sum(axis=2) > 0).sum()) >= EXPRESSION_CHANGED_MIN
    assert "on" in d.find_element(By.CSS_SELECTOR, "#expressions button[data-expr='happy']").get_attribute("class")
    d.find_element(By.CSS_SELECTOR, "#expressions button[data-expr='happy']").click()       # toggle off
    wait_for(lambda: request(port, "GET", "/expressions")[1]["triggered"] == {}, "happy off")
    frames_after(port, 2)
    assert int((np.abs(frame(port) - b).sum(axis=2) > 0).sum()) <= STILL_CHANGED_MAX

    # --- the body clip picker: the idle sways the body, so the hair moves
    Select(d.find_element(By.ID, "clip")).select_by_value("idle")
    wait_for(lambda: request(port, "GET", "/motion")[1]["playing"] == "idle", "the idle clip")
    time.sleep(1.0)

    # --- the stiffness slider: /status and the hair change, in place (no reset, tails continuous)
    def deviation(seconds):
        """Samples of GET /hair over ``seconds``: (tails, max distance of a tail from its rest arc)."""
        out = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            hh = hair(port, tails=True)
            assert hh["resets"] == 0
            t, r = np.array(hh["tails"]), np.array(hh["rest_tails"])
            out.append((hh["steps"], t, float(np.linalg.norm(t - r, axis=1).max())))
        return out

    stiff = deviation(1.5)
    d.execute_script("const s = document.getElementById('hair-k'); s.value = arguments[0];"
                     "s.dispatchEvent(new Event('input'))", K_SLIDER)
    wait_for(lambda: request(port, "GET", "/status")[1]["hair_params"].get("k") == K_EXPECTED, "k in /status")
    after = hair(port)
    assert all(v["k"] == [K_EXPECTED] * len(v["k"]) for v in after["springs"].values())
    soft = deviation(2.5)
    steps = [s[0] for s in stiff + soft]
    assert steps == sorted(steps)                             # one chain set stepping on, never restarted
    dev_stiff, dev_soft = max(s[2] for s in stiff), max(s[2] for s in soft)
    print("deviation from the rest arc: stiff", dev_stiff, "soft", dev_soft)
    assert dev_soft >= dev_stiff + SAG_MIN_M                  # the softer hair lags the swaying body: it changed
    # continuous: between two samples a tail moves no farther than between two samples before the change
    jumps = [np.abs(b[1] - a[1]).max() / max(b[0] - a[0], 1) for a, b in zip(stiff + soft, (stiff + soft)[1:])]
    first = np.abs(soft[0][1] - stiff[-1][1]).max()
    print("tail move per substep: max", max(jumps), "across the change", first)
    assert first <= MAX_TAIL_STEP_M * (soft[0][0] - stiff[-1][0])
    assert d.find_element(By.ID, "hair-k-out").text in ("19.9", "20.0")

    # --- save to config; the file loads through --config with the same [hair]; a reload shows it
    d.find_element(By.ID, "save").click()
    wait_for(lambda: "saved to" in d.find_element(By.ID, "message").text, "the save")
    from runtime.config import load_toml

    saved = load_toml(cfg)
    assert saved.hair == {"k": K_EXPECTED} and saved.fps == 15 and saved.drive == {"neck_share": 0.35}
    d.refresh()
    open_panel(d, port)
    assert d.find_element(By.ID, "hair-k-out").text in ("19.9", "20.0")

    # --- solver, background, avatar pickers
    Select(d.find_element(By.ID, "solver")).select_by_value("legacy")
    wait_for(lambda: request(port, "GET", "/status")[1]["solver"] == "legacy", "the legacy solver")
    assert hair(port)["resets"] == 0                          # a solver switch carries the motion on
    d.find_element(By.CSS_SELECTOR, "input[name=bg][value=green]").click()
    wait_for(lambda: request(port, "GET", "/outputs")[1]["background"] == "green", "the green background")
    frames_after(port, 2)
    assert frame(port)[2, 2].tolist() == [0, 255, 0]
    Select(d.find_element(By.ID, "avatar")).select_by_value("godette.vrm")
    wait_for(lambda: str(request(port, "GET", "/status")[1]["avatar"]).endswith("godette.vrm"), "Godette", 120)
    wait_for(lambda: "happy" not in d.find_element(By.ID, "expressions").text
             or "godette" in d.find_element(By.ID, "message").text, "the expressions of the new avatar")
    assert severe(d) == []


def test_phone_width_has_no_horizontal_overflow(run, browser):
    d = browser
    port = run[0]
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": PHONE_WIDTH, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        open_panel(d, port)
        sw, cw = d.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert cw == PHONE_WIDTH and sw <= cw
        wide = d.execute_script("return [...document.querySelectorAll('body *')].filter(e => "
                                "e.getBoundingClientRect().right > innerWidth + 0.5).map(e => e.id || e.tagName)")
        assert wide == []
        out = os.environ.get("SWAYCAM_PANEL_SCREENSHOTS")
        if out:
            h = d.execute_script("return document.documentElement.scrollHeight")
            d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                              {"width": PHONE_WIDTH, "height": h, "deviceScaleFactor": 1, "mobile": True})
            time.sleep(1.5)
            d.save_screenshot(str(Path(out) / "panel-phone.png"))
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    out = os.environ.get("SWAYCAM_PANEL_SCREENSHOTS")
    if out:
        d.set_window_size(1366, 900)
        open_panel(d, port)
        time.sleep(1.5)
        d.save_screenshot(str(Path(out) / "panel-desktop.png"))
    assert severe(d) == []


def test_a_page_of_another_origin_cannot_drive_the_service(run, browser):
    port = run[0]
    d = browser
    solver0 = request(port, "GET", "/status")[1]["solver"]
    other = "vrm" if solver0 != "vrm" else "rest-shape"
    page = f"""<!doctype html><html><body><form id=f method=post action="http://127.0.0.1:{port}/hair"
      enctype="text/plain" target=sink><input name='{{"solver":"{other}","x":"' value='"}}'></form>
      <iframe name=sink></iframe><script>
      const u = "http://127.0.0.1:{port}";
      window.results = [];
      const body = JSON.stringify({{solver: "{other}"}});
      Promise.allSettled([
        fetch(u + "/hair", {{method: "POST", headers: {{"Content-Type": "application/json"}}, body}}),
        fetch(u + "/hair", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}, body}}),
        fetch(u + "/status"),
      ]).then(r => {{ window.results = r.map(x => x.status + ":" + (x.value ? x.value.type + x.value.status : ""));
                     document.getElementById("f").submit(); window.done = true; }});
      </script></body></html>"""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            b = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        d.get(f"http://127.0.0.1:{srv.server_address[1]}/")
        wait_for(lambda: d.execute_script("return window.done === true"), "the other page's requests")
        time.sleep(1.5)                                    # the form post lands in the iframe
        results = d.execute_script("return window.results")
    finally:
        srv.shutdown()
        srv.server_close()
    # the JSON fetch fails its preflight; the opaque no-cors one and the form post are refused (403)
    assert results[0] == "rejected:" and results[1] == "fulfilled:opaque0" and results[2] == "rejected:"
    assert request(port, "GET", "/status")[1]["solver"] == solver0
    d.get_log("browser")                                   # that page's CORS errors are expected: drop them
    st, body = request(port, "POST", "/hair", {"solver": other}, headers={"Origin": f"http://127.0.0.1:{port + 1}"})
    assert st == 403 and "Origin" in body["error"]
    st, body = request(port, "GET", "/status", headers={"Host": "evil.example:80"})
    assert st == 403 and "Host" in body["error"]


#: The Wind card's strength slider is moved to this, m/s.
WIND_SLIDER = 12.0
#: A 12 m/s wind moves the settled hair tips at least this far from their rest arc, metres.
WIND_MOVE_MIN_M = 0.005


def test_the_wind_card_blows_the_hair_and_flips_it(run, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    port = run[0]
    d = browser
    open_panel(d, port)

    def off_rest():
        hh = hair(port, tails=True)
        return float(np.linalg.norm(np.array(hh["tails"]) - np.array(hh["rest_tails"]), axis=1).max())

    Select(d.find_element(By.ID, "clip")).select_by_value("rest")
    wait_for(lambda: request(port, "GET", "/motion")[1]["playing"] == "rest", "the body at rest")
    time.sleep(2.0)
    calm = off_rest()
    Select(d.find_element(By.ID, "wind-from")).select_by_value("0,0,-1")          # from the front
    d.execute_script("const s = document.getElementById('wind-strength'); s.value = arguments[0];"
                     "s.dispatchEvent(new Event('input'))", WIND_SLIDER)
    wait_for(lambda: (request(port, "GET", "/status")[1]["hair_params"].get("wind") or {}).get("strength")
             == WIND_SLIDER, "the wind in /status")
    wind = request(port, "GET", "/status")[1]["hair_params"]["wind"]
    assert wind["direction"] == [0.0, 0.0, 1.0]                 # blowing from the front toward the back
    assert d.find_element(By.ID, "wind-strength-out").text == "12.0"
    time.sleep(2.0)
    blown = off_rest()
    print("tips off their rest arc: calm", calm, "in the wind", blown)
    assert blown >= calm + WIND_MOVE_MIN_M
    d.find_element(By.ID, "hair-flip").click()
    wait_for(lambda: "hair flip" in d.find_element(By.ID, "message").text, "the hair flip")
    d.find_element(By.ID, "wind-calm").click()
    wait_for(lambda: request(port, "GET", "/status")[1]["hair_params"]["wind"]["strength"] == 0.0, "calm")
    assert severe(d) == []
