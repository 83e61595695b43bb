"""Live mode: window keys (scripted events), the control service against a running app,
clean shutdown on SIGTERM with a playable video."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from render import Event
from runtime.app import App
from runtime.config import RunConfig
from tests.conftest import REPO, asset
from tests.runtime.test_run_e2e import read_video

SIZE = (320, 180)


def test_keys_switch_pause_screenshot_compare_quit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = {3: "s", 5: "space", 9: "space", 11: "p", 13: "c", 16: "o", 18: "c", 22: "q"}
    seen = []

    def on_frame(info, rig):
        seen.append((len(seen), rig.solver, app.loop.paused, app.compare, app._last_rgba.shape))

    app = App(RunConfig(source="turn-test", realtime=True, fps=20, size=SIZE, output=(f"video:{tmp_path}/k.mp4",)),
              say=lambda s: None, on_frame=on_frame)
    original = App.handle_events

    def scripted(self):
        key = script.get(len(seen))
        if key:
            self._key(key)
        original(self)

    monkeypatch.setattr(App, "handle_events", scripted)
    result = app.run()
    assert not result.interrupted
    assert len(seen) == 22                     # 'q' before frame 22 ended the run
    assert seen[2][1] == "rest-shape" and seen[4][1] == "legacy"      # 's' switched the solver
    assert [f[2] for f in seen[5:9]] == [True] * 4 and seen[10][2] is False  # space paused, space resumed
    shots = list((tmp_path / "out").glob("screenshot-*.png"))
    assert len(shots) == 1                     # 'p'
    assert seen[14][3] is True and seen[14][4] == (180, 320, 4)   # 'c': two half-width views side by side
    assert seen[19][3] is False
    assert app.overlays is True                # 'o' toggled overlays on


def request(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    conn.request(method, path, body=None if body is None else json.dumps(body))
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def test_service_against_a_running_app(tmp_path):
    cfg = RunConfig(source="turn-test", realtime=True, fps=20, size=SIZE, output=(f"video:{tmp_path}/s.mp4",),
                    service=True, port=0, avatar_dir=str(asset("vrm")))
    app = App(cfg, say=lambda s: None)
    th = threading.Thread(target=app.run, daemon=True)
    th.start()
    try:
        deadline = time.monotonic() + 300  # a cold numba cache compiles the solver first
        while time.monotonic() < deadline and not (app.service is not None and app.metrics.frames > 3):
            time.sleep(0.05)
        port = app.service.address[1]
        status, body = request(port, "GET", "/status")
        st = json.loads(body)
        assert status == 200 and st["frames"] > 3 and st["solver"] == "rest-shape"
        assert request(port, "POST", "/recenter")[0] == 200
        status, body = request(port, "POST", "/hair", {"solver": "legacy"})
        assert status == 200 and json.loads(body)["solver"] == "legacy" and app.rig.solver == "legacy"
        status, png = request(port, "GET", "/frame.png")
        assert status == 200 and png.startswith(b"\x89PNG")
        status, body = request(port, "POST", "/avatar", {"path": "Godette_vrm_v4.vrm"})
        assert status == 200, body
        assert app.rig.avatar.path.endswith("Godette_vrm_v4.vrm")
        assert request(port, "POST", "/avatar", {"path": "../face/skimage_astronaut.png"})[0] == 403
        assert request(port, "POST", "/avatar", {"path": "../../main/README.md"})[0] == 403
    finally:
        app.stop()
        th.join(timeout=60)
    assert not th.is_alive()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_flushes_the_video(tmp_path, signum):
    out = tmp_path / "live.mp4"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.Popen([sys.executable, "-m", "runtime.cli", "run", "--source", "turn-test", "--realtime",
                             "--fps", "15", "--size", "320x180", "--output", f"video:{out}"],
                            cwd=tmp_path, env={**env, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (out.exists() and out.stat().st_size > 0):
            time.sleep(0.05)
        time.sleep(2.0)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, stderr[-2000:]
    assert "(interrupted)" in stdout
    meta, frames = read_video(out)
    assert len(frames) >= 15 and meta["size"] == (320, 180)
    # live video files are paced by timestamps: the file lasts as long as the run
    assert meta["duration"] == pytest.approx(len(frames) / 15, abs=0.1)
