"""The guide export (avatars/tryon/guide_export.py): every shared style's guide JSON validates
against guides.schema.json, loading it back reproduces ``hair fit --json``'s counts exactly,
attached roots lie on their scalp triangle, a cached fit keeps its guides, and the loader
names the JSON path of what is wrong."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from avatars.tryon.guide_export import SCHEMA_PATH, from_json, to_json
from tests.conftest import asset

from .conftest import STYLES

#: Measured on the generated default avatar (`swaycam hair fit STYLE --json`): every
#: candidate attached, none joined or rejected.
DEFAULT_COUNTS = {"long01": 70, "bob01": 58, "ponytail01": 74, "short02": 18}
#: JSON points are rounded to micrometres (guide_export._r).
ROUND_M = 5e-7


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("style", STYLES)
def test_every_shared_style_validates_and_reloads_with_the_fit_counts(style, fitted, validator):
    res = fitted("default", style)
    doc = json.loads(json.dumps(to_json(res.guide_set, style=style, avatar="default.vrm")))
    validator.validate(doc)
    back = from_json(doc)
    counts = res.summary()["guides"]
    assert back.counts() == counts == doc["counts"]
    assert counts == {"candidates": DEFAULT_COUNTS[style], "attached": DEFAULT_COUNTS[style], "joined": 0,
                      "rejected": 0}
    assert np.array_equal(back.offsets, res.guide_set.offsets)
    assert np.abs(back.points - res.guide_set.points).max() <= ROUND_M
    for g, guide in enumerate(res.guides):          # the intermediate guides, point for point
        assert np.allclose(back.curve(g), guide.points, atol=ROUND_M, rtol=0)


def test_attached_roots_lie_on_their_scalp_triangle(fitted, target_avatars):
    """The exported triangle (mesh instance, primitive, vertices) and weights rebuild the scalp
    point from the avatar's own rest vertices."""
    res = fitted("default", "long01")
    gs = res.guide_set
    av = target_avatars["default"]
    world = av.skeleton.rest_world
    for g in range(gs.count):
        inst, prim, *verts = gs.root_source[g]
        mi = av.mesh_instances[inst]
        p = av.meshes[mi.mesh].primitives[prim]
        if mi.skin >= 0:     # the rest pose is the bind pose: skinning with rest matrices
            skin = av.skins[mi.skin]
            mats = world[skin.joints] @ skin.inverse_bind
            m = np.einsum("vk,vkij->vij", p.weights[verts].astype(np.float64), mats[p.joints[verts].astype(int)])
            corners = np.einsum("vij,vj->vi", m[:, :3, :3], p.positions[verts].astype(np.float64)) + m[:, :3, 3]
        else:
            m = world[mi.node]
            corners = p.positions[verts].astype(np.float64) @ m[:3, :3].T + m[:3, 3]
        assert abs(gs.root_bary[g].sum() - 1.0) < 1e-9
        assert np.linalg.norm(gs.root_bary[g] @ corners - gs.suggested_root[g]) < 1e-5
        assert np.linalg.norm(gs.curve(g)[0] - gs.suggested_root[g]) == pytest.approx(gs.root_distance[g], abs=1e-9)


def test_rejected_guides_are_exported_with_no_root(target_avatars, validator):
    """A tight attach distance (2 % of the head height) on short02: 1 attached, 7 joined, 10
    rejected (measured). Rejected guides have a null root and the curve's first point as the
    suggested root; joined ones name an attached or joined parent."""
    from avatars.hair import load_hair
    from avatars.tryon import TryOnSettings, try_on

    res = try_on(target_avatars["default"], load_hair(asset("hair", "short02", "short02.obj")),
                 TryOnSettings(attach_distance=0.02))
    c = res.summary()["guides"]
    assert c == {"candidates": 18, "attached": 1, "joined": 7, "rejected": 10}
    doc = to_json(res.guide_set, style="short02", avatar="default.vrm")
    validator.validate(doc)
    assert from_json(doc).counts() == c
    rej = [g for g in doc["guides"] if g["state"] == "rejected"]
    assert len(rej) == c["rejected"]
    for g in rej:
        assert g["root"] is None and g["suggested_root"] == g["points"][0]
    for g in doc["guides"]:
        if g["state"] == "joined":
            assert g["root"] is None and doc["guides"][g["parent"]]["state"] in ("attached", "joined")
        else:
            assert g["parent"] is None


def test_a_cached_fit_keeps_its_guides(tmp_path):
    from avatars.generate import default_avatar_path
    from avatars.hair import find_style
    from avatars.tryon import TryOnSettings
    from avatars.tryon.cache import TryOnCache, cached_try_on

    cache = TryOnCache(tmp_path)
    first, hit1 = cached_try_on(default_avatar_path(), find_style("short02"), TryOnSettings(), cache=cache)
    again, hit2 = cached_try_on(default_avatar_path(), find_style("short02"), TryOnSettings(), cache=cache)
    assert (hit1, hit2) == (False, True)
    assert again.guides == () and again.guide_set is not None
    assert again.guide_set.counts() == first.guide_set.counts() == first.summary()["guides"]
    assert np.array_equal(again.guide_set.points, first.guide_set.points)


def test_the_loader_names_what_is_wrong(fitted, tmp_path):
    doc = to_json(fitted("default", "short02").guide_set, style="short02", avatar="a.vrm")
    bad = json.loads(json.dumps(doc))
    bad["guides"][3]["points"][1] = [0.0, "x", 0.0]
    with pytest.raises(ValueError, match=r"guides\[3\]\.points\[1\]: expected 3 finite numbers"):
        from_json(bad)
    bad = json.loads(json.dumps(doc))
    bad["guides"][0]["state"] = "floating"
    with pytest.raises(ValueError, match=r"guides\[0\]\.state: expected one of"):
        from_json(bad)
    bad = json.loads(json.dumps(doc))
    bad["guides"][2]["root"] = None
    with pytest.raises(ValueError, match=r"guides\[2\]\.root: an attached guide has a root object"):
        from_json(bad)
    p = tmp_path / "g.json"
    p.write_text("{nope")
    with pytest.raises(ValueError, match="g.json: not JSON"):
        from_json(p)
