"""Guides, scalp attachment and fragment joining on small synthetic meshes (the seed articles'
rules: shortest surface paths to distant endpoints, flipping by scalp distance, joining only
when ends are close and tangents agree, only attached guides as parents, caps)."""

from __future__ import annotations

import numpy as np

from avatars.tryon.graph import build_graph
from avatars.tryon.guides import Guide, GuideOptions, extract_guides, resample, smooth_polyline
from avatars.tryon.join import JoinOptions, join_fragments


def strip(x0: float, y0: float, y1: float, z: float = 0.0, rows: int = 20, width: float = 0.01):
    """A vertical ribbon (2 columns × rows) from y0 down to y1: (positions, triangles)."""
    ys = np.linspace(y0, y1, rows)
    pos = np.array([[x0 + dx, y, z] for y in ys for dx in (0.0, width)])
    tris = []
    for r in range(rows - 1):
        a, b, c, d = 2 * r, 2 * r + 1, 2 * r + 2, 2 * r + 3
        tris += [(a, c, b), (b, c, d)]
    return pos, np.array(tris)


def merge(*parts):
    pos, tris, base = [], [], 0
    for p, t in parts:
        pos.append(p)
        tris.append(t + base)
        base += len(p)
    return np.concatenate(pos), np.concatenate(tris)


def test_uv_seam_duplicates_are_welded_for_the_analysis_only():
    pos, tris = strip(0.0, 1.0, 0.8)
    # render vertex 10 split in two by a UV seam: the triangles on one side use the copy
    pos2 = np.concatenate([pos, pos[10:11]])
    tris2 = tris.copy()
    rows = np.nonzero((tris2 == 10).any(axis=1))[0][:2]
    tris2[rows] = np.where(tris2[rows] == 10, len(pos), tris2[rows])
    weld = np.r_[np.arange(len(pos)), 10]
    g = build_graph(pos2, tris2, weld)
    assert g.node_count == len(pos) and g.component_count == 1
    assert g.node[10] == g.node[len(pos)]


def test_a_strip_gives_one_guide_root_at_the_scalp_end():
    pos, tris = strip(0.0, 1.0, 0.7)
    g = build_graph(pos, tris, np.arange(len(pos)))
    # scalp below the strip: the low end is nearer, so the high root suggestion is flipped
    guides, missed = extract_guides(g, lambda p: np.abs(p[:, 1] - 0.6), GuideOptions(spacing=0.05, step=0.01))
    assert not missed.any() and len(guides) == 1
    gd = guides[0]
    assert gd.points[0, 1] < gd.points[-1, 1] and abs(gd.length - 0.3) < 0.02
    guides_up, _ = extract_guides(g, lambda p: np.abs(p[:, 1] - 1.1), GuideOptions(spacing=0.05, step=0.01))
    assert guides_up[0].points[0, 1] > guides_up[0].points[-1, 1]


def test_pieces_too_short_are_missed_and_caps_hold():
    pos, tris = merge(strip(0.0, 1.0, 0.7), strip(0.5, 1.0, 0.995, rows=2))
    g = build_graph(pos, tris, np.arange(len(pos)))
    guides, missed = extract_guides(g, lambda p: p[:, 1] * 0, GuideOptions(min_length=0.02, step=0.01))
    assert len(guides) == 1 and missed.sum() == 4          # the 5 mm piece gives no guide
    p, length = resample(np.array([[0, 0, 0], [0, -1.0, 0]]), 0.001, max_points=16, max_length=0.5)
    assert len(p) == 16 and abs(length - 0.5) < 1e-12
    q = smooth_polyline(np.array([[0, 0, 0], [1, 1, 0], [2, 0, 0]], float), 3)
    assert np.array_equal(q[[0, -1]], [[0, 0, 0], [2, 0, 0]]) and q[1, 1] < 1


def _g(points):
    p = np.asarray(points, float)
    return Guide(p, np.arange(len(p)), 0, float(np.linalg.norm(np.diff(p, axis=0), axis=1).sum()))


def test_fragments_join_only_close_and_aligned_ends_and_only_to_attached_guides():
    down = np.linspace([0, 1.0, 0], [0, 0.8, 0], 11)
    parent = _g(down)                                              # attached
    good = _g(np.linspace([0, 0.79, 0], [0, 0.6, 0], 11))          # 10 mm below its end, same direction
    reversed_good = _g(np.linspace([0.2, 0.6, 0], [0.2, 0.79, 0], 11))  # continues guide 4, stored upside down
    sideways = _g(np.linspace([0.001, 0.795, 0], [0.2, 0.795, 0], 11))  # close but at 90 degrees
    far = _g(np.linspace([0, 0.7, 0.5], [0, 0.5, 0.5], 11))        # 50 cm away
    parent2 = _g(np.linspace([0.2, 1.0, 0], [0.2, 0.8, 0], 11))    # attached
    chained = _g(np.linspace([0, 0.59, 0], [0, 0.4, 0], 11))       # continues `good` (round 2)
    guides = [parent, good, sideways, far, parent2, reversed_good, chained]
    attached = np.array([True, False, False, False, True, False, False])
    j = join_fragments(guides, attached, JoinOptions(distance=0.025, min_dot=0.5))
    assert j.parent.tolist() == [-1, 0, -1, -1, -1, 4, 1]
    assert j.flipped.tolist() == [False, False, False, False, False, True, False]
    assert j.round.tolist() == [0, 1, 0, 0, 0, 1, 2]
    assert np.isclose(j.strand_length[6], 0.6, atol=0.03)
    one_round = join_fragments(guides, attached, JoinOptions(distance=0.025, max_rounds=1))
    assert one_round.parent[6] == -1
    capped = join_fragments(guides, attached, JoinOptions(distance=0.025, max_length=0.35))
    assert capped.parent[1] == -1            # 0.2 + 0.19 m would pass the length cap
    nothing = join_fragments(guides, np.zeros(7, bool), JoinOptions(distance=0.025))
    assert (nothing.parent == -1).all()      # unattached guides are never parents: no cycles


def test_rejected_guides_stay_bound_to_the_head(target_avatars):
    """A piece whose only guide is rejected (far from the scalp, nothing to continue) is
    rigid on the head: every vertex of it is weighted to the head bone alone."""
    from avatars.hair import hair_from_avatar
    from avatars.tryon import TryOnSettings, try_on

    av = target_avatars["default"]
    pony = hair_from_avatar(av, spring="Ponytail")
    # attach nothing: the rebuilt ponytail's guide is rejected
    res = try_on(av, pony, TryOnSettings(attach_distance=1e-6))
    g = res.guide_report
    assert g.candidates == 1 and g.attached == 0 and g.rejected == 1 and g.vertices_rejected == pony.vertex_count
    assert res.chains == ()
    prim = res.avatar.meshes[res.avatar.mesh_instances[res.hair_instance].mesh].primitives[0]
    skin = res.avatar.skins[res.avatar.mesh_instances[res.hair_instance].skin]
    heavy = skin.joints[prim.joints[np.arange(prim.vertex_count), np.argmax(prim.weights, axis=1)]]
    assert (heavy == av.head_node()).all() and np.allclose(prim.weights.max(axis=1), 1.0)
