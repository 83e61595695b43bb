"""The console script keeps MediaPipe's native log lines (and OpenCV's backend warnings)
off stderr, and never holds back swaycam's own messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from runtime.native_log import is_noise
from tests.conftest import asset

REPO = Path(__file__).resolve().parents[2]
SWAYCAM = Path(sys.executable).parent / "swaycam"


def test_native_log_lines_are_recognised():
    noise = [
        b"W0000 00:00:1795975971.171857    3271 face_landmarker_graph.cc:181] Sets FaceBlendshapesGraph "
        b"acceleration to xnnpack by default.",
        b"I1129 18:12:01.123456    3276 gl_context.cc:357] GL version: 3.2",
        b"INFO: Created TensorFlow Lite XNNPACK delegate for CPU.",
        b"WARNING: Logging before InitGoogle() is written to STDERR",
    ]
    kept = [
        b"E0000 00:00:1795975971.1 3271 calculator_graph.cc:887] INVALID_ARGUMENT: a real error",
        b"swaycam track: image x.png does not exist",
        b"Traceback (most recent call last):",
        b"WARNING runtime.session: a swaycam warning",
    ]
    assert all(is_noise(line) for line in noise)
    assert not any(is_noise(line) for line in kept)


def _console(*args):
    env = {k: v for k, v in os.environ.items() if k != "OPENCV_LOG_LEVEL"}
    return subprocess.run([str(SWAYCAM), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_console_script_tracks_without_native_noise(tmp_path):
    r = _console("track", str(asset("face", "skimage_astronaut.png")), "--out", str(tmp_path / "a.jsonl"))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert "face in 1" in r.stdout
    v = _console("-v", "track", str(asset("face", "skimage_astronaut.png")), "--out", str(tmp_path / "b.jsonl"))
    assert v.returncode == 0 and "W0000" in v.stderr          # -v keeps everything


def test_console_script_errors_still_reach_stderr(tmp_path):
    r = _console("run", "--source", "7", "--duration", "1", "--output", f"video:{tmp_path / 'x.mp4'}")
    assert r.returncode == 1
    assert r.stderr == ("swaycam run: webcam 7: could not be opened (not connected, no permission, or in use by "
                        "another program)\n")


def test_console_script_warns_in_one_line(tmp_path):
    p = tmp_path / "cut.jsonl"
    p.write_text('{"schema": "swaycam.posetrack", "version": 1, "frame": "avatar", "source": "", "settings": {}}\n'
                 '{"t_ns": 0, "rotation": [0, 0, 0, 1]}\n{"t_ns": 100000000, "rotation": [0, 0, 0, 1]}\n{"t_ns": 2')
    r = _console("replay", str(p), "--fps", "30")
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"swaycam: warning: {p} line 4: incomplete last line (recording cut off?) dropped\n"
