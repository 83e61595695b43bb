"""The window always answers (issue 16), under Xvfb with synthetic key events: every
documented key acts in offline, live and kiosk runs; q, esc and the close button end the
run on the next frame; offline playback into a window is paced to real time; compare mode
draws two labelled panes in the window itself (tests/runtime/window_keys_probe.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.render.test_window import display  # noqa: F401 - the fixture

FPS = 10
#: Real time an offline run into a window may run ahead of its frames (scheduling slack).
PACE_SLACK_S = 0.15


def probe(display, tmp_path, mode, keys):  # noqa: F811
    env = {**os.environ, "DISPLAY": display, "PYTHONPATH": str(REPO)}
    for var in ("PYOPENGL_PLATFORM", "SDL_VIDEO_X11_FORCE_EGL", "SWAYCAM_GL"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "tests.runtime.window_keys_probe", mode,
                          json.dumps({str(k): v for k, v in keys.items()})],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def effects(out):
    """(key, state before it, state before the next key / at the end) per key posted."""
    ks = out["keys"]
    return [(k["key"], k["before"], (ks[i + 1]["before"] if i + 1 < len(ks) else out["final"]))
            for i, k in enumerate(ks)]


EVERY_KEY = {2: "r", 3: "o", 4: "h", 5: "s", 6: "c", 8: "m", 9: "space", 11: "space", 12: "p"}


def check_every_key(out, *, kiosk=False):
    for key, a, b in effects(out):
        if key == "r":
            assert b["recenters"] == a["recenters"] + 1
        elif key == "o":
            assert b["overlays"] == (a["overlays"] if kiosk else not a["overlays"])
        elif key == "h":
            assert b["hud"] == (a["hud"] if kiosk else not a["hud"])
        elif key == "s":
            assert (a["solver"], b["solver"]) == ("rest-shape", "legacy")
        elif key == "c":
            assert not a["compare"] and b["compare"]
        elif key == "m":
            assert b["said"] == a["said"] + 1            # answered (this run has no body motion)
        elif key == "space":
            assert b["paused"] != a["paused"]
        elif key == "p":
            assert b["screenshots"] == a["screenshots"] + 1
    said = out["said"]
    assert "solver: legacy" in said and any(s.startswith("compare: left legacy, right rest-shape") for s in said)
    assert any(s.startswith("screenshot: out/screenshot-") for s in said)


@pytest.mark.parametrize("quit_key", ["q", "escape", "close"])
def test_offline_into_a_window_answers_every_key_and_is_paced(display, tmp_path, quit_key):  # noqa: F811
    out = probe(display, tmp_path, "offline", {**EVERY_KEY, 14: quit_key})
    assert out["live"] is False
    check_every_key(out)
    assert out["stopped_at"] == 14 and out["frames"] == 14        # ends on the frame after the key
    # paced: 14 frames at 10 fps take 1.3 s of real time (plus the 0.2 s paused), not a burst
    assert out["seconds"] >= (14 - 1) / FPS - PACE_SLACK_S
    panes = out["panes"]
    assert panes["left"] > 2000 and panes["right"] > 2000 and panes["middle"] == 0      # two panes, a gap
    assert panes["left_label"] > 50 and panes["right_label"] > 50                      # each labelled


def test_kiosk_window_answers_its_keys(display, tmp_path):  # noqa: F811
    out = probe(display, tmp_path, "kiosk", {**EVERY_KEY, 14: "escape"})
    check_every_key(out, kiosk=True)
    assert out["stopped_at"] == 14


def test_live_window_answers_every_key(display, tmp_path):  # noqa: F811
    out = probe(display, tmp_path, "live", {**EVERY_KEY, 14: "q"})
    assert out["live"] is True
    check_every_key(out)
    assert out["stopped_at"] == 14
