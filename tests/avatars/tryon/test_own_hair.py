"""The avatar's own hair cut out of meshes it shares with the face or body
(avatars/tryon/own_hair.py): found on Godette (her bangs and shell in BodyMesh, her three buns
in FaceMesh, by the weights to her hair springs), hidden per triangle when another style is
tried on (the index buffers lose exactly those triangles; nothing else changes), said in the
report, and re-rigged with the try-on pipeline: it swings, the face and body do not move,
the export reloads."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.hair import load_hair
from avatars.tryon import TryOnSettings, try_on
from avatars.tryon.own_hair import find_own_hair, own_hair_source
from tests.conftest import asset

#: Godette's hair: her shell (139 triangles of BodyMesh) and three buns (80 each, FaceMesh).
GODETTE_HAIR = {"BodyMesh": 139, "FaceMesh": 240}


def _names(av, masks):
    return {av.meshes[av.mesh_instances[k].mesh].name: int(m.sum()) for (k, p), m in masks.items()}


def test_godettes_hair_is_found_in_her_face_and_body_meshes(target_avatars):
    av = target_avatars["godette"]
    own = find_own_hair(av)
    assert own.instances == () and _names(av, own.triangle_masks()) == GODETTE_HAIR
    assert own.methods() == ["spring weights"]
    # her face skin has two corners weighted to a bang: not hair
    face = av.mesh_instances[0]
    mask = own.triangle_masks()[(0, 0)]
    tris = av.meshes[face.mesh].primitives[0].indices.reshape(-1, 3)
    assert (~mask).sum() > 100 and len(tris) == len(mask)


def test_whole_hair_meshes_and_no_hair(target_avatars):
    own = find_own_hair(target_avatars["default"])
    assert own.parts == () and [target_avatars["default"].meshes[target_avatars["default"].mesh_instances[k].mesh].name
                                for k in own.instances] == ["Hair"]
    assert find_own_hair(load_avatar(asset("vrm", "debug_robot.vrm"))).empty


@pytest.fixture(scope="module")
def godette_long01(target_avatars):
    return try_on(target_avatars["godette"], load_hair(asset("hair", "long01", "long01.obj")))


def test_a_style_on_godette_hides_her_hair_per_triangle(target_avatars, godette_long01):
    av, res = target_avatars["godette"], godette_long01
    out = res.avatar
    for k, mi in enumerate(av.mesh_instances):
        before = av.meshes[mi.mesh].primitives[0]
        after = out.meshes[out.mesh_instances[k].mesh].primitives[0]
        cut = GODETTE_HAIR[av.meshes[mi.mesh].name]
        assert len(after.indices) == len(before.indices) - 3 * cut
        # the rest of the mesh is untouched: vertices, weights, morph targets
        assert np.array_equal(after.positions, before.positions) and np.array_equal(after.weights, before.weights)
        assert np.array_equal(after.morph_positions, before.morph_positions)
    own = res.summary()["own_hair"]
    assert own["hidden"] and own["triangles"] == 379 and own["cut_from"] == ["BodyMesh", "FaceMesh"]
    assert own["methods"] == ["spring weights"]
    # her hair springs moved nothing visible any more: dropped; the ribbon stays
    assert {s.name for s in out.springs if not s.name.startswith("TryOn")} == {"boneGroup1/Ribbon"}


def test_keeping_the_own_hair_says_so(target_avatars):
    res = try_on(target_avatars["godette"], load_hair(asset("hair", "short02", "short02.obj")),
                 TryOnSettings(hide_own_hair=False))
    own = res.summary()["own_hair"]
    assert own["found"] and not own["hidden"]
    from avatars.tryon.pipeline import own_hair_text

    assert own_hair_text(own).startswith("kept: 379 triangles cut out of BodyMesh/FaceMesh")


@pytest.fixture(scope="module")
def godette_rerig(target_avatars):
    av = target_avatars["godette"]
    return av, try_on(av, own_hair_source(av))


def test_godettes_own_hair_is_rerigged(godette_rerig):
    av, res = godette_rerig
    assert res.fit.placement == "kept" and len(res.chains) >= 3
    assert res.guide_report.attached_share == 1.0
    names = {s.name for s in res.avatar.springs}
    assert not any(n.startswith(("boneGroup0/", "boneGroup2/")) for n in names)   # her old hair springs
    # her textured materials are kept: a primitive per material of the hair she had
    prims = res.avatar.meshes[res.avatar.mesh_instances[res.hair_instance].mesh].primitives
    assert sorted(p.material for p in prims) == [0, 1] and len(res.avatar.materials) == len(av.materials)
    assert res.summary()["own_hair"].get("replaced")


def test_godettes_rerigged_hair_swings_and_her_face_and_body_stay(godette_rerig):
    """Tips swing ≥ 10 mm relative to the head over the turn, p99 edge stretch ≤ 8 %, and every
    face and body vertex is where the kinematic pose alone puts it (no spring moves it)."""
    from avatars.clips.head_turn import head_turn_rotation
    from avatars.skinning import skin_instance
    from avatars.tryon import build_head
    from solver.chains import ChainSet
    from solver.eval.posing import SubtreePoser
    from solver.eval.tryon_quality import measure_tryon

    _, res = godette_rerig
    out = res.avatar
    run = measure_tryon(res, solver="rest-shape", head=build_head(out, hide=(res.hair_instance,)), still_s=0.5)
    assert run.tip_swing_mm >= 10.0 and run.stretch_p99_pct <= 8.0 and run.all_edges_p99_pct <= 8.0, run.row()
    assert run.head_inside == 0 and run.collider_inside == 0 and run.scalp_drift_m < 1e-9
    cs = ChainSet.from_avatar(out, solver="rest-shape")
    poser = SubtreePoser(out.skeleton, out.head_node())
    world = poser.rest.copy()
    cs.reset(world)
    worst = 0.0
    for n in range(1, 481):
        poser.world(head_turn_rotation(n / 120), out=world)
        cs.step(world)
        draw = world.copy()
        cs.apply(draw, 1.0)
        if n % 8:
            continue
        for k in range(len(out.mesh_instances)):
            if k == res.hair_instance:
                continue
            for p in range(len(out.meshes[out.mesh_instances[k].mesh].primitives)):
                worst = max(worst, float(np.abs(skin_instance(out, k, p, draw) - skin_instance(out, k, p, world)).max()))
    assert worst < 1e-9, worst


def test_godettes_rerigged_hair_exports_and_reloads(godette_rerig, tmp_path):
    from avatars.vrm1 import save_vrm1

    _, res = godette_rerig
    path = tmp_path / "godette_own.vrm"
    save_vrm1(res.avatar, path)
    back = load_avatar(path)
    assert back.warnings == () and len(back.springs) == len(res.avatar.springs)
    try:
        from avatars.eval.node import ReferenceUnavailable
        from avatars.eval.threevrm_load import load_with_threevrm

        info = load_with_threevrm(path)
    except ReferenceUnavailable as exc:
        pytest.skip(f"three-vrm unavailable: {exc}")
    assert info["finite"] and info["springs"] > 0
