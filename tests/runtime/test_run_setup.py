"""`swaycam run` says what it does with its options (issue 16's CLI findings): a transparent
background is refused where it would come out black, options the run would ignore are
warned about, a text file named .mp4 is one clear line, the window title and the HUD say
the real frame pacing, and --no-recenter keeps the tracker's neutral pose."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from runtime.cli import main
from runtime.config import RunConfig
from runtime.preflight import ignored_options
from runtime.schedule import pacing_text
from tests.conftest import REPO
from tracking.track_io import load_track

SMALL = ["--size", "160x90", "--duration", "0.2", "--fps", "10"]
NO_ALPHA = ("H.264 video and virtual cameras have no alpha, so the transparent background would come out black "
            "(use png:DIR to keep alpha, or background green for a chroma key)")


@pytest.fixture
def no_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


# ---------------------------------------------------------------------------- transparent background

@pytest.mark.parametrize("output", ["video:{tmp}/a.mp4", "video:{tmp}/a.mov", "video:{tmp}/a.mkv", "vcam"])
def test_transparent_into_an_opaque_output_is_refused(output, tmp_path, capsys):
    output = output.format(tmp=tmp_path)
    assert main(["run", *SMALL, "--source", "turn-test", "--background", "transparent", "--output", output]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"swaycam run: option output: {output!r}: {NO_ALPHA}\n"
    assert list(tmp_path.iterdir()) == []                      # nothing was written


def test_transparent_into_the_default_video_is_refused(tmp_path, monkeypatch, no_display, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", *SMALL, "--source", "turn-test", "--background", "transparent"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("swaycam run: output video:out/swaycam-") and err.count("\n") == 1
    assert err.endswith(f".mp4 (the default without a display): {NO_ALPHA}\n")
    assert not (tmp_path / "out").exists()


def test_transparent_into_png_keeps_alpha(tmp_path, capsys):
    frames = tmp_path / "f"
    assert main(["run", *SMALL, "--source", "turn-test", "--background", "transparent", "--output",
                 f"png:{frames}"]) == 0
    from PIL import Image

    rgba = np.asarray(Image.open(frames / "frame_000000.png"))
    assert rgba.shape == (90, 160, 4) and rgba[0, 0, 3] == 0 and rgba[..., 3].max() == 255


# ---------------------------------------------------------------------------- --json

def test_json_stdout_is_one_document_with_a_video_output(tmp_path, capsys):
    video = tmp_path / "a.mp4"
    assert main(["run", *SMALL, "--source", "turn-test", "--output", f"video:{video}", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["outputs"] == [f"video:{video}"]   # stdout is the JSON document alone
    assert f"writing video to {video}\n" in err


# ---------------------------------------------------------------------------- ignored options

def test_options_the_run_would_ignore_are_warnings(tmp_path, no_display, capsys):
    model = str(REPO / "pyproject.toml")           # any existing file: a pose track never reads it
    argv = ["run", *SMALL, "--source", "turn-test", "--output", f"png:{tmp_path / 'f'}", "--avatar-dir",
            str(tmp_path), "--face-model", model, "--kiosk", "--no-recenter"]
    assert main(argv) == 0
    warnings = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("swaycam run: warning: ")]
    assert warnings == [
        "swaycam run: warning: --avatar-dir is ignored without --service (only the control service uses it)",
        "swaycam run: warning: --face-model is ignored: the source 'turn-test' is a pose track (already tracked); "
        "the face model tracks webcams, videos and images",
        "swaycam run: warning: --no-recenter is ignored: the source 'turn-test' is a pose track (already tracked), "
        "its poses are played as recorded",
        "swaycam run: warning: --kiosk without a window (no display: DISPLAY / WAYLAND_DISPLAY is not set): nothing "
        "is shown fullscreen (the kiosk's idle pose when nobody is there still applies)",
    ]


def test_ignored_options_cases():
    def notes(display=False, webcam=False, **kw):
        return ignored_options(RunConfig(**kw), display=display, webcam=lambda: webcam)

    assert notes() == [] and notes(service=True, avatar_dir="/tmp", port=9000) == []
    assert notes(motion_dir="/tmp", record_dir="r", port=9000) == [
        "--motion-dir, --record-dir, --port are ignored without --service (only the control service uses them)"]
    # no --source: the webcam when there is one (the face model is used), else the head turn
    assert notes(face_model="m.task", webcam=True) == []
    assert notes(face_model="m.task", webcam=False) == [
        "--face-model is ignored: without a webcam the source is 'turn-test', a pose track (already tracked); "
        "the face model tracks webcams, videos and images"]
    assert notes(face_model="m.task", source="clip.mp4", recenter=False) == []
    assert notes(face_model="m.task", source="poses.jsonl")[0].startswith(
        "--face-model is ignored: the source 'poses.jsonl' is a pose track")
    assert notes(kiosk=True, display=True) == []
    assert notes(kiosk=True, display=True, output=("png:f",)) == [
        "--kiosk without a window (no window output): nothing is shown fullscreen (the kiosk's idle pose when "
        "nobody is there still applies)"]


# ---------------------------------------------------------------------------- a text file named .mp4

def test_a_text_file_named_mp4_is_one_line(tmp_path, model_path):
    """OpenCV's FFmpeg backend prints its own "[mov,mp4,... @ 0x...] moov atom not found" on
    descriptor 2 (not Python's stderr) unless told otherwise before it first opens a video:
    a process of its own, as a user runs it."""
    fake = tmp_path / "clip.mp4"
    fake.write_text("not a video\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENCV_FFMPEG_LOGLEVEL", "OPENCV_FFMPEG_DEBUG")}
    env["PYTHONPATH"] = str(REPO)
    res = subprocess.run([sys.executable, "-m", "runtime.cli", "track", str(fake), "--out", str(tmp_path / "p.jsonl"),
                          "--model", str(model_path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert (res.returncode, res.stdout) == (1, "")
    assert res.stderr == (f"swaycam track: video file {fake}: not a readable video (OpenCV could not open it; "
                          "ffmpeg: Could not load meta information)\n")


# ---------------------------------------------------------------------------- pacing

def test_pacing_text():
    assert pacing_text(live=True, fps=60, window=True, vsync=True) == "live, 60 fps, vsync"
    assert pacing_text(live=True, fps=30, window=True, vsync=False) == "live, 30 fps"
    assert pacing_text(live=True, fps=60, window=False, vsync=True) == "live, 60 fps"
    assert pacing_text(live=False, fps=30, window=True, vsync=True) == "offline, 30 fps, paced to the clip's time"
    assert pacing_text(live=False, fps=12.5, window=False, vsync=False) == "offline, 12.5 fps, as fast as possible"
    # the HUD's line, short enough for a compare-mode pane
    assert pacing_text(live=True, fps=60, window=True, vsync=True, short=True) == "60 fps vsync"
    assert pacing_text(live=True, fps=30, window=True, vsync=False, short=True) == "30 fps live"
    assert pacing_text(live=False, fps=30, window=True, vsync=True, short=True) == "30 fps offline"


def test_the_title_and_the_hud_say_the_pacing(tmp_path, monkeypatch):
    """The context is asked for a title naming the real rate, and the HUD shows it."""
    import render

    from runtime.config import merge
    from runtime.session import Session

    titles, huds = [], []
    real = render.create_context

    def create_context(*args, **kwargs):
        titles.append(kwargs.get("title"))
        return real(*args, **kwargs)

    monkeypatch.setattr(render, "create_context", create_context)
    cfg = merge(RunConfig(), {"source": "turn-test", "fps": 10.0, "duration": 0.2, "size": (160, 90), "hud": True,
                              "output": (f"png:{tmp_path / 'f'}",)})
    with Session(cfg, say=lambda s: None,
                 on_frame=lambda info, rig: huds.append(session.drawer._hud_info(info, rig).lines())) as session:
        session.run()
    assert titles == ["swaycam (offline, 10 fps, as fast as possible)"]
    assert huds and all("rate 10 fps offline" in lines for lines in huds)


# ---------------------------------------------------------------------------- --no-recenter

def test_no_recenter_keeps_the_trackers_neutral(astronaut_png, tmp_path, capsys):
    """The astronaut's head is turned about 15 degrees: recentered, the first recorded pose is
    the identity; with --no-recenter it is the head as the camera sees it."""
    rotations = {}
    for flag in ([], ["--no-recenter"]):
        rec = tmp_path / f"poses{len(flag)}.jsonl"
        assert main(["run", *SMALL, "--source", str(astronaut_png), "--record", str(rec), "--output",
                     f"png:{tmp_path / 'f'}", *flag]) == 0
        track = load_track(rec)
        assert track.header.settings["pose"]["recenter_at_start"] is (not flag)
        rotations[bool(flag)] = track.rotations[0]
    capsys.readouterr()
    assert np.allclose(rotations[False], [0, 0, 0, 1], atol=1e-12)
    angle = np.degrees(2 * np.arccos(min(1.0, abs(rotations[True][3]))))
    assert 10 < angle < 20


def test_kiosk_recenters_on_a_new_face_unless_no_recenter():
    from types import SimpleNamespace

    from runtime.session import Session

    for recenter, expected in ((True, 1), (False, 0)):
        session = Session(RunConfig(kiosk=True, recenter=recenter))
        calls = []
        session.pose_input = SimpleNamespace(status=lambda: SimpleNamespace(new_faces=1),
                                             recenter=lambda: calls.append(1))
        session.context = SimpleNamespace(poll_events=lambda: [])
        session._between_frames()                  # a new visitor arrived
        assert len(calls) == expected


def test_recenter_is_a_config_setting(tmp_path):
    from runtime.config import load_toml

    p = tmp_path / "run.toml"
    p.write_text("recenter = false\n")
    assert load_toml(p).recenter is False and RunConfig().recenter is True


# ---------------------------------------------------------------------------- earlier PNG frames

def test_earlier_png_frames_survive_a_run_that_fails_and_are_replaced_by_one_that_draws(tmp_path, capsys):
    """Nothing is lost: a mistyped source used to delete the earlier run's frames before it
    failed. Now they go only when the new run's first frame is drawn."""
    frames = tmp_path / "f"
    frames.mkdir()
    for k in range(5):
        (frames / f"frame_{k:06d}.png").write_bytes(b"earlier")
    (frames / "keep.txt").write_text("not a frame")
    assert main(["run", *SMALL, "--source", "turn-tset", "--output", f"png:{frames}"]) != 0
    err = capsys.readouterr().err
    assert "did you mean" in err
    assert sorted(p.name for p in frames.iterdir()) == [f"frame_{k:06d}.png" for k in range(5)] + ["keep.txt"]
    assert all((frames / f"frame_{k:06d}.png").read_bytes() == b"earlier" for k in range(5))
    assert main(["run", *SMALL, "--source", "turn-test", "--output", f"png:{frames}"]) == 0
    out, err = capsys.readouterr()
    assert f"5 frames of an earlier run in {frames} are replaced once the first frame is drawn" in out + err
    names = sorted(p.name for p in frames.iterdir())
    assert names == [f"frame_{k:06d}.png" for k in range(2)] + ["keep.txt"]    # 0.2 s at 10 fps
    assert all((frames / n).read_bytes()[:4] == b"\x89PNG" for n in names if n.endswith(".png"))
