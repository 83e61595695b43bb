"""Every malformed-input kind raises AvatarError naming the file and the element;
broken optional parts warn and are skipped."""

from __future__ import annotations

import copy
import json
import math

import pytest

from avatars import AvatarError, load_avatar
from tests.avatars.glb import join, join_raw, split
from tests.conftest import asset

NAME = "broken.vrm"


@pytest.fixture(scope="module")
def smoke():
    return split(asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm").read_bytes())


def load_mutated(smoke, mutate, tmp_path=None):
    doc, bin_chunk = smoke
    doc = copy.deepcopy(doc)
    mutate(doc)
    return load_avatar(NAME, data=join(doc, bin_chunk))


def expect_error(smoke, mutate, *fragments):
    with pytest.raises(AvatarError) as ei:
        load_mutated(smoke, mutate)
    msg = str(ei.value)
    assert msg.startswith(NAME + ": "), msg
    for f in fragments:
        assert f in msg, msg
    return ei.value


def test_missing_file(tmp_path):
    with pytest.raises(AvatarError, match=r"nope\.vrm: file does not exist"):
        load_avatar(tmp_path / "nope.vrm")


def test_empty_file(tmp_path):
    p = tmp_path / "empty.vrm"
    p.write_bytes(b"")
    with pytest.raises(AvatarError, match=r"empty\.vrm: file is empty"):
        load_avatar(p)


def test_not_gltf(tmp_path):
    p = tmp_path / "photo.vrm"
    p.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(AvatarError, match=r"photo\.vrm: not a glTF file"):
        load_avatar(p)


def test_json_but_not_gltf(tmp_path):
    p = tmp_path / "x.gltf"
    p.write_text('{"hello": 1}')
    with pytest.raises(AvatarError, match=r"x\.gltf: asset: not a glTF document"):
        load_avatar(p)


def test_truncated_glb(smoke):
    data = join(*smoke)
    for cut in (10, 30, len(data) // 2, len(data) - 1):
        with pytest.raises(AvatarError, match="truncated") as ei:
            load_avatar(NAME, data=data[:cut])
        assert str(ei.value).startswith(NAME)


def test_bad_json_chunk(smoke):
    doc, b = smoke
    data = join_raw(json.dumps(doc).encode()[:-20] + b" " * 20, b)  # chop the closing part of the JSON
    with pytest.raises(AvatarError, match=r"JSON chunk: bad JSON at line 1 column \d+"):
        load_avatar(NAME, data=data)


def test_json_chunk_that_is_not_utf8(smoke):
    doc, b = smoke
    j = json.dumps(doc).encode()
    data = join_raw(j[:40] + b"\xff" + j[41:], b)
    with pytest.raises(AvatarError, match=r"broken\.vrm: GLB JSON chunk is not UTF-8 text \(byte 40 of the chunk\)"):
        load_avatar(NAME, data=data)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder"])
def test_special_files_are_refused_without_reading(tmp_path, special):
    import os

    if special == "fifo":
        path = tmp_path / "pipe.vrm"
        os.mkfifo(path)                  # reading it would block forever
    elif special == "folder":
        path = tmp_path / "folder.vrm"
        path.mkdir()
    else:
        path = special                   # reading it would fill the memory
    with pytest.raises(AvatarError, match="not a regular file"):
        load_avatar(path)


def test_bad_json_text(tmp_path):
    p = tmp_path / "bad.gltf"
    p.write_text('{"asset": {"version": "2.0"},\n "nodes": [}')
    with pytest.raises(AvatarError, match=r"bad\.gltf: JSON: bad JSON at line 2"):
        load_avatar(p)


def test_accessor_out_of_range(smoke):
    def mutate(d):
        d["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = 999
    expect_error(smoke, mutate, "meshes[0].primitives[0].attributes.NORMAL", "accessor 999 does not exist")


def test_accessor_count_past_buffer_view(smoke):
    def mutate(d):
        a = d["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        d["accessors"][a]["count"] *= 50
    expect_error(smoke, mutate, "accessors[", "bufferView has")


def test_buffer_view_out_of_range(smoke):
    def mutate(d):
        d["bufferViews"][0]["byteOffset"] = 10_000_000
    expect_error(smoke, mutate, "bufferViews[0]", "outside buffer 0")


def test_child_node_does_not_exist(smoke):
    def mutate(d):
        d["nodes"][0].setdefault("children", []).append(500)
    expect_error(smoke, mutate, "nodes[0].children", "node 500 does not exist")


def test_cycle_in_node_tree(smoke):
    def mutate(d):
        # make node 0 (hips) a child of its own descendant (the head)
        head = d["extensions"]["VRMC_vrm"]["humanoid"]["humanBones"]["head"]["node"]
        parent_of = {c: i for i, n in enumerate(d["nodes"]) for c in n.get("children", [])}
        root = 0
        while root in parent_of:
            root = parent_of[root]
        for scene in d.get("scenes", []):
            scene["nodes"] = [n for n in scene["nodes"] if n != root]
        d["nodes"][head].setdefault("children", []).append(root)
    expect_error(smoke, mutate, "cycle in the node tree")


def test_spring_joint_node_does_not_exist(smoke):
    def mutate(d):
        d["extensions"]["VRMC_springBone"]["springs"][0]["joints"][2]["node"] = 88
    expect_error(smoke, mutate, "springs[0].joints[2]", "node 88 does not exist")


def test_spring_joint_not_descendant(smoke):
    def mutate(d):
        joints = d["extensions"]["VRMC_springBone"]["springs"][0]["joints"]
        joints[1]["node"], joints[2]["node"] = joints[2]["node"], joints[1]["node"]
    expect_error(smoke, mutate, "springs[0].joints[2]", "is not a descendant of node")


@pytest.mark.parametrize("key,value", [("translation", [math.nan, 0, 0]), ("rotation", [0, 0, 0, math.inf]),
                                       ("scale", [1, -math.inf, 1])])
def test_nan_inf_in_transform(smoke, key, value):
    def mutate(d):
        d["nodes"][3][key] = value
    expect_error(smoke, mutate, f"nodes[3].{key}", "NaN or inf")


def test_broken_collider_node_is_skipped_with_warning(smoke):
    def mutate(d):
        d["extensions"]["VRMC_springBone"]["colliders"][0]["node"] = -1
    a = load_mutated(smoke, mutate)
    assert a.colliders == ()
    assert a.collider_groups[0].colliders == ()
    texts = [str(w) for w in a.warnings]
    assert "VRMC_springBone.colliders[0].node: node -1 does not exist; skipped" in texts
    assert any("colliderGroups[0].colliders[0]" in t for t in texts)
    assert len(a.springs) == 1  # the avatar is still usable


def test_out_of_range_spring_parameters_are_clamped_with_warnings(smoke):
    def mutate(d):
        j = d["extensions"]["VRMC_springBone"]["springs"][0]["joints"][1]
        j["stiffness"], j["dragForce"] = -5, 1e9
    a = load_mutated(smoke, mutate)
    joint = a.springs[0].joints[1]
    assert (joint.stiffness, joint.drag_force) == (0.0, 1.0)
    texts = [str(w) for w in a.warnings]
    assert "springs[0].joints[1].stiffness: -5 is outside the spec's range [0, inf]; 0 is used" in texts
    assert "springs[0].joints[1].dragForce: 1e+09 is outside the spec's range [0, 1]; 1 is used" in texts


def test_out_of_range_vrm0_group_parameters_warn_once_per_group(godette_path):
    from tests.avatars.glb import join, split

    doc, b = split(godette_path.read_bytes())
    doc["extensions"]["VRM"]["secondaryAnimation"]["boneGroups"][0]["dragForce"] = 3.0
    a = load_avatar(NAME, data=join(doc, b))
    texts = [str(w) for w in a.warnings if "dragForce" in str(w)]
    assert texts == ["VRM.secondaryAnimation.boneGroups[0].dragForce: 3 is outside the valid range [0, 1]; 1 is used"]


def test_broken_expression_bind_is_skipped_with_warning(smoke):
    def mutate(d):
        d["extensions"]["VRMC_vrm"]["expressions"] = {"preset": {"blink": {"morphTargetBinds": [
            {"node": 0, "index": 0, "weight": 1.0}]}}}
    a = load_mutated(smoke, mutate)
    assert a.expressions["blink"].morph_target_binds == ()
    assert any("expressions.preset.blink.morphTargetBinds[0]" in str(w) for w in a.warnings)


def test_error_type_carries_element(smoke):
    def mutate(d):
        d["extensions"]["VRMC_springBone"]["springs"][0]["joints"][1]["node"] = 88
    err = expect_error(smoke, mutate)
    assert err.element == "springs[0].joints[1]" and err.path == NAME


def test_vrm0_main_tex_tiling_flips_v_and_render_queue(godette_path):
    """VRM 0.x _MainTex [ox, oy, sx, sy] (Unity, v up) -> glTF offset (ox, 1 - sy - oy); the
    transparent materials' render queues become offsets in queue order (three-vrm's mapping:
    the last queue is 0, earlier ones count down)."""
    doc, b = split(godette_path.read_bytes())
    props = doc["extensions"]["VRM"]["materialProperties"]
    body = next(p for p in props if p["name"] == "Body")
    body["vectorProperties"]["_MainTex"] = [0.25, 0.1, 2.0, 0.5]
    for p, queue in ((next(p for p in props if p["name"] == "Face"), 3004), (body, 3002)):
        p["floatProperties"]["_BlendMode"] = 2
        p["keywordMap"]["_ALPHABLEND_ON"] = True
        p["floatProperties"]["_ZWrite"] = 0
        p["renderQueue"] = queue
    from avatars import load_avatar as load
    a = load("g.vrm", data=join(doc, b))
    mats = {m.name: m for m in a.materials}
    tt = mats["Body"].base_color_texture.transform
    assert list(tt.offset) == [0.25, 0.4] and list(tt.scale) == [2.0, 0.5]
    assert mats["Face"].mtoon.render_queue_offset == 0 and mats["Face"].alpha_mode == "BLEND"
    assert mats["Body"].mtoon.render_queue_offset == -1 and mats["Body"].alpha_mode == "BLEND"
    assert not mats["Face"].mtoon.transparent_with_z_write
    for p in props[:2]:
        p["floatProperties"]["_ZWrite"] = 1   # with z-write: 0 .. n - 1 in queue order
    mats = {m.name: m for m in load("g.vrm", data=join(doc, b)).materials}
    assert (mats["Face"].mtoon.render_queue_offset, mats["Body"].mtoon.render_queue_offset) == (1, 0)
    assert mats["Face"].mtoon.transparent_with_z_write

@pytest.mark.parametrize("ext", ["VRMC_vrm", "VRMC_springBone"])
def test_unknown_spec_version_warns_and_reads_as_1_0(smoke, ext):
    def mutate(doc):
        doc["extensions"][ext]["specVersion"] = "2.7"

    av = load_mutated(smoke, mutate)
    assert [str(w) for w in av.warnings] == [
        f"extensions.{ext}.specVersion: '2.7' is not a known specVersion (1.0, 1.0-beta); read as 1.0"]
    assert av.vrm_version == "1.0" and len(av.springs) == 1 and av.head_node() == 4
    assert load_mutated(smoke, lambda doc: doc["extensions"][ext].update(specVersion="1.0-beta")).warnings == ()


def test_a_joint_rotated_by_two_springs_warns_and_the_later_spring_is_skipped(smoke):
    def mutate(doc):
        springs = doc["extensions"]["VRMC_springBone"]["springs"]
        twin = copy.deepcopy(springs[0])
        twin["name"], twin["joints"] = "twin", twin["joints"][1:]      # nodes 20..22: 20 and 21 rotated twice
        springs.append(twin)

    av = load_mutated(smoke, mutate)
    assert [str(w) for w in av.warnings] == [
        "springs[1].joints[0]: node 20 is already a joint of spring 'springbone_collider_sphere_x0p02_r0p1_chain' "
        "(a joint in two springs is prohibited by VRMC_springBone 1.0); spring 'twin' skipped"]
    assert [s.name for s in av.springs] == ["springbone_collider_sphere_x0p02_r0p1_chain"]


def test_a_joint_that_is_only_the_tail_of_one_spring_warns_and_both_run(smoke):
    def mutate(doc):
        springs = doc["extensions"]["VRMC_springBone"]["springs"]
        first = copy.deepcopy(springs[0])
        first["name"], first["joints"] = "upper", first["joints"][:2]     # nodes 19, 20: 20 is its tail
        springs[0]["name"], springs[0]["joints"] = "lower", springs[0]["joints"][1:]   # 20, 21, 22
        springs.insert(0, first)

    av = load_mutated(smoke, mutate)
    assert [str(w) for w in av.warnings] == [
        "springs[1].joints[0]: node 20 is also a joint of spring 'upper' (a joint in two springs is prohibited by "
        "VRMC_springBone 1.0); kept: only one of them rotates it"]
    assert [s.name for s in av.springs] == ["upper", "lower"]


def test_unknown_spec_versions_of_mtoon_and_extended_colliders_warn(tmp_path):
    """Siblings of the VRMC_vrm one: each extension object three-vrm checks says its own."""
    from avatars.generate import default_avatar_path

    doc, bin_chunk = split(default_avatar_path().read_bytes())
    doc["materials"][1]["extensions"]["VRMC_materials_mtoon"]["specVersion"] = "1.1"
    col = doc["extensions"]["VRMC_springBone"]["colliders"][0]
    col["extensions"] = {"VRMC_springBone_extended_collider": {"specVersion": "1.0-beta", "shape": {
        "sphere": {"offset": [0.0, 0.0, 0.0], "radius": 0.05, "inside": False}}}}
    av = load_avatar(NAME, data=join(doc, bin_chunk))
    assert [str(w) for w in av.warnings] == [
        "materials[1].extensions.VRMC_materials_mtoon.specVersion: '1.1' is not a known specVersion (1.0, 1.0-beta); "
        "read as 1.0",
        "VRMC_springBone.colliders[0].extensions.VRMC_springBone_extended_collider.specVersion: '1.0-beta' is not a "
        "known specVersion (1.0); read as 1.0"]
    assert av.materials[1].mtoon is not None and av.colliders[0].radius == pytest.approx(0.05)


def test_spring_links_follow_their_springs_past_a_skipped_one(smoke):
    """A skipped spring shifted the springs after it: swaycam's links (extras.swaycamSpringLinks)
    then named the wrong springs, or none. They map through the file's indices now."""
    def mutate(doc):
        sb = doc["extensions"]["VRMC_springBone"]
        j = sb["springs"][0]["joints"]
        sb["springs"] = [{"name": "bad", "joints": j[:1]}, {"name": "a", "joints": j[:2]},
                         {"name": "b", "joints": j[2:]}]
        sb["extras"] = {"swaycamSpringLinks": [{"springs": [1, 2], "joints": [[0, 0]], "rest": [0.05]},
                                               {"springs": [0, 2], "joints": [[0, 0]], "rest": [0.05]}]}

    av = load_mutated(smoke, mutate)
    assert [s.name for s in av.springs] == ["a", "b"]
    assert [(lk.springs, lk.joints) for lk in av.spring_links] == [((0, 1), ((0, 0),))]
    assert [str(w) for w in av.warnings] == [
        "springs[0]: spring has 1 joint(s); needs 2 to form a segment; skipped",
        "VRMC_springBone.extras.swaycamSpringLinks[1]: links spring 0, which was skipped; skipped"]
