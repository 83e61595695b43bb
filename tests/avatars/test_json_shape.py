"""The typed reading layer (avatars/json_shape.py): the cases the issue found by mutation
(a collider that is a number, a humanoid bone that is a string, a blend-shape bind that is
``true``, an accessor type that is an object, a node translation that is ``""``) load
cleanly with a warning naming the JSON path when the part is optional, or raise AvatarError
naming it when it is required; a missing VRM 0.x bone-group root skips that root only."""

from __future__ import annotations

import copy

import pytest

from avatars import AvatarError, load_avatar
from avatars.clips import ClipError, load_file
from tests.avatars.glb import join, split
from tests.conftest import asset

NAME = "broken.vrm"


@pytest.fixture(scope="module")
def smoke():
    return split(asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm").read_bytes())


@pytest.fixture(scope="module")
def godette():
    return split(asset("vrm", "Godette_vrm_v4.vrm").read_bytes())


def load(parts, mutate):
    doc, b = parts
    doc = copy.deepcopy(doc)
    mutate(doc)
    return load_avatar(NAME, data=join(doc, b))


def texts(avatar) -> list[str]:
    return [str(w) for w in avatar.warnings]


def test_a_collider_that_is_a_number_is_skipped_with_its_path(smoke):
    def mutate(d):
        d["extensions"]["VRMC_springBone"]["colliders"][0] = 3.5
    a = load(smoke, mutate)
    assert "extensions.VRMC_springBone.colliders[0]: expected an object, got 3.5; entry ignored" in texts(a)
    assert a.colliders == () and len(a.springs) == 1


def test_a_vrm1_humanoid_bone_that_is_a_string_is_skipped(smoke):
    def mutate(d):
        d["extensions"]["VRMC_vrm"]["humanoid"]["humanBones"]["leftHand"] = "node"
    a = load(smoke, mutate)
    assert ('extensions.VRMC_vrm.humanoid.humanBones.leftHand: expected an object, got "node"; '
            'extensions.VRMC_vrm.humanoid.humanBones.leftHand ignored') in texts(a)
    assert "leftHand" not in a.humanoid and "head" in a.humanoid


def test_a_vrm0_humanoid_bone_that_is_a_string_is_skipped(godette):
    def mutate(d):
        d["extensions"]["VRM"]["humanoid"]["humanBones"][3] = "hips"
    a = load(godette, mutate)
    assert 'extensions.VRM.humanoid.humanBones[3]: expected an object, got "hips"; entry ignored' in texts(a)
    assert "head" in a.humanoid


def test_a_blend_shape_bind_that_is_true_is_skipped(godette):
    def mutate(d):
        d["extensions"]["VRM"]["blendShapeMaster"]["blendShapeGroups"][1]["binds"][0] = True
    a = load(godette, mutate)
    assert ("extensions.VRM.blendShapeMaster.blendShapeGroups[1].binds[0]: expected an object, got true; "
            "entry ignored") in texts(a)


def test_an_accessor_type_that_is_an_object_is_an_error(smoke):
    def mutate(d):
        d["accessors"][0]["type"] = {"x": 1}
    with pytest.raises(AvatarError) as ei:
        load(smoke, mutate)
    assert str(ei.value) == 'broken.vrm: accessors[0].type: expected a string, got {"x": 1}'
    assert ei.value.element == "accessors[0].type"


def test_a_node_translation_that_is_an_empty_string_is_an_error(smoke):
    def mutate(d):
        d["nodes"][4]["translation"] = ""
    with pytest.raises(AvatarError, match=r'^broken\.vrm: nodes\[4\]\.translation: expected 3 finite numbers, got ""$'):
        load(smoke, mutate)


def test_an_optional_name_of_the_wrong_type_is_dropped(smoke):
    def mutate(d):
        d["nodes"][2]["name"] = [1]
    a = load(smoke, mutate)
    assert "nodes[2].name: expected a string, got [1]; ignored" in texts(a)
    assert a.skeleton.names[2] == ""


def test_the_document_is_not_changed_in_place(smoke):
    doc, b = smoke
    d = copy.deepcopy(doc)
    d["nodes"][2]["name"] = [1]
    load_avatar(NAME, data=join(d, b))
    assert d["nodes"][2]["name"] == [1]


def test_a_missing_vrm0_bone_group_root_skips_that_root_only(godette):
    base = load_avatar(asset("vrm", "Godette_vrm_v4.vrm"))
    groups = godette[0]["extensions"]["VRM"]["secondaryAnimation"]["boneGroups"]
    g = next(i for i, grp in enumerate(groups) if len(grp["bones"]) > 1)
    comment = groups[g].get("comment") or f"boneGroup{g}"
    lost_root = groups[g]["bones"][0]

    def mutate(d):
        d["extensions"]["VRM"]["secondaryAnimation"]["boneGroups"][g]["bones"][0] = 9999
    a = load(godette, mutate)
    n = a.skeleton.node_count
    assert (f"VRM.secondaryAnimation.boneGroups[{g}].bones[0]: root node 9999 does not exist "
            f"({n} nodes); this root of {comment!r} is skipped") in texts(a)
    lost = {s.name for s in base.springs if s.joints[0].node in base.skeleton.descendants(lost_root)}
    assert lost and {s.name for s in a.springs} == {s.name for s in base.springs} - lost
    assert len(a.springs) == len(base.springs) - len(lost)


def test_a_vrma_with_a_bad_channel_names_its_path(tmp_path):
    doc, b = split(asset("anim", "test.vrma").read_bytes())
    doc["animations"][0]["channels"][0]["target"] = 7
    p = tmp_path / "bad.vrma"
    p.write_bytes(join(doc, b))
    with pytest.raises(ClipError, match=r"bad\.vrma: animations\[0\]\.channels\[0\]\.target: expected an object, got 7"):
        load_file(p)


@pytest.mark.parametrize("uri,reason", [("../secret.bin", "the URI leaves the glTF file's folder"),
                                        ("\u0000", "the URI contains a NUL byte"),
                                        ("/etc/passwd", "only relative file URIs inside the glTF file's folder"),
                                        ("file:///etc/passwd", "only relative file URIs are read, not file:")])
def test_external_buffers_stay_inside_the_files_folder(tmp_path, smoke, uri, reason):
    doc, b = copy.deepcopy(smoke[0]), smoke[1]
    (tmp_path / "secret.bin").write_bytes(b)
    d = tmp_path / "avatar"
    d.mkdir()
    doc["buffers"] = [{"byteLength": len(b), "uri": uri}]
    p = d / "a.gltf"
    p.write_text(__import__("json").dumps(doc))
    with pytest.raises(AvatarError) as ei:
        load_avatar(p)
    assert ei.value.element == "buffers[0].uri" and reason in str(ei.value)
    doc["buffers"] = [{"byteLength": len(b), "uri": "a%20b.bin"}]     # percent-encoded, inside: read
    (d / "a b.bin").write_bytes(b)
    p.write_text(__import__("json").dumps(doc))
    assert load_avatar(p).skeleton.node_count == len(doc["nodes"])


@pytest.mark.parametrize("key,value", [("translation", [0, 0, 1e308]), ("scale", [1, 2e4, 1])])
def test_a_node_transform_beyond_10_km_is_an_error(smoke, key, value):
    """The seed-1 fuzz run's one finding: a translation of 1e308 overflowed the FK to inf."""
    def mutate(d):
        d["nodes"][16][key] = value
    with pytest.raises(AvatarError, match=rf"^broken\.vrm: nodes\[16\]\.{key}: has \S+, beyond 10000$"):
        load(smoke, mutate)
