"""The layered stress avatar: many layered hair chains, more than 12,000 hair vertices."""

from __future__ import annotations

import numpy as np

from tests.avatars.test_generate import generated, hair_vertex_count, spring_nodes

MIN_CHAINS = 12
MIN_HAIR_VERTICES = 12_000


def test_layered_hair_scale():
    _, a = generated("layered")
    assert len(a.springs) >= MIN_CHAINS
    assert hair_vertex_count(a) >= MIN_HAIR_VERTICES
    assert hair_vertex_count(a) == 13_370


def test_layered_hair_surrounds_the_head():
    """Strand roots cover the back and both sides of the head in two layers."""
    _, a = generated("layered")
    w = a.skeleton.rest_world
    head = w[a.humanoid["head"], :3, 3]
    roots = {s.name: w[s.joints[0].node, :3, 3] - head for s in a.springs}
    tips = {s.name: w[s.joints[-1].node, :3, 3] for s in a.springs}
    azim = {n: np.degrees(np.arctan2(r[0], r[2])) for n, r in roots.items()}
    inner = [n for n in roots if n.startswith("Inner")]
    outer = [n for n in roots if n.startswith("Outer")]
    assert len(inner) == 10 and len(outer) == 8
    for layer in (inner, outer):
        az = np.array([azim[n] for n in layer])
        assert (az > 0).sum() == (az < 0).sum() == len(layer) // 2  # both sides
        assert np.all(np.abs(az) > 80)  # at and behind the ears
    # the outer layer is rooted higher than the inner one
    assert min(roots[n][1] for n in outer) > max(roots[n][1] for n in inner)
    # long hair: the back strands reach below the shoulders
    assert min(tips[n][1] for n in inner) < 1.2


def test_layered_shares_the_default_body_and_face():
    _, d = generated("default")
    _, a = generated("layered")
    assert d.humanoid == a.humanoid
    for name in ("Body", "Face"):
        md = next(d.meshes[i.mesh] for i in d.mesh_instances if d.meshes[i.mesh].name == name)
        ma = next(a.meshes[i.mesh] for i in a.mesh_instances if a.meshes[i.mesh].name == name)
        assert md.vertex_count == ma.vertex_count
        for pd, pa in zip(md.primitives, ma.primitives):
            assert np.array_equal(pd.positions, pa.positions)
    assert spring_nodes(a).isdisjoint(d.humanoid.values())
