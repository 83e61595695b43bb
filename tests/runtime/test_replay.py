"""Replays and the frame-rate check on a track recorded from real footage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from avatars import load_avatar
from runtime.cli import main
from runtime.replay import CHECK_JITTERED, CHECK_RATES, check_fps, replay
from tracking.pose_filter import filter_observations
from tracking.track_io import load_track, save_track


@pytest.fixture(scope="module")
def selfie_track(selfie_tracked):
    return filter_observations(selfie_tracked.chosen)


def test_check_fps_on_real_footage_is_exactly_zero(selfie_track, godette_path):
    rows = check_fps(load_avatar(godette_path), selfie_track, duration_ns=3_000_000_000)
    assert len(rows) == len(CHECK_RATES) + len(CHECK_JITTERED)
    for r in rows:
        assert r.substeps == 3 * 120 + 1
        assert (r.max_position_diff, r.max_velocity_diff) == (0.0, 0.0), r


def test_check_fps_cli_exit_code_and_table(selfie_track, godette_path, tmp_path, capsys):
    path = tmp_path / "selfie.jsonl"
    save_track(selfie_track, path)
    assert len(load_track(path)) == 225
    rc = main(["check-fps", str(path), "--avatar", str(godette_path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["identical"] is True
    assert [r["label"] for r in out["rows"]][:5] == ["24 fps", "30 fps", "60 fps", "120 fps", "144 fps"]


def test_replay_dump(tmp_path, godette_path, capsys):
    dump = tmp_path / "states.npz"
    assert main(["replay", "turn-test", "--fps", "30", "--avatar", str(godette_path), "--dump", str(dump)]) == 0
    d = np.load(dump)
    assert d["t_ns"].shape == (12 * 120 + 1,)
    assert d["tails"].shape == (12 * 120 + 1, 16, 3) and d["velocities"].shape == d["tails"].shape
    assert int(d["frames"]) == 12 * 30 + 1
    assert np.array_equal(d["t_ns"], (np.arange(12 * 120 + 1) * 1_000_000_000) // 120)


def test_replay_dump_names_the_file_it_writes(tmp_path, godette_path, capsys):
    args = ["replay", "turn-test", "--fps", "30", "--avatar", str(godette_path)]
    assert main([*args, "--dump", str(tmp_path / "states")]) == 0
    assert f"hair states: {tmp_path / 'states.npz'}" in capsys.readouterr().out
    assert (tmp_path / "states.npz").is_file()
    assert main([*args, "--dump", str(tmp_path)]) == 1          # a folder is not a file name
    assert "is a folder; give a file name such as states.npz" in capsys.readouterr().err


def test_legacy_solver_differs_from_rest_shape(selfie_track, godette_path):
    av = load_avatar(godette_path)
    a = replay(av, selfie_track, 30, duration_ns=1_000_000_000)
    b = replay(av, selfie_track, 30, solver="legacy", duration_ns=1_000_000_000)
    assert np.abs(a.tails - b.tails).max() > 1e-4
