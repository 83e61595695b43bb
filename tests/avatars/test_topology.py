"""Bone mapping by skeleton topology and rest pose (avatars/clips/topology.py), per naming:
a CMU conversion, Unreal's mannequin, a Blender metarig, anonymous joints (sides from the
rest pose), and the conventions it must agree with (Mixamo, the shared Rigify library)."""

import numpy as np
import pytest

from avatars import assets
from avatars.clips import format_inspection, inspect_file, load_file
from avatars.clips.bonemap import detect_bone_map
from avatars.clips.topology import topology_bone_map

from .clip_files import CMU_JOINTS, bvh_text, gltf_clip, mixamo_joints, write_gltf

#: the CMU conversion the README promises (issue 31): Hips, LHipJoint, LeftHip, LeftKnee, LeftAnkle...
CMU_CONVERSION = {"LeftUpLeg": "LeftHip", "LeftLeg": "LeftKnee", "LeftFoot": "LeftAnkle", "LeftToeBase": "LeftToe",
                  "LeftShoulder": "LeftCollar", "LeftArm": "LeftShoulder", "LeftForeArm": "LeftElbow",
                  "LeftHand": "LeftWrist"}
CMU_CONVERSION.update({k.replace("Left", "Right"): v.replace("Left", "Right") for k, v in CMU_CONVERSION.items()})


def renamed(joints, names):
    return [(names.get(n, n), names.get(p, p) if p is not None else None, o) for n, p, o in joints]


def world(joints):
    names = [n for n, _, _ in joints]
    parents = [names.index(p) if p is not None else -1 for _, p, _ in joints]
    pos = np.zeros((len(joints), 3))
    for j, (_, _, o) in enumerate(joints):
        pos[j] = np.asarray(o, float) + (pos[parents[j]] if parents[j] >= 0 else 0)
    return names, parents, pos


def by_name(names, bones):
    return {b: names[j] for b, j in bones.items()}


def test_cmu_conversion_bvh_maps_without_a_bone_map(tmp_path):
    p = tmp_path / "01_01.bvh"
    p.write_text(bvh_text(joints=renamed(CMU_JOINTS, CMU_CONVERSION)))
    (clip,) = load_file(p)
    assert any("topology" in n for n in clip.notes)
    m = clip.bone_nodes
    expect = {"hips": "Hips", "spine": "LowerBack", "chest": "Spine", "upperChest": "Spine1", "neck": "Neck",
              "head": "Head", "leftUpperLeg": "LeftHip", "leftLowerLeg": "LeftKnee", "leftFoot": "LeftAnkle",
              "leftToes": "LeftToe", "rightUpperLeg": "RightHip", "rightFoot": "RightAnkle",
              "leftShoulder": "LeftCollar", "leftUpperArm": "LeftShoulder", "leftLowerArm": "LeftElbow",
              "leftHand": "LeftWrist", "rightUpperArm": "RightShoulder", "rightHand": "RightWrist"}
    assert {b: m.get(b) for b in expect} == expect
    text = format_inspection(inspect_file(p))
    assert "leftUpperLeg <- LeftHip" in text and "topology" in text


def test_a_bone_map_still_overrides(tmp_path):
    p = tmp_path / "c.bvh"
    p.write_text(bvh_text(joints=renamed(CMU_JOINTS, CMU_CONVERSION)))
    file_map = {"hips": "Hips", "head": "Head", "leftUpperLeg": "LeftKnee", "leftLowerLeg": "LeftAnkle",
                "leftFoot": "LeftToe", "rightUpperLeg": "RightHip", "rightLowerLeg": "RightKnee",
                "rightFoot": "RightAnkle"}
    (clip,) = load_file(p, bone_map=file_map)
    assert clip.bone_nodes["leftUpperLeg"] == "LeftKnee" and "leftUpperArm" not in clip.bone_nodes


def _unreal():
    j = [("root", None, (0, 0, 0)), ("pelvis", "root", (0, 95, 0)), ("spine_01", "pelvis", (0, 10, 0)),
         ("spine_02", "spine_01", (0, 12, 0)), ("spine_03", "spine_02", (0, 12, 0)),
         ("neck_01", "spine_03", (0, 18, 0)), ("head", "neck_01", (0, 9, 0)),
         ("ik_foot_root", "root", (0, 0, 0)), ("ik_foot_l", "ik_foot_root", (10, 5, 0)),
         ("ik_hand_root", "root", (0, 0, 0)), ("ik_hand_gun", "ik_hand_root", (50, 120, 0)),
         ("ik_hand_l", "ik_hand_gun", (5, 0, 0))]
    for s, x in (("l", 1), ("r", -1)):
        j += [(f"clavicle_{s}", "spine_03", (3 * x, 14, 0)), (f"upperarm_{s}", f"clavicle_{s}", (15 * x, 0, 0)),
              (f"upperarm_twist_01_{s}", f"upperarm_{s}", (10 * x, 0, 0)),
              (f"lowerarm_{s}", f"upperarm_{s}", (28 * x, 0, 0)),
              (f"lowerarm_twist_01_{s}", f"lowerarm_{s}", (12 * x, 0, 0)),
              (f"hand_{s}", f"lowerarm_{s}", (25 * x, 0, 0)),
              (f"thigh_{s}", "pelvis", (9 * x, -5, 0)), (f"thigh_twist_01_{s}", f"thigh_{s}", (0, -20, 0)),
              (f"calf_{s}", f"thigh_{s}", (0, -42, 0)), (f"foot_{s}", f"calf_{s}", (0, -40, 0)),
              (f"ball_{s}", f"foot_{s}", (0, -6, 12))]
        for f, dz in (("thumb", 3), ("index", 2), ("middle", 0), ("ring", -2), ("pinky", -4)):
            j += [(f"{f}_01_{s}", f"hand_{s}", (4 * x, 0, dz)), (f"{f}_02_{s}", f"{f}_01_{s}", (3 * x, 0, 0)),
                  (f"{f}_03_{s}", f"{f}_02_{s}", (2 * x, 0, 0))]
    return j


def test_unreal_mannequin_gltf_maps_without_a_bone_map(tmp_path):
    names, parents, _ = world(_unreal())
    trans = [o for _, _, o in _unreal()]
    p = write_gltf(tmp_path / "ue.gltf", gltf_clip(names, parents, np.array(trans, float) * 0.01,
                                                    rotation_node=names.index("thigh_l")))
    (clip,) = load_file(p)
    m = clip.bone_nodes
    assert m["hips"] == "pelvis" and m["spine"] == "spine_01" and m["upperChest"] == "spine_03"
    assert m["neck"] == "neck_01" and m["head"] == "head"
    assert (m["leftShoulder"], m["leftUpperArm"], m["leftLowerArm"], m["leftHand"]) == \
        ("clavicle_l", "upperarm_l", "lowerarm_l", "hand_l")
    assert (m["rightUpperLeg"], m["rightLowerLeg"], m["rightFoot"], m["rightToes"]) == \
        ("thigh_r", "calf_r", "foot_r", "ball_r")
    assert (m["leftThumbMetacarpal"], m["leftIndexProximal"], m["leftLittleDistal"]) == \
        ("thumb_01_l", "index_01_l", "pinky_03_l")


def _metarig():
    j = [("spine", None, (0, 1.0, 0)), ("spine.001", "spine", (0, 0.1, 0)), ("spine.002", "spine.001", (0, 0.12, 0)),
         ("spine.003", "spine.002", (0, 0.12, 0)), ("spine.004", "spine.003", (0, 0.18, 0)),
         ("spine.005", "spine.004", (0, 0.05, 0)), ("spine.006", "spine.005", (0, 0.05, 0)),
         ("face", "spine.006", (0, 0.02, 0.05)), ("jaw", "face", (0, -0.04, 0.05)), ("nose", "face", (0, 0.03, 0.1))]
    for s, x in (("L", 1), ("R", -1)):
        j += [(f"shoulder.{s}", "spine.003", (0.02 * x, 0.14, 0)), (f"upper_arm.{s}", f"shoulder.{s}", (0.15 * x, 0, 0)),
              (f"forearm.{s}", f"upper_arm.{s}", (0.28 * x, 0, 0)), (f"hand.{s}", f"forearm.{s}", (0.25 * x, 0, 0)),
              (f"thigh.{s}", "spine", (0.1 * x, 0, 0)), (f"shin.{s}", f"thigh.{s}", (0, -0.45, 0)),
              (f"foot.{s}", f"shin.{s}", (0, -0.42, 0)), (f"toe.{s}", f"foot.{s}", (0, -0.05, 0.12)),
              (f"heel.02.{s}", f"foot.{s}", (0.02 * x, -0.05, -0.03))]
        for f, dz in (("thumb", 0.03), ("f_index", 0.02), ("f_middle", 0), ("f_ring", -0.02), ("f_pinky", -0.04)):
            base = f"hand.{s}"
            for k in (1, 2, 3):
                j.append((f"{f}.0{k}.{s}", base, ((0.04 if k == 1 else 0.03) * x, 0, dz if k == 1 else 0)))
                base = f"{f}.0{k}.{s}"
    return j


def test_blender_metarig_maps_without_a_bone_map(tmp_path):
    p = tmp_path / "meta.bvh"
    p.write_text(bvh_text(joints=[(n, par, tuple(100 * np.asarray(o))) for n, par, o in _metarig()]))
    (clip,) = load_file(p)
    m = clip.bone_nodes
    assert (m["hips"], m["spine"], m["chest"], m["upperChest"]) == ("spine", "spine.001", "spine.002", "spine.003")
    assert m["neck"] == "spine.004" and m["head"] == "spine.006"
    assert (m["leftUpperArm"], m["leftHand"], m["rightLowerArm"]) == ("upper_arm.L", "hand.L", "forearm.R")
    assert (m["leftUpperLeg"], m["leftFoot"], m["leftToes"]) == ("thigh.L", "foot.L", "toe.L")
    assert m["rightIndexProximal"] == "f_index.01.R" and m["rightThumbDistal"] == "thumb.03.R"


@pytest.mark.parametrize("facing", [1.0, -1.0])
def test_anonymous_joints_take_their_sides_from_the_rest_pose(facing):
    """Names j0, j1, ...: left is up x forward, forward being where the toes point."""
    joints = [(f"j{i}", None if p is None else f"j{[n for n, _, _ in CMU_JOINTS].index(p)}",
               (o[0] * facing, o[1], o[2] * facing)) for i, (n, p, o) in enumerate(CMU_JOINTS)]
    names, parents, pos = world(joints)
    got = by_name(names, topology_bone_map(names, parents, pos))
    cmu = [n for n, _, _ in CMU_JOINTS]
    want = {"leftUpperLeg": "LeftUpLeg", "leftFoot": "LeftFoot", "rightHand": "RightHand", "leftUpperArm": "LeftArm",
            "head": "Head", "upperChest": "Spine1"}
    assert {b: cmu[int(got[b][1:])] for b in want} == want


def test_topology_agrees_with_the_naming_conventions():
    """Where a convention maps the skeleton, the topology gives the same map: Mixamo."""
    names, parents, pos = world(mixamo_joints())
    assert topology_bone_map(names, parents, pos) == detect_bone_map(names).bones


def test_shared_rigify_library_maps_alike_both_ways():
    """The shared clip library (Rigify DEF-* bones): its convention's map (what the clips use,
    so hair and body results are those of before) is exactly the topology's."""
    path = assets.find_asset("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")
    if path is None:
        pytest.skip("shared assets not available")
    from avatars.clips.channels import world_pose
    from avatars.gltf_io import read_document
    from avatars.nodes import build_skeleton

    sk = build_skeleton(read_document(path))
    _, pos = world_pose(sk, np.asarray(sk.rest_translation)[None], np.asarray(sk.rest_rotation)[None],
                        np.asarray(sk.rest_scale)[None])
    names = list(sk.names)
    named = detect_bone_map(names, shape=(names, sk.parents, pos[0]))
    assert named.convention == "rigify"
    assert topology_bone_map(names, sk.parents, pos[0]) == named.bones
