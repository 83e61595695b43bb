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


def connect(port) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5.0)
