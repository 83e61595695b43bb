"""The seed articles' Seed-san experiment on our own file: clear the generated default
avatar's ponytail weights and spring, rebuild the ponytail from its mesh with the try-on
rig, and compare with the authored rig on the standard head turn."""

from __future__ import annotations

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from avatars.hair import hair_from_avatar
from avatars.tryon import try_on
from solver.eval.measure import standard_run
from solver.eval.tryon_quality import MeshPart, measure_tryon, run_hair


@pytest.fixture(scope="module")
def rebuild(target_avatars):
    av = target_avatars["default"]
    pony = hair_from_avatar(av, spring="Ponytail")
    return av, pony, try_on(av, pony)


def test_the_ponytail_is_rebuilt_from_its_mesh(rebuild):
    av, pony, res = rebuild
    assert res.fit.placement == "kept" and res.fit.max_push == 0.0
    assert [s.name for s in res.avatar.springs if not s.name.startswith("TryOn")] == \
        [s.name for s in av.springs if s.name != "Ponytail"]
    assert len(res.chains) == 1 and 4 <= len(res.chains[0].nodes) <= 8
    # the ponytail's triangles left the authored hair mesh; the bangs, locks, cap and tie stayed
    hair = [mi for mi in res.avatar.mesh_instances if res.avatar.meshes[mi.mesh].name == "Hair"]
    assert len(hair) == 1
    before = av.meshes[av.mesh_instances[2].mesh].primitives[0]
    after = res.avatar.meshes[hair[0].mesh].primitives[0]
    assert len(after.indices) == len(before.indices) - 3 * len(pony.origin[0].triangles)


def test_rebuilt_rig_stretches_no_more_than_the_authored_one(rebuild):
    av, pony, res = rebuild
    authored = standard_run(av, head_turn_rotation, name="authored")
    rebuilt = standard_run(res.avatar, head_turn_rotation, name="rebuilt")
    assert rebuilt.stretch_p99_pct <= authored.stretch_p99_pct
    assert rebuilt.stretch_worst_pct <= authored.stretch_worst_pct
    assert rebuilt.settle_mm < 1e-3 and authored.settle_mm < 1e-3
    assert rebuilt.root_drift_mm < 1e-6 and rebuilt.vertex_inside == 0
    # the ponytail alone: spring-dominated edges as the articles count them, and every edge
    o = pony.origin[0]
    a = run_hair(av, [MeshPart(o.instance, o.primitive, o.vertices)], springs=("Ponytail",))
    b = measure_tryon(res)
    assert b.stretch_p99_pct <= a.stretch_p99_pct and b.stretch_worst_pct <= a.stretch_worst_pct
    assert b.all_edges_p99_pct <= a.all_edges_p99_pct and b.all_edges_worst_pct <= a.all_edges_worst_pct
    assert b.scalp_drift_m < 1e-9 and b.settle_mm < 1e-3
    assert b.tip_swing_mm > 5.0          # it still moves


def test_scalp_drift_is_measured_not_assumed(rebuild):
    """Moving a root's barycentric weights off its joint shows up as drift: the measure is real."""
    from dataclasses import replace

    from solver.eval.tryon_quality import tryon_parts

    _, _, res = rebuild
    parts, roots = tryon_parts(res)
    off = [replace(r, bary=np.array([1.0, 0.0, 0.0])) for r in roots]
    run = run_hair(res.avatar, parts, roots=off, springs=tuple(s.name for s in res.avatar.springs
                                                                 if s.name.startswith("TryOn")),
                   motion_s=1.0, still_s=0.0)
    assert run.scalp_drift_m > 1e-6
