"""`swaycam run` refuses bad set-ups with one clear line, before it touches any output file."""

from __future__ import annotations

import socket

import pytest

from runtime.cli import main

SMALL = ["--size", "160x90", "--duration", "0.2", "--fps", "10"]


@pytest.fixture
def kept_video(tmp_path):
    p = tmp_path / "keep.mp4"
    p.write_bytes(b"an earlier recording" * 100)
    return p


def _run(args, capsys):
    rc = main(["run", *SMALL, *args])
    return rc, capsys.readouterr().err


def test_a_busy_service_port_leaves_an_existing_video_alone(kept_video, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        rc, err = _run(["--service", "--port", str(port), "--output", f"video:{kept_video}"], capsys)
    assert rc == 1 and f"cannot listen on 127.0.0.1:{port}" in err
    assert kept_video.read_bytes() == b"an earlier recording" * 100


def test_a_missing_virtual_camera_leaves_an_existing_video_alone(kept_video, capsys, monkeypatch):
    monkeypatch.delenv("SWAYCAM_VCAM_BACKEND", raising=False)
    rc, err = _run(["--output", f"video:{kept_video}", "--output", "vcam:/dev/video97"], capsys)
    assert rc == 1 and "v4l2loopback" in err
    assert kept_video.read_bytes() == b"an earlier recording" * 100


@pytest.mark.parametrize("args, code, message", [
    (["--output", "video:/proc/swaycam.mp4"], 1, "cannot write /proc/swaycam.mp4"),
    (["--duration", "nan"], 2, "duration: nan is not a finite number"),
    (["--duration", "inf"], 2, "duration: inf is not a finite number"),
    (["--avatar-dir", "/no/such/folder"], 2, "--avatar-dir: '/no/such/folder' is not a folder"),
])
def test_bad_run_options_are_one_line_errors(args, code, message, capsys):
    rc, err = _run(args, capsys)
    assert (rc, err.count("\n")) == (code, 1) and message in err


@pytest.mark.parametrize("command", [["check-fps", "turn-test"], ["run", *SMALL, "--source", "turn-test"]])
def test_a_zero_scale_head_bone_is_an_error_naming_file_spring_and_node(tmp_path, capsys, command):
    """Issue 34 item 10: was a bare "Singular matrix" (check-fps) or a traceback (run)."""
    from tests.avatars.glb import with_scale
    from tests.conftest import asset
    from tests.solver.test_zero_scale import MESSAGE

    zero = with_scale(asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm"), tmp_path / "zero.vrm", (0, 0, 0))
    extra = ["--output", f"png:{tmp_path / 'png'}"] if command[0] == "run" else []
    assert main([*command, "--avatar", str(zero), *extra]) == 1
    assert capsys.readouterr().err == f"swaycam {command[0]}: {tmp_path}/{MESSAGE}\n"
    assert not (tmp_path / "png").exists() or not any((tmp_path / "png").iterdir())
