"""``swaycam track`` (runtime/cli/track.py) through the ``swaycam`` entry point: recorded tracks,
previews, progress bar, exit codes and error messages."""

import io
import json

import numpy as np
import pytest

from runtime.cli import main
from runtime.cli.args import Progress
from tracking.track_io import load_track

MS = 1_000_000


def test_track_selfie_records_225_samples_40ms_apart(selfie_mp4, model_path, tmp_path, capsys):
    out = tmp_path / "poses.jsonl"
    assert main(["track", str(selfie_mp4), "--out", str(out), "--model", str(model_path)]) == 0
    tr = load_track(out)
    assert len(tr) == 225 and np.all(np.diff(tr.t_ns) == 40 * MS) and tr.t_ns[0] == 0
    assert tr.header.frame == "avatar" and tr.header.source == str(selfie_mp4)
    assert tr.header.settings["pose"]["head"]["mirror"] is True and tr.header.settings["width"] == 640
    assert all(tr.found)
    # recentered on the first frame: it is the neutral pose
    assert np.allclose(tr.rotations[0], [0, 0, 0, 1], atol=1e-12)
    stdout = capsys.readouterr().out
    assert "225 frames, face in 225" in stdout and f"poses -> {out}" in stdout


def test_track_raw_records_camera_frame_observations(android_gif, model_path, tmp_path):
    out = tmp_path / "raw.jsonl"
    assert main(["track", str(android_gif), "--out", str(out), "--raw", "--max-frames", "6",
                 "--model", str(model_path)]) == 0  # fmt: skip
    tr = load_track(out)
    assert tr.header.frame == "camera" and len(tr) == 6
    assert np.all(np.diff(tr.t_ns) == 80 * MS)
    assert np.all(tr.translations[:, 2] < -0.2)  # raw camera-frame metres in front of the camera
    line = json.loads(out.read_text().splitlines()[1])
    assert len(line["blendshapes"]) == 52


def test_track_preview_video(astronaut_png, model_path, tmp_path):
    import imageio_ffmpeg

    pv = tmp_path / "preview.mp4"
    assert main(["track", str(astronaut_png), "--repeat", "4", "--preview", str(pv), "--model", str(model_path)]) == 0
    reader = imageio_ffmpeg.read_frames(str(pv))
    meta = next(reader)
    frames = [np.frombuffer(f, np.uint8).reshape(512, 512, 3) for f in reader]
    assert meta["size"] == (512, 512) and len(frames) == 4
    # landmarks are drawn in yellow inside the face, nothing outside the face box changes
    from PIL import Image

    src = np.asarray(Image.open(astronaut_png).convert("RGB")).astype(int)
    diff = np.abs(frames[0].astype(int) - src).sum(axis=2)
    face, corner = diff[80:170, 185:265], diff[300:, 350:]
    assert face.mean() > 3 * max(corner.mean(), 1.0)


def test_track_interrupted_keeps_the_file_and_exits_130(astronaut_png, model_path, tmp_path, monkeypatch, capsys):
    """Ctrl-C (the usual way to end a webcam recording) after 3 frames: a complete file of 3
    poses, the summary says so, exit 130 like ``swaycam run``."""
    from tracking.preview import PreviewWriter

    calls = []
    real_write = PreviewWriter.write

    def write(self, image):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        real_write(self, image)

    monkeypatch.setattr(PreviewWriter, "write", write)
    out = tmp_path / "p.jsonl"
    rc = main(["track", str(astronaut_png), "--repeat", "10", "--out", str(out), "--preview", str(tmp_path / "p.mp4"),
               "--model", str(model_path)])
    assert rc == 130
    assert "(interrupted)" in capsys.readouterr().out
    assert len(load_track(out)) == 4          # the 4th pose was written before its preview frame


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["track", "{tmp}/missing.mp4", "--out", "{tmp}/o.jsonl"], 1, "video file {tmp}/missing.mp4 does not exist"),
        (["track", "{tmp}/empty.mp4", "--out", "{tmp}/o.jsonl"], 1, "video file {tmp}/empty.mp4 is empty (0 bytes)"),
        (["track", "97", "--out", "{tmp}/o.jsonl"], 1, "webcam 97: could not be opened"),
        (["track", "{tmp}/empty.mp4"], 2, "give --out POSES.jsonl and/or --preview OUT"),
        (["track", "{asset}", "--preview", "window"], 1, "preview window: no display"),
    ],
)
def test_track_errors(argv, code, message, tmp_path, capsys, monkeypatch, astronaut_png, model_path):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    (tmp_path / "empty.mp4").write_bytes(b"")
    argv = [a.format(tmp=tmp_path, asset=astronaut_png) for a in argv] + ["--model", str(model_path)]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert f"swaycam track: {message.format(tmp=tmp_path)}" in err


def test_progress_bar_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for bar, stream in ((Progress(tty, width=10), tty), (Progress(pipe, width=10), pipe)):
        for k in range(1, 6):
            bar(k, 5)
    assert tty.getvalue().endswith("\r[##########] 5/5 frames\n") and "[####......] 2/5" in tty.getvalue()
    assert pipe.getvalue() == ""


def test_parser_registers_on_a_foreign_subparsers_object():
    import argparse

    from runtime.cli import bench, track

    ap = argparse.ArgumentParser(prog="swaycam")
    sub = ap.add_subparsers(dest="command")
    track.add_parser(sub)
    bench.add_parser(sub)
    args = ap.parse_args(["track", "0", "--preview", "window", "--no-mirror"])
    assert args.func is track.run and args.no_mirror and args.source == "0"
    assert args.command_prog == "swaycam track"
    # the tracker's timing moved under `swaycam bench tracker`, with its options
    args = ap.parse_args(["bench", "tracker", "--frames", "20", "--num-faces", "2"])
    assert args.func is bench.run_target and args.target == "tracker" and (args.frames, args.num_faces) == (20, 2)
    assert args.command_prog == "swaycam bench tracker"


def test_raw_recording_refilters_to_the_avatar_track(android_gif, model_path, tmp_path):
    from tracking.pose_filter import filter_observations

    raw, av = tmp_path / "raw.jsonl", tmp_path / "avatar.jsonl"
    for out, extra in ((raw, ["--raw"]), (av, [])):
        assert main(["track", str(android_gif), "--out", str(out), "--max-frames", "12", "--model", str(model_path), *extra]) == 0
    refiltered = filter_observations(load_track(raw).observations())
    direct = load_track(av)
    assert np.array_equal(refiltered.t_ns, direct.t_ns)
    assert np.allclose(refiltered.rotations, direct.rotations, atol=1e-12)
    assert np.allclose(refiltered.blendshapes, direct.blendshapes, atol=1e-12)
