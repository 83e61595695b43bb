"""The solver benchmark runs and reports every set (a smoke test: no timing is asserted)."""

from __future__ import annotations

import io
import json

from solver.eval.bench import bench_avatar, run_solver_bench
from solver.eval.synthetic import hair_cap_avatar
from solver.eval.head_turn import head_turn_rotation


def test_bench_reports_median_and_p95_per_set(godette):
    sets = [("godette", lambda: godette), ("synthetic-64", lambda: hair_cap_avatar(64))]
    buf = io.StringIO()
    out = run_solver_bench(json_out=True, motion=head_turn_rotation, sets=sets, samples=40, stream=buf)
    parsed = json.loads(buf.getvalue())
    assert parsed["sets"].keys() == {"godette", "synthetic-64"}
    for name, r in out["sets"].items():
        for key in ("substep_us", "frame_60fps_us"):
            assert 0 < r[key]["median"] <= r[key]["p95"]
    assert out["sets"]["godette"]["joints"] == 16
    assert out["sets"]["synthetic-64"]["colliders"] == 16


def test_bench_table_output(smoke):
    buf = io.StringIO()
    run_solver_bench(sets=[("smoke", lambda: smoke)], samples=20, stream=buf)
    assert "smoke" in buf.getvalue() and "median" in buf.getvalue()


def test_bench_avatar_counts():
    r = bench_avatar(hair_cap_avatar(64), head_turn_rotation, samples=10)
    assert r["joints"] == 64 and r["collider_refs"] == 64 * 16
