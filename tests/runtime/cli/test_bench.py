"""``swaycam bench TARGET``: the options of every benchmark (declared in runtime/cli/bench.py),
their ``--json`` / ``--out`` output, and ``bench all``."""

from __future__ import annotations

import json

import pytest

from runtime.cli import bench, main
from tests.conftest import asset


def test_bench_tracker_help_keeps_the_tracker_options(capsys):
    assert main(["bench", "tracker", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: swaycam bench tracker")
    for option in ("--clip FILE", "--frames N", "--model PATH", "--num-faces N", "--json", "--out FILE"):
        assert option in out


def test_bench_tracker_json(android_gif, model_path, tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["bench", "tracker", "--clip", str(android_gif), "--frames", "8", "--model", str(model_path),
                 "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["clip"] == str(android_gif) and printed["frames_per_size"] == 8
    assert [(r["width"], r["height"], r["frames"]) for r in printed["sizes"]] == [(640, 360, 3), (1280, 720, 3)]
    for r in printed["sizes"]:
        for name in ("ours", "raw", "fixed"):
            assert 0 < r[f"{name}_median_ms"] <= r[f"{name}_p95_ms"]
        p = r["policy_frames"]
        assert r["num_faces"] == 4 and p["one"] + p["many"] + p["fallback"] == 8   # every frame ran a landmarker
        assert r["probe"] == "detector" and p["probe"] >= 1                        # the first frame probes
        assert r["face_frames"] == 3     # the portrait GIF is pillarboxed, not squeezed: its face is found
        assert r["ours_minus_raw_median_ms"] <= r["ours_minus_raw_p95_ms"]
        assert all(isinstance(r[f"ours_minus_raw_{k}_ms"], float) for k in ("median", "p95", "mean"))


def test_bench_tracker_table(android_gif, model_path, capsys):
    assert main(["bench", "tracker", "--clip", str(android_gif), "--frames", "7", "--model", str(model_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"tracker on {android_gif} (7 frames per size; ours: num_faces=4, adaptive; ")
    assert "640x360: ours " in out and "1280x720: ours " in out
    assert out.count("ours - raw per frame: median ") == 2 and out.count("(detector)") == 2
    assert out.count("a face found in 2 of 2 timed frames") == 2 and "warning" not in out


def test_bench_tracker_warns_when_no_face_is_timed(tmp_path, model_path, capsys):
    import cv2
    import numpy as np

    clip = tmp_path / "empty.mp4"
    w = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"mp4v"), 25, (320, 180))
    for k in range(8):
        w.write(np.full((180, 320, 3), 40 + 10 * k, np.uint8))     # a grey wall, no face
    w.release()
    assert main(["bench", "tracker", "--clip", str(clip), "--frames", "7", "--model", str(model_path),
                 "--num-faces", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("a face found in 0 of 2 timed frames") == 2
    assert out.count("warning: no face in most frames") == 2
    assert out.count("not adaptive (num_faces=1)") == 2


def test_bench_solver_json(monkeypatch, capsys):
    import solver.eval.bench as solver_bench
    from solver.eval.synthetic import hair_cap_avatar

    monkeypatch.setattr(solver_bench, "default_sets", lambda: [("synthetic-64", lambda: hair_cap_avatar(64))])
    assert main(["bench", "solver", "--samples", "10", "--solver", "legacy", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)        # the JSON document only, no table
    assert doc["solver"] == "legacy" and list(doc["sets"]) == ["synthetic-64"]
    assert 0 < doc["sets"]["synthetic-64"]["substep_us"]["median"]


def test_bench_solver_set_picks_sets_and_refuses_unknown_ones(monkeypatch, capsys):
    import solver.eval.bench as solver_bench
    from solver.eval.synthetic import hair_cap_avatar

    monkeypatch.setattr(solver_bench, "default_sets", lambda: [("synthetic-64", lambda: hair_cap_avatar(64)),
                                                               ("synthetic-256", lambda: hair_cap_avatar(256))])
    assert main(["bench", "solver", "--set", "nope"]) == 2
    assert capsys.readouterr().err.strip() == ("swaycam bench solver: --set: unknown set nope "
                                               "(sets here: synthetic-64, synthetic-256)")
    assert main(["bench", "solver", "--set", "synthetic-256", "--samples", "10", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["sets"]) == ["synthetic-256"]


def test_bench_solver_reference_without_node_is_one_clear_error(monkeypatch, tmp_path, capsys):
    """No Node.js on PATH and nothing installed: exit 2 with one line saying what is missing,
    before any benchmark set runs."""
    monkeypatch.setenv("SWAYCAM_THREEVRM_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["bench", "solver", "--reference", "--samples", "10"]) == 2
    err = capsys.readouterr()
    assert err.err.strip() == ("swaycam bench solver: --reference: node is not on PATH; "
                               "the three-vrm reference needs Node.js and npm")
    assert err.out == ""


def test_bench_render_cli_json_and_out(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "render", "--avatar", str(asset("vrm", "Godette_vrm_v4.vrm")), "--size", "64x36",
                 "--frames", "2", "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert [r["size"] for r in printed["results"]] == [[64, 36]]
    assert main(["bench", "render", "--avatar", "default", "--size", "64x36", "--frames", "2", "--rounds", "1",
                 "--detail", "full", "--detail", "reduced", "--readback", "pbo", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [(r["detail"], r["readback"]) for r in printed["results"]] == [("full", "pbo"), ("reduced", "pbo")]
    for bad in ("64by36", "10x10"):
        assert main(["bench", "render", "--size", bad]) == 2
        assert "--size: expected WxH between 16x16 and 7680x4320" in capsys.readouterr().err


def _fake(result, fail=None):
    def measure(args, text):
        if fail:
            raise fail
        if text:
            print(f"table {result}")
        return {"value": result}
    return measure


def test_bench_all_runs_every_target_and_reports_each_failure(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench, "MEASURE", {"solver": _fake(1), "render": _fake(2, fail=OSError("no GPU here")),
                                           "tracker": _fake(3), "loop": _fake(4), "tryon": _fake(5),
                                           "panel": _fake(6)})
    assert main(["bench", "all"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["== solver", "table 1", "== render", "== tracker", "table 3", "== loop", "table 4",
                                "== tryon", "table 5", "== panel", "table 6"]
    assert err == "swaycam bench render: no GPU here\n"
    doc = tmp_path / "all.json"
    assert main(["bench", "all", "--json", "--out", str(doc)]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == json.loads(doc.read_text()) == {
        "solver": {"value": 1}, "tracker": {"value": 3}, "loop": {"value": 4}, "tryon": {"value": 5},
        "panel": {"value": 6}}
    assert err == "swaycam bench render: no GPU here\n"


@pytest.mark.parametrize("target", bench.TARGETS)
def test_a_failing_target_is_one_line_exit_1(target, monkeypatch, capsys):
    monkeypatch.setattr(bench, "MEASURE", {**bench.MEASURE, target: _fake(0, fail=ValueError("no frames"))})
    assert main(["bench", target]) == 1
    assert capsys.readouterr().err == f"swaycam bench {target}: no frames\n"


@pytest.mark.parametrize("argv, fragment", [
    (["--no-offline", "--no-live", "--no-table"], "leave nothing to run"),
    (["--size", "641x361"], "--size 641x361: the runs encode H.264, which needs an even width and height"),
])
def test_bench_loop_usage_errors_before_anything_runs(argv, fragment, capsys):
    assert main(["bench", "loop", *argv]) == 2
    assert fragment in capsys.readouterr().err
