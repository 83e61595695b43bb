"""The hostile-client suite (issue 34): attacks against a live control service over real
sockets on 127.0.0.1 — a service with a recording controller here (seconds), a whole
``swaycam run --service`` where the render loop's frames are what is measured
(test_render_stalls.py)."""

from __future__ import annotations

import http.client
import json
import socket
import time
from pathlib import Path

import pytest

from runtime.service import ControlService


class RecordingController:
    """A controller whose every state change is recorded: a refused request must leave
    ``calls`` as it was."""

    def __init__(self):
        self.calls = []

    def status(self):
        return {"fps": 30.0, "frames": len(self.calls)}

    def recenter(self):
        self.calls.append(("recenter",))

    def load_avatar(self, path: Path):
        self.calls.append(("avatar", path.name))
        return {"avatar": path.name}

    def set_hair(self, solver, params):
        self.calls.append(("hair", solver, params))
        return {"solver": solver, "params": params, "springs": {}}

    def frame_png(self):
        return b"\x89PNG\r\n\x1a\n"

    def motion(self):
        return {"playing": "idle"}

    def set_motion(self, clip, **kw):
        self.calls.append(("motion", clip, kw))
        return {"playing": clip}

    def hairstyles(self):
        return {"styles": [], "current": None}

    def set_hairstyle(self, path, name, *, wait=True):
        self.calls.append(("hairstyle", name))
        return {"current": name}


@pytest.fixture()
def service(tmp_path):
    (tmp_path / "avatars").mkdir()
    ctl = RecordingController()
    with ControlService(ctl, port=0, avatar_dir=tmp_path / "avatars") as s:
        yield s, ctl


def call(port, method, path, body=None, headers=None, timeout=10.0):
    """(status, JSON or bytes, seconds to the answer)."""
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    hdrs = {"Content-Type": "application/json"} if body is not None else {}
    hdrs.update(headers or {})
    c.request(method, path, body=None if body is None else (body if isinstance(body, bytes) else json.dumps(body)),
              headers=hdrs)
    r = c.getresponse()
    raw = r.read()
    c.close()
    dt = time.perf_counter() - t0
    if (r.getheader("Content-Type") or "").startswith("application/json"):
        return r.status, json.loads(raw), dt
    return r.status, raw, dt


def patient(port, method, path, body=None, headers=None, timeout=30.0):
    """:func:`call`, waiting out 429s (the rate limit is not what these tests attack)."""
    while True:
        status, answer, dt = call(port, method, path, body, headers, timeout)
        if status != 429:
            return status, answer, dt
        time.sleep(0.2)


def connect(port) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5.0)


@pytest.fixture(scope="module")
def live_run(tmp_path_factory):
    """``swaycam run --service`` live (a still pose track played in real time, 30 fps,
    480x360 into a video file) with an avatar folder (Godette, the robot), a motion folder
    (a VRMA clip) and a config file; yields (port, tmp folder)."""
    import re
    import shutil
    import signal
    import subprocess
    import sys
    import threading

    from avatars.assets import asset_path
    from tracking.track_io import PoseTrackWriter

    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "avatars").mkdir()
    shutil.copy(asset_path("vrm", "Godette_vrm_v4.vrm"), tmp / "avatars" / "godette.vrm")
    shutil.copy(asset_path("vrm", "debug_robot.vrm"), tmp / "avatars" / "robot.vrm")
    (tmp / "motion").mkdir()
    shutil.copy(asset_path("anim", "Clapping.vrma"), tmp / "motion" / "clap.vrma")
    track = tmp / "still.jsonl"
    with PoseTrackWriter(track) as w:
        for i in range(9000):
            w.write(i * 10**8, [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0], {}, 1.0, True)
    cfg = tmp / "swaycam.toml"
    cfg.write_text("fps = 30\n")
    root = Path(__file__).resolve().parents[3]
    cmd = [sys.executable, "-m", "runtime.cli", "run", "--service", "--port", "0", "--config", str(cfg),
           "--source", str(track), "--realtime", "--duration", "600", "--size", "480x360",
           "--avatar-dir", str(tmp / "avatars"), "--motion-dir", str(tmp / "motion"),
           "--output", f"video:{tmp / 'out.mp4'}", "--record-dir", str(tmp / "recordings")]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    while call(port, "GET", "/status")[1]["frames"] < 30:
        time.sleep(0.1)
    yield port, tmp
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log = "".join(lines)
    assert "Traceback" not in log, log[-4000:]
    assert "internal error" not in log, log[-4000:]
