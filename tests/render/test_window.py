"""The pygame window backend, in a subprocess against a real X server.

Uses the current DISPLAY, or starts Xvfb when it is installed; skips (saying so) when
neither exists, as on a bare headless server.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def display():
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("no DISPLAY and no Xvfb: the window backend cannot be tested here")
    # Xvfb picks a free display number itself and writes it to -displayfd: no race with other
    # test processes (parallel workers) starting an Xvfb at the same moment
    proc = subprocess.Popen([xvfb, "-displayfd", "1", "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 20.0)
        line = proc.stdout.readline().decode().strip() if ready else ""
        if not line.isdigit():
            pytest.fail(f"Xvfb did not start (exit code {proc.poll()}, said {line!r})")
        n = int(line)
        yield f":{n}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("gl_env", ["auto", "egl"])
def test_window_renders_presents_and_reports_events(display, gl_env):
    """"auto" with a display: PyOpenGL on the window system's loader; "egl": SWAYCAM_GL=egl
    forces the EGL loader and SDL is asked for an EGL context to match."""
    env = {**os.environ, "DISPLAY": display, "SWAYCAM_GL": gl_env, "PYTHONPATH": str(REPO)}
    for var in ("PYOPENGL_PLATFORM", "SDL_VIDEO_X11_FORCE_EGL"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "tests.render.window_probe"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["backend"] == "window" and out["size"] == [400, 300]
    assert out["default_backend"] == ("window" if gl_env == "auto" else "egl")
    assert out["letterbox_top"] == [0, 0, 0]
    assert out["image_corner"] == [0, 255, 0] == out["fbo_corner"]
    assert out["avatar_diff"] < 12
    assert out["events"] == [["key", "f", ["ctrl"]], ["close", "", []]]


def test_headless_request_on_a_glx_desktop_uses_a_hidden_window(display):
    env = {**os.environ, "DISPLAY": display, "PYOPENGL_PLATFORM": "glx", "PYTHONPATH": str(REPO)}
    for var in ("SWAYCAM_GL", "SDL_VIDEO_X11_FORCE_EGL"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "tests.render.window_probe", "hidden"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"backend": "window", "corner": [0, 255, 0], "center_alpha": 255}
