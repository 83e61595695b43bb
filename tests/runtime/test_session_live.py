"""Live mode: window keys (scripted events), the control service against a running session,
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

from runtime.clock import NS_PER_S, ReplayClock
from runtime.config import RunConfig
from runtime.session import Session
from tests.conftest import REPO, asset
from tests.runtime.test_run_e2e import read_video

SIZE = (320, 180)
BACKGROUND = np.array([0x20, 0x24, 0x30])   # the default background


def avatar_columns(rgb: np.ndarray) -> np.ndarray:
    """Columns of an (H, W, 3) frame where the avatar covers some pixels."""
    return np.flatnonzero((np.abs(rgb.astype(int) - BACKGROUND).max(axis=-1) > 24).any(axis=0))


def test_keys_switch_pause_screenshot_compare_quit(tmp_path, monkeypatch):
    """Live (a track played in real time) on a replay clock: every frame exactly 50 ms apart."""
    monkeypatch.chdir(tmp_path)
    script = {3: "s", 5: "space", 9: "space", 11: "p", 13: "c", 15: "p", 16: "o", 18: "c", 22: "q"}
    seen = []

    def on_frame(info, rig):
        d = session.loop.driver
        seen.append((len(seen), rig.solver, session.clock.paused, session.stage.compare, info.t_ns, info.substeps,
                     d.t0_ns, d.substep_index, session.renderer.size))

    session = Session(RunConfig(source="turn-test", realtime=True, fps=20, size=SIZE,
                                output=(f"video:{tmp_path}/k.mp4",)),
                      clock=ReplayClock(0), say=lambda s: None, on_frame=on_frame)
    original = Session.handle_events

    def scripted(self):
        key = script.get(len(seen))
        if key:
            self.keys.press(key)
        original(self)

    monkeypatch.setattr(Session, "handle_events", scripted)
    with session:
        result = session.run()
    assert not result.interrupted
    assert len(seen) == 22                     # 'q' before frame 22 ended the run
    assert seen[2][1] == "rest-shape" and seen[4][1] == "legacy"      # 's' switched the solver
    assert [f[2] for f in seen[5:9]] == [True] * 4 and seen[10][2] is False  # space paused, space resumed
    # the pause lives in the clock: loop time stood still from frame 5 to the resume before
    # frame 9, no substep ran, and the grid went on where it stopped (same t0, contiguous n)
    t = [f[4] for f in seen]
    assert t[5] == t[6] == t[7] == t[8] == t[9] and [f[5] for f in seen[6:10]] == [0] * 4
    assert t[10] - t[9] == NS_PER_S // 20 and t[4] - t[3] == NS_PER_S // 20
    assert {f[6] for f in seen} == {0}
    assert all(seen[k][7] == seen[k - 1][7] + seen[k][5] for k in range(1, len(seen)))
    shots = sorted((tmp_path / "out").glob("screenshot-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    assert len(shots) == 2                     # 'p' twice
    assert seen[14][3] is True and seen[14][8] == SIZE   # 'c': two half-width views side by side in one frame
    assert seen[19][3] is False
    assert session.drawer.overlays is True     # 'o' toggled overlays on
    # the screenshots show what the window shows: one avatar in the middle, then two side by side
    from PIL import Image
    single, both = (np.asarray(Image.open(p))[..., :3] for p in shots)
    assert both.shape == (180, 320, 3)
    cols = avatar_columns(single)
    assert cols.min() > 80 and cols.max() < 240
    cols = avatar_columns(both)
    assert cols.min() < 80 and cols.max() > 240 and not np.isin(np.arange(150, 170), cols).all()
    # every frame reached the video (the last one flushed from the PBO at close)
    meta, frames = read_video(tmp_path / "k.mp4")
    assert len(frames) == 22 and meta["size"] == SIZE
    assert np.abs(frames[14].astype(int) - both.astype(int)).mean() < 3


def request(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Content-Type": "application/json"} if method == "POST" else {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def test_service_against_a_running_app(tmp_path):
    cfg = RunConfig(source="turn-test", realtime=True, fps=20, size=SIZE, output=(f"video:{tmp_path}/s.mp4",),
                    service=True, port=0, avatar_dir=str(asset("vrm")))
    session = Session(cfg, say=lambda s: None)

    def run():
        with session:
            session.run()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    try:
        deadline = time.monotonic() + 300  # a cold numba cache compiles the solver first
        while time.monotonic() < deadline and not (session.service is not None and session.metrics.frames > 3):
            time.sleep(0.05)
        port = session.service.address[1]
        status, body = request(port, "GET", "/status")
        st = json.loads(body)
        assert status == 200 and st["frames"] > 3 and st["solver"] == "rest-shape" and st["paused"] is False
        assert st["face_found"] is True        # a pose track "has a face" (no tracker feeds the telemetry)
        assert request(port, "POST", "/recenter")[0] == 200
        status, body = request(port, "POST", "/hair", {"solver": "legacy"})
        assert status == 200 and json.loads(body)["solver"] == "legacy" and session.stage.rig.solver == "legacy"
        status, png = request(port, "GET", "/frame.png")
        assert status == 200 and png.startswith(b"\x89PNG")
        status, body = request(port, "POST", "/avatar", {"path": "Godette_vrm_v4.vrm"})
        assert status == 200, body
        assert session.stage.rig.avatar.path.endswith("Godette_vrm_v4.vrm")
        assert request(port, "POST", "/avatar", {"path": "../face/skimage_astronaut.png"})[0] == 403
        assert request(port, "POST", "/avatar", {"path": "../../main/README.md"})[0] == 403
    finally:
        session.stop()
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
