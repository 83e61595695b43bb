"""``swaycam calibrate``: the guided blink / mouth calibration on the real face clip
(../shared/assets/face) and on a pose track, saved into the config file."""

from __future__ import annotations

import json

import numpy as np

from runtime.cli import main
from runtime.config import load_toml
from runtime.panel.calibration import MIN_FRAMES, MIN_SPAN, guided_windows
from tracking.expressions import BLENDSHAPE_INDEX
from tracking.track_io import load_track


def _run(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main(["calibrate", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def test_guided_schedule():
    assert guided_windows(3.0) == {"neutral": (1.5, 4.5), "blink": (6.0, 9.0), "mouth": (10.5, 13.5)}


def test_calibrate_the_clip_saves_ranges_that_a_recorded_track_of_it_reproduces(
        tmp_path, selfie_mp4, selfie_tracked, model_path, capsys):
    cfg = tmp_path / "me.toml"
    cfg.write_text('fps = 24\nsolver = "vrm"\n')
    code, out, _ = _run(capsys, selfie_mp4, "--config", cfg, "--model", model_path)
    assert code == 0
    faces = sum(bool(o.found) for o in selfie_tracked.chosen)
    assert faces >= MIN_FRAMES and out["frames"] == {"neutral": faces, "blink": faces, "mouth": faces}
    ranges = out["calibration"]
    assert sorted(ranges) == ["eyeBlinkLeft", "eyeBlinkRight", "jawOpen"]
    for lo, hi in ranges.values():
        assert 0.0 <= lo and hi >= lo + MIN_SPAN - 1e-4 and hi <= 1.0
    # the file: [calibration] added, the other settings kept; it loads back through --config
    loaded = load_toml(cfg)
    assert loaded.calibration == ranges and loaded.fps == 24 and loaded.solver == "vrm"

    # the same clip recorded as a pose track (swaycam track) calibrates to the same ranges
    poses = tmp_path / "poses.jsonl"
    assert main(["track", str(selfie_mp4), "--out", str(poses), "--model", str(model_path)]) == 0
    capsys.readouterr()
    code, again, _ = _run(capsys, poses, "--no-save")
    assert code == 0 and again["calibration"] == ranges and again["frames"] == out["frames"]

    # explicit phase windows take the track's samples inside [A, B) with a face
    tr = load_track(poses)
    t = (tr.t_ns - tr.t_ns[0]) / 1e9
    code, win, _ = _run(capsys, poses, "--no-save", "--phase", "neutral=0:2", "--phase", "blink=2:5",
                        "--phase", "mouth=5:8.5")
    assert code == 0
    for name, (a, b) in {"neutral": (0, 2), "blink": (2, 5), "mouth": (5, 8.5)}.items():
        assert win["frames"][name] == int(np.sum((t >= a) & (t < b) & tr.found))
    neutral = tr.blendshapes[(t < 2) & tr.found]
    blink = tr.blendshapes[(t >= 2) & (t < 5) & tr.found]
    i = BLENDSHAPE_INDEX["eyeBlinkLeft"]
    lo = float(np.median(neutral[:, i]))
    assert win["calibration"]["eyeBlinkLeft"] == [round(lo, 4),
                                                  round(max(float(np.percentile(blink[:, i], 95)), lo + MIN_SPAN), 4)]


def test_a_phase_without_frames_fails_and_writes_nothing(tmp_path, selfie_mp4, model_path, capsys):
    cfg = tmp_path / "me.toml"
    # the clip is 9 s long: the guided mouth phase (10.5-13.5 s) gets no frame
    code, out, err = _run(capsys, selfie_mp4, "--guided", "--config", cfg, "--model", model_path)
    assert code == 1 and out is None and not cfg.exists()
    assert err == (f"swaycam calibrate: calibration phase 'mouth' has 0 frames with a face (needs {MIN_FRAMES}): "
                   "run it again\n")
    assert main(["calibrate", str(selfie_mp4), "--phase", "blink=3"]) == 2
    assert capsys.readouterr().err == ("swaycam calibrate: --phase 'blink=3': expected NAME=A:B (seconds), "
                                       "e.g. blink=2:5\n")
