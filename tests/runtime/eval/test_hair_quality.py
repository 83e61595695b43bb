"""The hair-quality report: a short standard run on real avatars, the files it writes."""

from __future__ import annotations

import json

import pytest

from avatars import load_avatar
from avatars.clips.head_turn import head_turn_rotation
from avatars.generate import default_avatar_path
from runtime.cli import main
from runtime.eval.hair_quality import markdown, write_report
from solver.eval.measure import standard_run

EXACT_MM = 1e-9       # roots are carried exactly (round-off only)
SETTLED_MM = 0.001    # docs/design.md §4.5 target for the last 2 s


@pytest.fixture(scope="module")
def default_rows():
    av = load_avatar(default_avatar_path())
    return [standard_run(av, head_turn_rotation, solver=s, name="default", motion_s=4.0, still_s=3.0)
            for s in ("rest-shape", "legacy")]


def test_standard_run_measures_the_default_avatar(default_rows):
    rest, legacy = default_rows
    assert rest.hair_vertices == 1255 and rest.chains == 9 and rest.joints == 29
    assert rest.root_drift_mm < EXACT_MM and legacy.root_drift_mm < EXACT_MM
    assert rest.settle_mm < SETTLED_MM
    assert rest.tip_rest_arc_mm < 1e-6 < 1.0 < legacy.tip_rest_arc_mm      # legacy curls, rest-shape does not
    assert 0.0 < rest.stretch_p99_pct < legacy.stretch_p99_pct
    assert rest.link_max_depth_beyond_rest_mm <= 1.0                        # no link deeper than 1 mm
    assert rest.tips.shape == (7 * 30, 9, 3) and rest.tip_times[-1] == pytest.approx(7.0)
    assert rest.edge_max_ratio.min() >= 1.0 - 1e-9 or rest.edge_max_ratio.size == 0


def test_report_files(default_rows, tmp_path):
    files = write_report(default_rows, tmp_path)
    md = files["markdown"].read_text()
    assert "| default | rest-shape |" in md and "p99 stretch %" in md and "60 fps frame µs (p95)" in md
    rows = json.loads(files["json"].read_text())
    assert [r["solver"] for r in rows] == ["rest-shape", "legacy"]
    assert {"stretch_p99_pct", "settle_mm", "tip_rest_arc_mm", "frame_update_us_p95"} <= set(rows[0])
    assert {p.name for p in files["plots"]} == {"tips_default.png", "stretch_default.png"}
    assert all(p.stat().st_size > 5000 for p in files["plots"])
    assert markdown(default_rows).count("\n| default |") == 4


def test_metrics_cli_on_godette(tmp_path, godette_path, capsys):
    rc = main(["metrics", "--avatar", str(godette_path), "--solver", "rest-shape", "--no-fps-check",
               "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "| Low-Poly Godette | rest-shape |" in out
    row = json.loads((tmp_path / "hair_metrics.json").read_text())[0]
    assert row["joints"] == 16 and row["hair_vertices"] == 229
    assert row["settle_mm"] < SETTLED_MM and row["root_drift_mm"] < EXACT_MM
    # Godette's authored rest pose already has links inside its colliders; none goes deeper
    assert row["link_max_depth_mm"] > 10.0 and row["link_max_depth_beyond_rest_mm"] < 0.01


def test_metrics_cli_gravity_shows_the_legacy_curl_on_godette(tmp_path, godette_path, capsys):
    """Godette's file sets no gravity, so both solvers return to rest; under 9.81 m/s² the
    legacy solver keeps a curl (the tentacle) and the rest-shape solver does not."""
    rc = main(["metrics", "--avatar", str(godette_path), "--gravity", "9.81", "--no-fps-check",
               "--out", str(tmp_path)])
    assert rc == 0
    assert "| Low-Poly Godette, g = 9.81 m/s² | legacy |" in capsys.readouterr().out
    rest, legacy = json.loads((tmp_path / "hair_metrics.json").read_text())
    assert (rest["solver"], legacy["solver"]) == ("rest-shape", "legacy")
    assert rest["tip_rest_arc_mm"] < 1e-6 < 1.0 < legacy["tip_rest_arc_mm"]
    assert rest["settle_mm"] < SETTLED_MM and rest["root_drift_mm"] < EXACT_MM


def test_metrics_cli_rejects_a_non_finite_gravity(tmp_path, capsys):
    assert main(["metrics", "--avatar", "default", "--gravity", "nan", "--out", str(tmp_path)]) == 2  # usage error
    assert "--gravity: nan is not a finite number" in capsys.readouterr().err


def _table_before_tryon(rows, columns) -> str:
    """The table as written before rows could carry a try-on report (the reference for 'the
    default table is unchanged bit for bit')."""
    head = "| " + " | ".join(c[1] for c in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    lines = [head, sep]
    for r in rows:
        d = r.row()
        lines.append("| " + " | ".join(fmt.format(d[key]) for key, _, fmt in columns) + " |")
    return "\n".join(lines)


def test_the_default_table_is_unchanged_by_the_tryon_columns(default_rows):
    from runtime.eval.hair_quality import QUALITY_COLUMNS, TIMING_COLUMNS

    before = ("Hair quality (standard head turn: 4 s of motion, 8 s still; physics 120 Hz, mesh sampled at 30 Hz)\n\n"
              + _table_before_tryon(default_rows, QUALITY_COLUMNS) + "\n\nTiming (this machine, CPU; a 60 fps frame "
              "= 2 substeps + posing + skinning matrices)\n\n" + _table_before_tryon(default_rows, TIMING_COLUMNS)
              + "\n")
    assert markdown(default_rows) == before == markdown(default_rows, attachments={})
    assert "| guides |" not in before


def test_metrics_hair_fits_and_measures_with_the_attachment_report(tmp_path, capsys, monkeypatch):
    """``metrics --hair``: the style fitted on the avatar, measured, the attachment columns in the
    table and the JSON; a short crop gets a chain and is measured too (it was skipped, chainless,
    before the try-on's short-hair chains); an exported try-on file measures like the fitted
    avatar it was written from."""
    default = str(default_avatar_path())
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "cache"))      # a fresh fit cache
    rc = main(["metrics", "--avatar", default, "--hair", "ponytail01", "--hair", "short02", "--solver", "rest-shape",
               "--no-fps-check", "--out", str(tmp_path / "m")])
    assert rc == 0
    out, err = capsys.readouterr()
    assert "| avatar | solver | guides | attached | joined | rejected | p99 stretch % |" in out
    assert "| swaycam default + ponytail01 | rest-shape | 74 | 74 | 0 | 0 |" in out
    assert "| swaycam default + short02 | rest-shape | 18 | 18 | 0 | 0 |" in out and "no spring chain" not in err
    row = json.loads((tmp_path / "m" / "hair_metrics.json").read_text())[0]
    assert (row["guides"], row["attached"], row["joined"], row["rejected"]) == (74, 74, 0, 0)
    assert row["root_drift_mm"] < EXACT_MM and row["settle_mm"] < SETTLED_MM
    # the same hair exported as VRM 1.0 and measured as a file
    assert main(["hair", "fit", "ponytail01", "--avatar", default, "--out", str(tmp_path / "p.vrm")]) == 0
    capsys.readouterr()
    assert main(["metrics", "--avatar", str(tmp_path / "p.vrm"), "--solver", "rest-shape", "--no-fps-check",
                 "--out", str(tmp_path / "e")]) == 0
    exported = json.loads((tmp_path / "e" / "hair_metrics.json").read_text())[0]
    for key in ("stretch_p99_pct", "stretch_worst_pct", "hair_vertices", "joints", "tip_swing_mm"):
        assert exported[key] == row[key], key
    assert main(["metrics", "--hair", "no-such-style", "--out", str(tmp_path / "x")]) == 1
    assert "no hair style named 'no-such-style'" in capsys.readouterr().err
