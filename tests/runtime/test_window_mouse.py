"""Mouse drags and the wheel in the window (runtime/view.py, render/orbit.py) under Xvfb with
synthetic pygame events (tests/runtime/window_mouse_probe.py): a left drag orbits the
viewer's camera by 0.005 rad per pixel (checked on the view matrix), the wheel zooms 1.1x per
notch, a right drag pans, x resets; the window's frame changes accordingly."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np

from avatars.math3d import mat_look_at
from tests.conftest import REPO
from tests.render.test_window import display  # noqa: F401 - the fixture


def test_mouse_orbits_zooms_and_pans_the_window(display, tmp_path):  # noqa: F811
    env = {**os.environ, "DISPLAY": display, "PYTHONPATH": str(REPO)}
    for var in ("PYOPENGL_PLATFORM", "SDL_VIDEO_X11_FORCE_EGL", "SWAYCAM_GL"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "tests.runtime.window_mouse_probe"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    states = {s["frame"]: s for s in json.loads(res.stdout.strip().splitlines()[-1])["states"]}
    s0 = states[3]
    assert s0["orbit"] == {"yaw": 0.0, "pitch": 0.0, "zoom": 1.0, "pan": [0.0, 0.0]}
    assert s0["window"] == s0["output"] == [320, 180]          # window pixels are output pixels
    # two drag events: (40, 0) then (60, 10) -> yaw -0.5 rad, pitch +0.05 rad
    s = states[6]
    assert abs(s["orbit"]["yaw"] + 100 * 0.005) < 1e-12 and abs(s["orbit"]["pitch"] - 10 * 0.005) < 1e-12
    base, target = np.array(s["base_position"]), np.array(s["target"])
    off = base - target
    dist = np.linalg.norm(off)
    yaw, pitch = math.atan2(off[0], off[2]) - 0.5, math.asin(off[1] / dist) + 0.05
    want = target + dist * np.array([math.cos(pitch) * math.sin(yaw), math.sin(pitch), math.cos(pitch) * math.cos(yaw)])
    assert np.allclose(s["position"], want, atol=1e-9, rtol=0)
    assert np.allclose(s["view"], mat_look_at(want, target, np.array([0.0, 1.0, 0.0])), atol=1e-9, rtol=0)
    assert s["changed"] > 0.02                                   # the window shows the turned avatar
    # the wheel: two notches in
    s = states[9]
    assert abs(s["orbit"]["zoom"] - 1.21) < 1e-12
    assert abs(np.linalg.norm(np.array(s["position"]) - np.array(s["target"])) - dist / 1.21) < 1e-9
    # a right drag pans (the target moves), the orbit angles stay
    s = states[12]
    px, py = s["orbit"]["pan"]     # (20, -10) px: the avatar follows the pointer, the view goes left and down
    assert s["orbit"]["yaw"] == states[9]["orbit"]["yaw"] and px < 0 and abs(px - 2 * py) < 1e-12
    # x: back to the framing
    s = states[15]
    assert s["orbit"] == s0["orbit"] and np.allclose(s["position"], s["base_position"])
