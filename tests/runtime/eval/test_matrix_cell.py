"""The quality matrix's pieces: axes, keys, the store, goals, and one cell = ``swaycam metrics``."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from runtime.cli import main
from runtime.eval.matrix.axes import Axes, Settings, SpecError, expand, load_toml, preset_path
from runtime.eval.matrix.cell import RUN_COLUMNS, measure_cell
from runtime.eval.matrix.goals import missed, worst_first
from runtime.eval.matrix.inputs import Inputs
from runtime.eval.matrix.key import CODE_SOURCES, cell_key, source_files
from runtime.eval.matrix.store import ResultStore, read_rows

LIBRARY = "assets:anim/ual/AnimationLibrary_Godot_Standard.gltf"
PUNCH = f"{LIBRARY}#Punch_Jab"


def test_presets_expand_to_their_documented_cell_counts():
    quick = expand(load_toml(preset_path("quick")))
    assert len(quick) == 8 and len({c.key for c in quick}) == 8
    assert {c.solver for c in quick} == {"rest-shape"} and quick[0].settings == Settings()
    full = load_toml(preset_path("full"))
    assert len(expand(full)) == 3 * 5 * 47 * 3          # avatars x (own + 4 styles) x (turn + 46 clips) x solvers


def test_a_library_is_one_cell_per_clip_and_a_named_clip_one():
    cells = expand(Axes(clips=(LIBRARY, PUNCH, "idle")))
    names = [c.clip for c in cells]
    assert len(names) == 46 + 1 and names[-1] == "idle" and PUNCH in names    # PUNCH is one of the 46: one cell
    assert [c.clip for c in expand(Axes(clips=(PUNCH, "idle")))] == [PUNCH, "idle"]
    assert names[0] == f"{LIBRARY}#A_TPose" and cells[0].clip_names == ("A_TPose",)


def test_toml_paths_are_relative_to_the_file_and_errors_name_the_value(tmp_path):
    (tmp_path / "av").mkdir()
    spec = tmp_path / "m.toml"
    spec.write_text('[matrix]\navatars = ["av/x.vrm"]\nsolvers = ["legacy"]\nrates = [24, 60]\nsettle_s = 3\n')
    axes = load_toml(spec)
    assert axes.avatars == (str(tmp_path / "av" / "x.vrm"),) and axes.settings.rates == (24, 60)
    with pytest.raises(SpecError, match="x.vrm"):
        expand(axes)
    spec.write_text('[matrix]\navatar = ["default"]\n')
    with pytest.raises(SpecError, match="unknown key"):
        load_toml(spec)
    with pytest.raises(SpecError, match="'nope' is not one of"):
        expand(Axes(solvers=("nope",)))
    with pytest.raises(SpecError, match="no preset"):
        preset_path("huge")


def test_keys_follow_inputs_and_settings():
    (cell,) = expand(Axes())
    assert cell_key(cell) == cell.key == expand(Axes())[0].key
    assert cell_key(replace(cell, settings=Settings(rates=(24, 60)))) != cell.key
    assert cell_key(replace(cell, solver="legacy")) != cell.key
    assert cell_key(replace(cell, avatar_input=replace(cell.avatar_input, digest="0" * 64))) != cell.key
    for name in CODE_SOURCES:            # a moved module must be renamed there, not dropped silently
        assert source_files(name)[1]


def test_store_round_trip_and_a_broken_cell_file_is_a_miss(tmp_path):
    store = ResultStore(tmp_path)
    row = {"key": "k1", "status": "ok", "error": None, "stretch_p99_pct": 1.0 / 3.0, "fps_labels": ["24 fps"],
           "fps_position_diff": [0.0]}
    store.put(row, {"key": "k1", "seconds": 1.5})
    assert store.get("k1") == (row, {"key": "k1", "seconds": 1.5})
    store.path("k2").write_text("{not json")
    assert store.get("k2") is None and store.get("k3") is None
    results, timings = store.write_tables([(row, {"key": "k1", "seconds": 1.5})])
    (back,) = read_rows(results)
    assert back["stretch_p99_pct"] == 1.0 / 3.0 and back["fps_labels"] == ["24 fps"] and back["chains"] is None
    assert read_rows(timings)[0]["seconds"] == 1.5
    assert not list(tmp_path.glob("cells/*.tmp"))


def test_goals_and_worst_first():
    good = {"key": "a", "status": "ok", "fps_identity": 0.0, "settle_mm": 0.0, "stretch_p99_pct": 9.0}
    curl = {**good, "key": "b", "tip_rest_arc_mm": 11.0, "stretch_p99_pct": 1.0}
    failed = {"key": "c", "status": "error"}
    assert missed(good) == [] and missed(curl) == ["tip_rest_arc_mm"]
    assert [r["key"] for r in worst_first([good, curl, failed])] == ["c", "b", "a"]


def test_stretch_goals_hold_by_the_kind_of_motion():
    """Head turn: p99 <= 8 %, worst <= 35 %; a body clip: p99 <= 15 %, worst <= 60 %; a row
    without a clip is held to neither."""
    turn = {"key": "t", "status": "ok", "clip": "turn-test", "stretch_p99_pct": 9.0, "stretch_worst_pct": 30.0}
    clip = {**turn, "key": "c", "clip": "lib.gltf#Jog_Fwd_Loop"}
    assert missed(turn) == ["stretch_p99_pct"] and missed(clip) == []
    assert missed({**clip, "stretch_p99_pct": 15.01}) == ["stretch_p99_pct"]
    assert missed({**clip, "stretch_worst_pct": 60.5}) == ["stretch_worst_pct"]
    assert missed({**turn, "stretch_p99_pct": 8.0, "stretch_worst_pct": 35.01}) == ["stretch_worst_pct"]
    assert missed({k: v for k, v in turn.items() if k != "clip"}) == []


def test_a_cell_has_the_numbers_of_swaycam_metrics(tmp_path, capsys):
    """default + bob01 playing a library clip, rest-shape: the matrix row's measured columns
    equal the metrics table's for the same (avatar, style, clip, solver), and its fps
    identity 0 is the table's '0 (identical)'."""
    (cell,) = expand(Axes(hairstyles=("bob01",), clips=(PUNCH,)))
    row, timing = measure_cell(cell, Inputs())
    assert row["status"] == "ok", row["error"]
    rc = main(["metrics", "--avatar", "default", "--hair", "bob01", "--motion", cell.clip_input.path + "#Punch_Jab",
               "--solver", "rest-shape", "--out", str(tmp_path)])
    assert rc == 0
    capsys.readouterr()
    (ref,) = json.loads((tmp_path / "hair_metrics.json").read_text())
    assert row["name"] == ref["avatar"] == "swaycam default + bob01 · Punch_Jab"
    assert {k: row[k] for k in RUN_COLUMNS} == {k: ref[k] for k in RUN_COLUMNS}
    # metrics's motion rows carry no attachment columns; its head-turn table says 58 / 58 / 0 / 0 for bob01
    assert [row[k] for k in ("guides", "attached", "joined", "rejected")] == [58, 58, 0, 0]
    assert ref["fps_identical"] == "0 (identical)" and row["fps_identity"] == 0.0
    assert row["fps_labels"] == ["24 fps", "30 fps", "60 fps", "120 fps", "144 fps", "60 fps ±50% jitter",
                                 "30 fps ±90% jitter", "144 fps ±95% jitter"]
    assert "substep_us_median" in timing and "substep_us_median" not in row     # timings apart from the identity


def test_a_cell_is_the_same_in_a_fresh_cache_and_after_other_cells():
    cells = expand(Axes(clips=("turn-test", "idle"), solvers=("legacy",)))
    warm = Inputs()
    measure_cell(cells[0], warm)
    again = measure_cell(cells[1], warm)[0]
    fresh = measure_cell(cells[1], Inputs())[0]
    assert again == fresh and fresh["status"] == "ok" and fresh["fps_identity"] == 0.0


def test_a_style_fitted_without_a_chain_is_a_skipped_row_not_a_failure():
    """A fitted style held rigidly on the head (no spring chain: the try-on gives every style
    of the corpus a chain today, so the fit is stripped of its springs here) is skipped with
    the try-on's report, as ``swaycam metrics`` leaves it out."""
    class RigidFits(Inputs):
        def fitted(self, avatar_inp, hair_inp, style):
            f = super().fitted(avatar_inp, hair_inp, style)
            return replace(f, result=replace(f.result, avatar=replace(f.result.avatar, springs=())))

    (cell,) = expand(Axes(hairstyles=("short02",)))
    row, _ = measure_cell(cell, RigidFits())
    assert row["status"] == "skipped" and "no spring chain" in row["error"] and row["stretch_p99_pct"] is None
    assert row["guides"] is not None and row["attached"] is not None      # the try-on's report says why


def test_an_avatar_without_springs_is_a_skipped_row_not_a_failure():
    (cell,) = expand(Axes(avatars=("assets:vrm/sphere.vrm",)))
    row, _ = measure_cell(cell, Inputs())
    assert row["status"] == "skipped" and "nothing to measure" in row["error"] and row["stretch_p99_pct"] is None


def test_progress_counts_and_estimate():
    import io

    from runtime.eval.matrix.progress import Progress

    out = io.StringIO()
    p = Progress(5, out)
    p.add_cached(2)
    p.start()
    p.cell("a", "ok", 1.0)
    p.cell("b", "error", 1.0)
    assert p.text().startswith("4/5 cells · 1 done · 1 failed · 2 cached · ") and p.text().endswith(" left")
    assert "FAILED b (1.0 s)" in out.getvalue() and p.eta_s() >= 0.0


def test_shipped_inputs_are_written_once_per_machine_with_their_names(tmp_path, monkeypatch):
    from runtime.eval.matrix.inputs import bundle, localize

    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path))
    (cell,) = expand(Axes(hairstyles=("bob01",), clips=(PUNCH,)))
    fetched = []

    def fetch(digest):
        fetched.append(digest)
        inp = next(i for i in (cell.avatar_input, cell.hair_input, cell.clip_input) if i.digest == digest)
        return bundle(inp)

    local, paths = localize(cell, fetch)
    assert len(fetched) == 3 and set(paths.values()) == {cell.avatar_input.path, cell.hair_input.path,
                                                          cell.clip_input.path}
    names = {Path(p).name for _, p in local.clip_input.files}
    assert names == {"AnimationLibrary_Godot_Standard.gltf", "AnimationLibrary_Godot_Standard.bin"}
    assert {Path(p).suffix for _, p in local.hair_input.files} == {".obj", ".mhmat", ".mhclo"}
    assert all(Path(p).read_bytes() == Path(q).read_bytes()
               for (_, p), (_, q) in zip(local.hair_input.files, cell.hair_input.files))
    assert localize(cell, fetch)[0] == local and len(fetched) == 3       # there already: nothing fetched


def test_ray_ships_the_checkout_only_to_a_cluster():
    from runtime.eval.matrix.executors import SHIPPED_EXCLUDES, RayExecutor, repo_root

    local = RayExecutor(None, 2).init_kwargs()
    assert local["num_cpus"] == 2 and "working_dir" not in local["runtime_env"]
    assert local["runtime_env"]["env_vars"]["PYTHONPATH"].split(os.pathsep)[0] == str(repo_root())
    cluster = RayExecutor("10.0.0.5:6379").init_kwargs()
    assert cluster["address"] == "10.0.0.5:6379" and "num_cpus" not in cluster
    assert cluster["runtime_env"] == {"working_dir": str(repo_root()), "excludes": SHIPPED_EXCLUDES}
    assert (repo_root() / "runtime" / "eval" / "matrix" / "cell.py").is_file()
