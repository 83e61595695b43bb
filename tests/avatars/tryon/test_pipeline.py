"""The try-on pipeline on the shared MakeHuman styles and both target avatars: fit, guides,
scalp attachment, rig; and the hairs that cannot be fitted, reported instead of raising."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from avatars import load_avatar
from avatars.hair import hair_from_avatar, load_hair
from avatars.tryon import TryOnSettings, try_on
from tests.conftest import asset

from .conftest import AVATARS, STYLES

#: The seed articles' attachment rate over 46 styles (10,346 of 10,467 candidate guides).
ARTICLES_ATTACHED = 0.9884
#: Penetration allowed, metres (the brief's 1 mm).
DEPTH_LIMIT = 1e-3
#: Roots must follow their skinned scalp triangle to this, metres.
ROOT_DRIFT = 1e-9
#: Tip movement between 30 Hz samples in the last 2 s, mm.
SETTLE_MM = 1e-3


@pytest.mark.parametrize("avatar", AVATARS)
@pytest.mark.parametrize("style", STYLES)
def test_style_fits_attaches_and_rigs(fitted, avatar, style):
    res = fitted(avatar, style)
    assert res.avatar is not None and res.fit.ok, res.fit.problems
    g = res.guide_report
    assert g.candidates > 0 and g.attached_share >= ARTICLES_ATTACHED, g
    assert g.vertices_missed == 0
    assert len(res.chains) <= 24
    for c in res.chains:
        assert 4 <= len(c.nodes) <= 8
        # the root joint is a child of the head at its scalp point
        assert res.avatar.skeleton.parents[c.nodes[0]] == res.avatar.head_node()
        assert np.allclose(res.avatar.skeleton.rest_world[c.nodes[0]][:3, 3], c.attachment.point, atol=1e-12)
    s = res.summary()
    assert set(s["guides"]) == {"candidates", "attached", "joined", "rejected"}
    assert s["hair_vertices"] == res.avatar.meshes[res.avatar.mesh_instances[res.hair_instance].mesh].vertex_count


@pytest.mark.parametrize("avatar", AVATARS)
@pytest.mark.parametrize("style", STYLES)
def test_fitted_hair_sits_on_the_crown(fitted, avatar, style):
    """Crown on crown and centred over the head: no hair left behind or beside the head."""
    from avatars.tryon import build_head, own_hair_instances

    res = fitted(avatar, style)
    head = build_head(res.avatar, hide=(res.hair_instance,) + tuple(own_hair_instances(res.avatar)))
    prim = res.avatar.meshes[res.avatar.mesh_instances[res.hair_instance].mesh].primitives[0]
    p = prim.positions.astype(float)
    H = head.size[1]
    top = p[p[:, 1] > p[:, 1].max() - 0.25 * H]
    assert abs(p[:, 1].max() - head.crown[1]) < 0.2 * H
    assert np.all(np.abs(top.mean(axis=0)[[0, 2]] - head.center[[0, 2]]) < 0.25 * head.size[[0, 2]])


@pytest.mark.parametrize("avatar", AVATARS)
@pytest.mark.parametrize("style", STYLES)
def test_standard_head_turn_roots_settle_and_penetration(measured, avatar, style):
    run = measured(avatar, style)
    assert run.scalp_drift_m < ROOT_DRIFT
    assert run.settle_mm < SETTLE_MM
    assert run.head_inside_rest == 0 and run.head_depth_rest_mm <= 1e3 * DEPTH_LIMIT
    assert run.collider_inside_rest == 0


def test_the_default_avatars_own_hair_is_hidden_with_its_springs(fitted, target_avatars):
    res = fitted("default", "bob01")
    assert res.hidden == (2,)
    names = {res.avatar.meshes[mi.mesh].name for mi in res.avatar.mesh_instances}
    assert "Hair" not in names and "TryOnHair_bob01" in names
    assert all(s.name.startswith("TryOn") for s in res.avatar.springs)
    kept = try_on(target_avatars["default"], load_hair(asset("hair", "bob01", "bob01.obj")),
                  TryOnSettings(hide_own_hair=False))
    assert kept.hidden == () and len(kept.avatar.springs) == 9 + len(kept.chains)


def test_no_head_mesh_is_reported_not_raised():
    res = try_on(load_avatar(asset("vrm", "debug_robot.vrm")), load_hair(asset("hair", "short02", "short02.obj")))
    assert res.avatar is None and not res.fit.ok
    assert "no drawn mesh is skinned to the head" in res.fit.problems[0]


def test_hair_far_too_large_for_its_stated_units_is_reported(tmp_path, target_avatars):
    src = asset("hair", "short02", "short02.obj")
    lines = [f"v {' '.join(str(100 * float(x)) for x in ln.split()[1:4])}" if ln.startswith("v ") else ln
             for ln in src.read_text().splitlines()]
    p = tmp_path / "short02.obj"
    p.write_text("\n".join(lines) + "\n")
    res = try_on(target_avatars["default"], load_hair(p))
    assert res.avatar is None and "too big for the head" in res.fit.problems[0]


def test_hair_nowhere_near_a_head_is_reported(target_avatars):
    av = target_avatars["default"]
    pony = hair_from_avatar(av, spring="Ponytail")
    far = replace(pony, positions=pony.positions + [3.0, 0.0, 0.0])
    res = try_on(av, far, TryOnSettings(placement="keep"))
    assert res.avatar is None and "nowhere near the head" in res.fit.problems[0]


def test_far_side_of_a_layer_follows_a_chain_on_its_own_side(fitted):
    """long01 is layers laid over the head, each falling on both sides, with 24 chains for
    31 loose regions: a side whose layer's chain hangs on the other side of the head follows
    the chain nearest to it (avatars/tryon/weights.py). Skinned to its own chain 15–25 cm away
    (before), its offset turned with that chain and swept through the shoulders."""
    from avatars.tryon import build_head
    from avatars.tryon.graph import build_graph, loose_regions
    from avatars.tryon.weights import closest_on_polyline

    res = fitted("default", "long01")
    av = res.avatar
    hair = load_hair(asset("hair", "long01", "long01.obj"))
    prim = av.meshes[av.mesh_instances[res.hair_instance].mesh].primitives[0]
    graph = build_graph(prim.positions.astype(np.float64), hair.triangles, hair.weld)
    head = build_head(av, hide=(res.hair_instance,))
    H = float(head.size[1])
    region = loose_regions(graph, -head.envelope.depth(graph.points) > 0.1 * H)
    owned = {int(r) for c in res.chains for r in region[c.path] if r >= 0}
    joints = av.skins[av.mesh_instances[res.hair_instance].skin].joints
    col = {int(n): k for k, c in enumerate(res.chains) for n in c.nodes}
    chain_of = np.array([col.get(int(n), -1) for n in joints])
    share = np.zeros((prim.vertex_count, len(res.chains)))
    for j in range(4):
        k = chain_of[prim.joints[:, j].astype(np.int64)]
        ok = k >= 0
        np.add.at(share, (np.nonzero(ok)[0], k[ok]), prim.weights[ok, j])
    followers = 0
    for r in range(int(region.max()) + 1):
        if r in owned:
            continue
        nodes = np.nonzero(region == r)[0]
        verts = np.nonzero(np.isin(graph.node, nodes))[0]
        verts = verts[share[verts].sum(axis=1) > 1e-6]      # below the shoulders it rests on the body
        mean = np.array([closest_on_polyline(graph.points[nodes], c.curve)[0].mean() for c in res.chains])
        dominant = np.argmax(share[verts], axis=1)
        assert np.all(dominant == np.argmin(mean)), r
        piece = graph.component[nodes[0]]
        own = [k for k, c in enumerate(res.chains) if piece in c.piece_ids]
        assert mean.min() < 0.5 * mean[own].min()
        followers += 1
    assert followers >= 5      # 7 layer sides have no chain of their own with 24 chains


@pytest.mark.parametrize("avatar", AVATARS)
@pytest.mark.parametrize("style", STYLES)
def test_long_hair_rests_on_the_body(fitted, target_avatars, avatar, style):
    """Pieces hanging well below the shoulders (long01: 0.92–1.4 torso lengths) give their
    chain weight, below the nape, to the upperChest (Godette: chest), which does not turn with
    the head (avatars/tryon/weights.py, body anchor); the other styles (ponytail01 reaches 0.08
    / 0.55 torso lengths) keep head + chains only. The head's share (the band) is untouched
    and the rest pose does not move (bind = rest)."""
    from avatars.skinning import joint_matrices, skin_positions

    res = fitted(avatar, style)
    av = res.avatar
    hb = target_avatars[avatar].humanoid
    body = hb.get("upperChest", hb.get("chest"))
    mi = av.mesh_instances[res.hair_instance]
    prim = av.meshes[mi.mesh].primitives[0]
    joints = av.skins[mi.skin].joints
    on_body = np.zeros(prim.vertex_count)
    for j in range(4):
        on_body += np.where(joints[prim.joints[:, j].astype(np.int64)] == body, prim.weights[:, j], 0.0)
    if style != "long01":
        assert body not in set(joints.tolist()) and not on_body.any()
        return
    y = av.skeleton.rest_world[:, 1, 3]
    line = 0.5 * (y[hb["leftUpperArm"]] + y[hb["rightUpperArm"]])
    pos = prim.positions.astype(np.float64)
    from avatars.tryon import build_head
    from avatars.tryon.weights import WeightOptions

    H = float(build_head(av, hide=(res.hair_instance,)).size[1])
    top = 0.5 * (y[hb["head"]] + line) + WeightOptions().anchor_ramp * H
    assert np.all(on_body[pos[:, 1] > top + 1e-6] == 0.0) and on_body.max() > 0.99
    head_share = np.zeros(prim.vertex_count)
    for j in range(4):
        head_share += np.where(joints[prim.joints[:, j].astype(np.int64)] == av.head_node(), prim.weights[:, j], 0.0)
    low = pos[:, 1] < top - 2 * WeightOptions().anchor_ramp * H      # below the ramp: no chain weight left
    assert low.any() and np.allclose(on_body[low] + head_share[low], 1.0) and np.all(on_body[low] > 0.95)
    rest = av.skeleton.rest_world
    assert np.abs(skin_positions(prim, joint_matrices(av, mi.skin, rest)) - prim.positions).max() < 1e-6
