"""The audit's rows and page from records and matrix rows made here: a refused style, a rigid
one (no chain: the matrix skipped its cells), a failed cell, an interrupted audit; the live
command's ``--hair-dir`` only for a folder a plain run does not search; the totals and the
page's headline, classes and data attributes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from runtime.eval.audit.page import write_page
from runtime.eval.audit.plan import Entry
from runtime.eval.audit.rows import audit_row, live_command, totals

SHARED = Path("/assets/hair")


def _entry(style="bob01", folder=SHARED, avatar="default", clip=True) -> Entry:
    turn = SimpleNamespace(key=f"{style}-{avatar}-turn", clip="turn-test")
    fast = SimpleNamespace(key=f"{style}-{avatar}-clip", clip="lib.gltf#Sprint_Loop") if clip else None
    return Entry(style, folder / style / f"{style}.obj", folder, "shared", avatar, Path(f"/cache/{avatar}.vrm"),
                 turn, fast)


def _record(candidates=10, attached=7, joined=2, rejected=1, missed=3, chains=4) -> dict:
    return {"status": "ok", "error": None, "guides": {"candidates": candidates, "attached": attached,
                                                      "joined": joined, "rejected": rejected},
            "vertices_missed": missed, "chains": chains, "joints": 5 * chains, "hair_vertices": 900,
            "fit": {"method": "inner surface"}, "fit_seconds": 1.25}


def _cell(status="ok", p99=4.0, worst=20.0, depth=0.0, fps=0.0, error=None, **extra) -> dict:
    return {"status": status, "error": error, "hair_edges": 120, "stretch_p99_pct": p99, "stretch_worst_pct": worst,
            "tip_swing_mm": 30.0, "head_inside": 0, "head_depth_mm": 0.0, "scalp_drift_mm": 0.0,
            "vertex_max_depth_beyond_rest_mm": depth, "fps_identity": fps, **extra}


def _row(entry, record, turn, clip):
    return audit_row(entry, record, turn, clip, thumbs={}, default_folders=[SHARED])


def test_a_measured_row_merges_the_fit_and_both_cells():
    row = _row(_entry(), _record(), _cell(p99=4.0, worst=20.0, depth=0.5), _cell(p99=12.0, worst=50.0, depth=2.0))
    assert row["status"] == "ok" and row["error"] is None
    assert (row["candidates"], row["attached"], row["joined"], row["rejected"]) == (10, 7, 2, 1)
    assert row["attached_pct"] == pytest.approx(90.0)          # joined count as attached (the seed's share)
    assert (row["turn_p99_pct"], row["turn_worst_pct"], row["clip_p99_pct"], row["clip_worst_pct"]) == \
        (4.0, 20.0, 12.0, 50.0)
    assert row["collider_depth_mm"] == 2.0 and row["fps_identity"] == 0.0 and row["method"] == "inner surface"
    assert row["command"] == "swaycam run --avatar default --hair bob01"


def test_refused_rigid_failed_and_unmeasured_rows():
    refused = _row(_entry(), {"status": "refused", "error": "bob01: no scalp"}, None, None)
    assert refused["status"] == "refused" and refused["error"] == "bob01: no scalp" and refused["candidates"] is None
    rigid = _row(_entry(), _record(chains=0), _cell("skipped", None, None, error="no spring chain"),
                 _cell("skipped", None, None, error="no spring chain"))
    assert rigid["status"] == "rigid" and rigid["turn_p99_pct"] is None and rigid["chains"] == 0
    failed = _row(_entry(), _record(), _cell(), _cell("error", None, None, error="ClipError: bad"))
    assert failed["status"] == "error" and failed["error"] == "ClipError: bad" and failed["turn_p99_pct"] == 4.0
    waiting = _row(_entry(), _record(), _cell(), None)
    assert waiting["status"] == "error" and "interrupted" in waiting["error"]
    head_only = _row(_entry(clip=False), _record(), _cell(), None)
    assert head_only["status"] == "ok" and head_only["clip_p99_pct"] is None
    unmeasured = _row(_entry(), _record(), _cell(p99=0.0, worst=0.0, hair_edges=0), _cell(p99=0.0, hair_edges=0))
    assert unmeasured["status"] == "ok" and unmeasured["turn_edges"] == 0
    assert (unmeasured["turn_p99_pct"], unmeasured["turn_worst_pct"], unmeasured["clip_p99_pct"]) == (None,) * 3
    t = totals([refused, rigid, failed, waiting, head_only])
    assert (t["entries"], t["fitted"], t["refused"], t["rigid"], t["errors"], t["measured"]) == (5, 4, 1, 1, 2, 1)
    assert (t["candidates"], t["attached"], t["joined"], t["rejected"]) == (40, 28, 8, 4)
    assert t["attached_pct"] == pytest.approx(90.0) and t["vertices_missed"] == 12 and t["with_rejected"] == 4


def test_the_live_command_names_a_hair_folder_only_when_a_plain_run_would_not_search_it():
    assert live_command(_entry(), [SHARED]) == "swaycam run --avatar default --hair bob01"
    corpus = _entry("proc_bun", Path("/out/audit/corpus"), "/a/Godette v4.vrm")
    corpus = Entry(*[getattr(corpus, f) for f in ("style", "style_path", "folder", "source", "avatar")],
                   Path("/a/Godette v4.vrm"), corpus.turn, corpus.clip)
    assert live_command(corpus, [SHARED]) == \
        "swaycam run --avatar '/a/Godette v4.vrm' --hair-dir /out/audit/corpus --hair proc_bun"


def test_the_page_colours_the_bars_and_carries_the_values(tmp_path):
    rows = [_row(_entry("a"), _record(), _cell(p99=9.0, worst=20.0), _cell(p99=12.0, worst=61.0)),
            _row(_entry("b"), {"status": "refused", "error": "b: <no opening>"}, None, None)]
    text = write_page(tmp_path, rows, clip="lib.gltf#Sprint_Loop", settings={"rates": [30, 120], "settle_s": 8.0,
                                                                              "duration_s": None}).read_text()
    assert "1 of 2 style × avatar fits · saved audit" in text and "fast clip: Sprint_Loop" in text
    assert "<td class=\"num missed\">9.00</td>" in text and "<td class=\"num met\">20.0</td>" in text
    assert "<td class=\"num met\">12.00</td>" in text and "<td class=\"num missed\">61.0</td>" in text
    assert 'data-turn_p99_pct="9.0"' in text and 'data-rejected="1"' in text and 'data-rejected=""' in text
    assert "refused: b: &lt;no opening&gt;" in text
