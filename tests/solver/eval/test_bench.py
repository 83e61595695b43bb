"""The solver benchmark runs and reports every set (a smoke test: no timing is asserted)."""

from __future__ import annotations

import io
import json

from avatars.clips.head_turn import head_turn_rotation
from solver.eval.bench import bench_avatar, run_solver_bench
from solver.eval.synthetic import hair_cap_avatar


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


class _FakePosed:
    """A PosedSubstep that counts its calls (the runtime injects the real one)."""

    def __init__(self):
        self.calls = {"reset": 0, "substep": 0, "draw": 0}
        self.times = []

    def reset(self, t_ns):
        self.calls["reset"] += 1

    def substep(self, t_ns):
        self.calls["substep"] += 1
        self.times.append(t_ns)

    def draw(self, t_ns, alpha):
        self.calls["draw"] += 1
        assert alpha == 0.5 and t_ns == self.times[-1] - (1_000_000_000 // 120) // 2


def test_bench_times_an_injected_rig(godette):
    fakes = {}

    def factory(avatar, solver):
        if avatar.head_node() < 0:
            return None
        fakes[avatar.path] = f = _FakePosed()
        return f

    from dataclasses import replace
    headless = replace(godette, humanoid={}, path="<no head>")
    buf = io.StringIO()
    out = run_solver_bench(sets=[("godette", lambda: godette), ("headless", lambda: headless)], samples=40,
                           stream=buf, rig=factory)
    g, h = out["sets"]["godette"], out["sets"]["headless"]
    for key in ("substep_with_pose_us", "frame_60fps_with_pose_us"):
        assert 0 < g[key]["median"] <= g[key]["p95"]
        assert key not in h
    assert g["substep_with_pose_ratio"] == g["substep_with_pose_us"]["median"] / g["substep_us"]["median"]
    f = fakes[godette.path]
    assert f.calls == {"reset": 2, "substep": 8 + 40 + 2 * 20, "draw": 1 + 20}
    grid = {(n + 1) * 1_000_000_000 // 120 for n in range(480)}   # the 120 Hz grid over the head motion
    assert set(f.times) <= grid
    assert "with the runtime's posing" in buf.getvalue() and "headless" not in buf.getvalue().split("posing")[1]
