"""The runtime's substep as ``swaycam bench solver`` times it (runtime.eval.rig_bench), and the
injected factory end to end (no timing asserted)."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np

from avatars import load_avatar
from avatars.clips.head_turn import head_turn_rotation
from runtime.eval.rig_bench import PosedRig, posed_rig
from solver.eval.bench import run_solver_bench


def test_posed_rig_runs_the_loop_path(godette_path):
    avatar = load_avatar(godette_path)
    assert posed_rig(replace(avatar, humanoid={}), "rest-shape") is None
    p = posed_rig(avatar, "legacy")
    assert isinstance(p, PosedRig) and p.rig.solver == "legacy"
    p.reset(0)
    for n in range(1, 121):
        p.substep(n * 1_000_000_000 // 120)
    p.draw(120 * 1_000_000_000 // 120 - 4_166_666, 0.5)
    assert p.rig.chains.steps == 120
    world = p.rig.draw_world
    want = world[p.skin.nodes] @ np.concatenate([s.inverse_bind for s in avatar.skins]
                                                + [np.eye(4)[None] for m in avatar.mesh_instances if m.skin < 0])
    assert np.abs(p.skin.current - want).max() < 1e-13


def test_solver_bench_with_the_runtime_rig(godette_path):
    avatar = load_avatar(godette_path)
    out = run_solver_bench(sets=[("godette", lambda: avatar)], samples=40, motion=head_turn_rotation,
                           rig=posed_rig, stream=io.StringIO())
    r = out["sets"]["godette"]
    assert 0 < r["substep_with_pose_us"]["median"] <= r["substep_with_pose_us"]["p95"]
    assert 0 < r["frame_60fps_with_pose_us"]["median"] <= r["frame_60fps_with_pose_us"]["p95"]
