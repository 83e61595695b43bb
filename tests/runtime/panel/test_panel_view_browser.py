"""The panel's View and Playback cards in a real headless Chromium (Debian's chromium +
chromium-driver through selenium, as tests/runtime/panel/test_panel_browser.py) against
``swaycam run --service --hair short02`` on a still pose track: a mouse drag on the preview
orbits the preview (its pixels change, GET /view says by how much) and not the video output
(the stream: every frame of it stays the front view), the inspection picker draws the cyan
guides, the guide download link serves the schema's JSON, pause and compare from the page."""

from __future__ import annotations

import io
import json
import re
import signal
import subprocess
import sys
import threading
import time

import jsonschema
import numpy as np
import pytest

from tests.runtime.panel.test_panel_browser import (CHROMIUM, DRIVER, ROOT, frames_after, open_panel, request,  # noqa: F401
                                                   severe, still_track, wait_for)
from tests.runtime.panel.test_panel_browser import browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow]
selenium = pytest.importorskip("selenium", reason="needs selenium (pyproject dev extra)")


def jpeg(port) -> np.ndarray:
    from PIL import Image

    status, data = request(port, "GET", "/preview.jpg")
    assert status == 200
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)


def png(port) -> np.ndarray:
    from PIL import Image

    status, data = request(port, "GET", "/frame.png")
    assert status == 200
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)


def cyan(rgb) -> int:
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return int(((r < 90) & (g > 150) & (b > 190)).sum())


def changed(a, b, level=40) -> float:
    return float((np.abs(a - b).max(-1) > level).mean())


@pytest.fixture()
def run(tmp_path):
    track = tmp_path / "still.jsonl"
    still_track(track, seconds=600)
    out = tmp_path / "stream.mp4"
    cmd = [sys.executable, "-m", "runtime.cli", "run", "--service", "--port", "0", "--source", str(track),
           "--realtime", "--fps", "15", "--duration", "600", "--motion", "rest", "--size", "480x270",
           "--hair", "short02", "--output", f"video:{out}"]
    env = {**__import__("os").environ, "SWAYCAM_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
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
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    frames_after(port, 3)

    def stop():
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    yield port, out, stop
    stop()


def test_a_drag_on_the_preview_orbits_the_preview_and_not_the_stream(run, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from avatars.tryon.guide_export import SCHEMA_PATH
    from tests.runtime.test_run_e2e import read_video

    port, out, stop = run
    d = browser
    open_panel(d, port)
    wait_for(lambda: d.execute_script("const i = document.getElementById('preview');"
                                      "return i.complete && i.naturalWidth > 0"), "the preview")
    wait_for(lambda: "18 guides: 18 attached, 0 joined, 0 rejected" in d.find_element(By.ID, "guides-note").text,
             "the guide counts")
    # --- inspection first: guides only, from the picker (drawn into every output, as the overlays)
    Select(d.find_element(By.ID, "inspect")).select_by_value("guides")
    wait_for(lambda: request(port, "GET", "/view")[1]["inspect"] == "guides", "the guides view")
    frames_after(port, 3)
    assert cyan(png(port)) > 50
    href = d.find_element(By.ID, "guides-download").get_attribute("href")
    assert href.endswith("/hairstyle/guides") and d.find_element(By.ID, "guides-download").is_displayed()
    status, doc = request(port, "GET", "/hairstyle/guides")
    jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text())).validate(doc)
    assert status == 200 and doc["counts"]["attached"] == 18
    time.sleep(0.5)                                   # the preview's period (10 fps) and its encoder
    front = jpeg(port)
    # --- a drag of 120 CSS pixels to the right on the preview, then the hair close-up framing
    img = d.find_element(By.ID, "preview")
    h = d.execute_script("return document.getElementById('preview').clientHeight")
    ActionChains(d).move_to_element(img).click_and_hold().move_by_offset(60, 0).move_by_offset(60, 0).release().perform()
    wait_for(lambda: abs(request(port, "GET", "/view")[1]["orbit"]["yaw"] + 120 * 0.005 * 270 / h) < 1e-9,
             "the orbit of the drag")
    assert request(port, "GET", "/view")[1]["follow"] is False
    frames_after(port, 4)
    time.sleep(0.5)
    turned = jpeg(port)
    assert changed(turned, front) > 0.03              # the preview shows the turned view
    Select(d.find_element(By.ID, "framing")).select_by_value("hair")
    wait_for(lambda: request(port, "GET", "/view")[1]["framing"] == "hair", "the hair close-up")
    assert request(port, "GET", "/view")[1]["orbit"]["yaw"] == 0.0           # a framing resets the orbit
    frames_after(port, 4)
    time.sleep(0.5)
    assert changed(jpeg(port), front) > 0.03
    # --- a pinch (two touches spreading from 40 to 121 px apart: 1.1^(ln(121/40)/ln(1.1)) = 3.025x)
    zoom0 = request(port, "GET", "/view")[1]["orbit"]["zoom"]
    box = d.execute_script("const r = document.getElementById('preview').getBoundingClientRect();"
                           "return [r.left + r.width / 2, r.top + r.height / 2]")
    cx, cy = box

    def touch(kind, spread):
        pts = [] if kind == "touchEnd" else [{"x": cx - spread / 2, "y": cy, "id": 1}, {"x": cx + spread / 2, "y": cy, "id": 2}]
        d.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": pts})

    touch("touchStart", 40)
    for sp in (60, 80, 100, 121):
        touch("touchMove", sp)
        time.sleep(0.05)
    touch("touchEnd", 0)
    wait_for(lambda: abs(request(port, "GET", "/view")[1]["orbit"]["zoom"] / zoom0 - 121 / 40) < 1e-6, "the pinch zoom")
    # --- pause and compare from the page
    d.find_element(By.ID, "pause").click()
    wait_for(lambda: request(port, "GET", "/view")[1]["paused"] is True, "the pause")
    wait_for(lambda: d.find_element(By.ID, "pause").text == "Resume", "the button to say Resume")
    d.find_element(By.ID, "pause").click()
    wait_for(lambda: request(port, "GET", "/view")[1]["paused"] is False, "the resume")
    d.find_element(By.ID, "compare").click()
    wait_for(lambda: request(port, "GET", "/view")[1]["compare"] is True, "compare mode")
    wait_for(lambda: "left rest-shape, right legacy" in d.find_element(By.ID, "playback-note").text, "the label")
    assert severe(d) == []
    stop()
    # the stream kept its bust framing all along (a still scene): its frames change once, when the
    # guides view is picked, and not again until compare mode halves the picture
    _, video = read_video(out)
    assert len(video) > 20
    steps = [changed(b.astype(int), a.astype(int)) for a, b in zip(video, video[1:])]
    end = next((k for k, m in enumerate(steps) if m > 0.1), len(steps))    # compare mode
    assert end > 10 and sum(m > 0.002 for m in steps[:end]) <= 2, steps[:end]
    assert changed(video[end].astype(int), video[0].astype(int)) < 0.05   # the same bust view, guides drawn
