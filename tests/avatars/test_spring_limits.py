"""Angle limits of spring joints read from a file (avatars/spring_limits.py): the
VRMC_springBone_limit draft's joint extension, an ``angleLimit`` in a joint's
VRMC_springBone_extended_collider extension, and what is refused with a warning."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from avatars import load_avatar
from avatars.inspect import format_summary, summarize
from tests.avatars.glb import join, split
from tests.conftest import asset

NAME = "limits.vrm"


@pytest.fixture(scope="module")
def smoke():
    return split(asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm").read_bytes())


def _load(smoke, joint: int, extensions: dict):
    doc, b = smoke
    doc = copy.deepcopy(doc)
    doc["extensions"]["VRMC_springBone"]["springs"][0]["joints"][joint]["extensions"] = extensions
    return load_avatar(NAME, data=join(doc, b)), doc


def test_the_drafts_extension_is_read(smoke):
    ext = {"VRMC_springBone_limit": {"specVersion": "1.0-draft", "limit": {
        "spherical": {"pitch": 0.5, "yaw": 0.25, "rotation": [0.0, 0.0, 0.0, 1.0]}}}}
    av, _ = _load(smoke, 1, ext)
    lim = av.springs[0].joints[1].limit
    assert (lim.kind, lim.angle, lim.yaw, lim.source) == ("spherical", 0.5, 0.25, "file")
    assert av.springs[0].joints[0].limit is None
    listed = summarize(av)["angle_limits"]
    assert [(a["kind"], round(a["angle_deg"], 6), a["source"]) for a in listed] == [
        ("spherical", round(math.degrees(0.5), 6), "file")]
    assert "angle limits 1" in format_summary(summarize(av))


def test_an_angle_limit_in_the_extended_collider_extension_is_read(smoke):
    ext = {"VRMC_springBone_extended_collider": {"angleLimit": {
        "hinge": {"angle": 0.3, "rotation": [0.0, 0.7071067811865476, 0.0, 0.7071067811865476]}}}}
    av, _ = _load(smoke, 0, ext)
    lim = av.springs[0].joints[0].limit
    assert (lim.kind, lim.angle, lim.source) == ("hinge", 0.3, "file:angleLimit")
    assert np.allclose(lim.rotation, [0.0, 0.7071067811865476, 0.0, 0.7071067811865476])
    assert not [w for w in av.warnings if "limit" in str(w).lower()]


def test_an_unsupported_kind_is_a_warning_naming_the_joint(smoke):
    doc, _ = smoke
    node = doc["extensions"]["VRMC_springBone"]["springs"][0]["joints"][2]["node"]
    ext = {"VRMC_springBone_limit": {"specVersion": "1.0-draft", "limit": {"polar": {"angle": 0.4}}}}
    av, _ = _load(smoke, 2, ext)
    assert av.springs[0].joints[2].limit is None
    texts = [str(w) for w in av.warnings]
    hit = [t for t in texts if "polar" in t]
    assert len(hit) == 1
    assert "springs[0].joints[2].extensions.VRMC_springBone_limit.limit" in hit[0]
    assert f"joint node {node}" in hit[0] and "not supported" in hit[0]


@pytest.mark.parametrize("limit,fragment", [
    ({"cone": {"angle": -0.1}}, "is not an angle >= 0"),
    ({"cone": {"angle": 0.3, "rotation": [0, 0, 0, 2]}}, "is not a unit quaternion"),
    ({"spherical": {"pitch": 0.3}}, "spherical.yaw"),
    ("cone", "is not an object"),
])
def test_a_malformed_limit_is_ignored_with_a_warning(smoke, limit, fragment):
    av, _ = _load(smoke, 0, {"VRMC_springBone_limit": {"specVersion": "1.0-draft", "limit": limit}})
    assert av.springs[0].joints[0].limit is None
    assert any(fragment in str(w) for w in av.warnings), [str(w) for w in av.warnings]
