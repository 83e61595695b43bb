"""Clip sources behind one model (issue 15 item 1): VRM Animation, glTF humanoid animations
with detected bone names, BVH; ``FILE#Name``; errors that name the file and the element."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from avatars.clips import Clip, ClipError, describe, detect_bone_map, load_clips, load_file, parse_spec
from avatars.clips.bvh import load_bvh
from avatars.clips.idle import idle_clip
from avatars.math3d import quat_angle, quat_mul
from tests.avatars import glb
from tests.avatars.clip_files import CMU_JOINTS, bvh_text, gltf_clip, humanoid_skeleton, mixamo_joints, write_gltf
from tests.conftest import asset

UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")
VRMA = ("idle_loop.vrma", "test.vrma", "Jump.vrma", "Clapping.vrma", "Goodbye.vrma")
#: Unit quaternions are unit to this (rounding of normalised float32 keys).
UNIT_TOL = 1e-12


# ---------------------------------------------------------------------------- VRMA
@pytest.mark.parametrize("name", VRMA)
def test_every_shared_vrma_loads_into_world_deltas(name):
    (clip,) = load_file(asset("anim", name))
    assert isinstance(clip, Clip) and clip.duration_s > 1.0
    assert "hips" in clip.rotations and "head" in clip.rotations
    for b, q in clip.rotations.items():
        assert q.shape == (len(clip.times), 4)
        assert np.abs(np.linalg.norm(q, axis=1) - 1).max() < UNIT_TOL, b
    # at rest the deltas are the identity for a bone that does not move in the first key of test.vrma
    assert clip.rest is not None and clip.rest.position["head"][1] > clip.rest.position["hips"][1]


def test_a_vrma_without_spec_version_loads_with_a_note_not_a_refusal():
    (jump,) = load_file(asset("anim", "Jump.vrma"))
    assert any("specVersion" in n for n in jump.notes)
    (idle,) = load_file(asset("anim", "idle_loop.vrma"))
    assert not any("specVersion" in n for n in idle.notes)


def test_vrma_expression_and_look_at_tracks():
    (clip,) = load_file(asset("anim", "test.vrma"))
    assert set(clip.expressions) == {"happy"} and clip.look_at is not None
    w = clip.expressions["happy"]
    assert w.min() >= 0 and w.max() <= 1 and w.max() > 0.5
    assert any("no hips track" in n for n in clip.notes)


def _vrma_doc(name):
    data = asset("anim", name).read_bytes()
    return glb.split(data)


def test_a_vrma_without_hips_is_refused_naming_the_element(tmp_path):
    doc, bin_ = _vrma_doc("Jump.vrma")
    del doc["extensions"]["VRMC_vrm_animation"]["humanoid"]["humanBones"]["hips"]
    p = tmp_path / "nohips.vrma"
    p.write_bytes(glb.join(doc, bin_))
    with pytest.raises(ClipError, match=r"nohips\.vrma: extensions\.VRMC_vrm_animation\.humanoid\.humanBones: "
                                        r"has no hips bone"):
        load_file(p)


def test_nan_keys_are_refused_naming_channel_and_key(tmp_path):
    doc, bin_ = _vrma_doc("Jump.vrma")
    ch = doc["animations"][0]["channels"][1]          # hips rotation
    acc = doc["accessors"][doc["animations"][0]["samplers"][ch["sampler"]]["output"]]
    view = doc["bufferViews"][acc["bufferView"]]
    off = view.get("byteOffset", 0) + acc.get("byteOffset", 0) + 16 * 7    # key 7, x
    b = bytearray(bin_)
    b[off:off + 4] = struct.pack("<f", float("nan"))
    p = tmp_path / "nan.vrma"
    p.write_bytes(glb.join(doc, bytes(b)))
    with pytest.raises(ClipError, match=r"nan\.vrma: animations\[0\]\.channels\[1\] \(node \d+ 'Hips' rotation\): "
                                        r"output accessor \d+ has NaN or inf at key 7"):
        load_file(p)


def test_not_a_vrm_animation(tmp_path):
    doc, bin_ = _vrma_doc("Jump.vrma")
    del doc["extensions"]["VRMC_vrm_animation"]
    p = tmp_path / "plain.vrma"
    p.write_bytes(glb.join(doc, bin_))
    with pytest.raises(ClipError, match="no VRMC_vrm_animation extension"):
        load_file(p)


# ---------------------------------------------------------------------------- glTF (UAL, Rigify)
@pytest.fixture(scope="module")
def ual_clips():
    return load_file(asset(*UAL))


def test_the_animation_library_gives_46_clips_by_rigify_names(ual_clips):
    assert len(ual_clips) == 46
    walk = next(c for c in ual_clips if c.name == "Walk_Loop")
    assert walk.loop and abs(walk.frame_rate - 24) < 1e-6 and walk.duration_s == pytest.approx(1.3333, abs=1e-3)
    assert len(walk.bones) == 52 and walk.bone_nodes["leftUpperArm"] == "DEF-upper_arm.L"
    assert any("rigify" in n for n in walk.notes)
    roll = next(c for c in ual_clips if c.name == "Roll")
    assert not roll.loop
    d = describe(walk)
    assert d["missing_required_bones"] == [] and d["keys"] == len(walk.times)


def test_file_hash_name_picks_clips_and_sequences():
    (roll,) = load_clips(f"{asset(*UAL)}#Roll")
    assert roll.name == "Roll"
    seq = load_clips(f"{asset(*UAL)}#Jump_Start+Jump_Loop+Jump_Land")
    assert [c.name for c in seq] == ["Jump_Start", "Jump_Loop", "Jump_Land"]
    with pytest.raises(ClipError, match=r"no animation named 'Moonwalk' \(the file has: 'A_TPose', "):
        load_clips(f"{asset(*UAL)}#Moonwalk")
    with pytest.raises(ClipError, match="empty clip name"):
        parse_spec(f"{asset(*UAL)}#Roll+")


def test_world_deltas_are_the_identity_in_the_rest_pose(ual_clips):
    pose = next(c for c in ual_clips if c.name == "A_TPose")     # the library's own T-pose clip
    for b, q in pose.rotations.items():
        if b.startswith(("left", "right")) and any(f in b for f in ("Thumb", "Index", "Middle", "Ring", "Little")):
            continue                       # the fingers curl a little in the T-pose clip
        assert quat_angle(q[0], np.array([0.0, 0.0, 0.0, 1.0])) < 0.05, b


@pytest.mark.parametrize("convention,names_of", [
    ("mixamo", lambda b: "mixamorig:" + {"hips": "Hips", "spine": "Spine", "chest": "Spine1", "neck": "Neck",
                                         "head": "Head"}.get(b, b[0].upper() + b[1:].replace("UpperLeg", "UpLeg")
                                                             .replace("LowerLeg", "Leg").replace("UpperArm", "Arm")
                                                             .replace("LowerArm", "ForeArm"))),
    ("unity", lambda b: b[0].upper() + b[1:]),
    ("vroid", lambda b: "J_Bip_" + ("C_" + b[0].upper() + b[1:] if not b.startswith(("left", "right"))
                                    else ("L_" if b.startswith("left") else "R_") + b[4 if b.startswith("left") else 5:])),
])
def test_naming_conventions_are_detected(tmp_path, convention, names_of):
    bones = ["hips", "spine", "chest", "neck", "head"] + [f"{s}{p}" for s in ("left", "right") for p in
                                                           ("UpperLeg", "LowerLeg", "Foot", "UpperArm", "LowerArm", "Hand")]
    names, parents, tr = humanoid_skeleton({b: names_of(b) for b in bones})
    p = write_gltf(tmp_path / "c.gltf", gltf_clip(names, parents, tr))
    (clip,) = load_file(p)
    assert set(clip.bones) == set(bones)
    assert any(convention in n for n in clip.notes)


def test_a_bone_map_file_and_its_sidecar(tmp_path):
    custom = {b: f"bone_{i:02d}" for i, b in enumerate(
        ["hips", "spine", "chest", "neck", "head"] + [f"{s}{p}" for s in ("left", "right")
                                                      for p in ("UpperLeg", "LowerLeg", "Foot", "UpperArm", "LowerArm",
                                                                "Hand")])}
    names, parents, tr = humanoid_skeleton(custom)
    p = write_gltf(tmp_path / "odd.gltf", gltf_clip(names, parents, tr))
    # names of no convention: mapped by the skeleton's topology and rest pose (avatars/clips/topology.py)
    (clip,) = load_file(p)
    assert clip.bone_nodes == custom and any("topology" in n for n in clip.notes)
    m = tmp_path / "map.json"
    m.write_text(json.dumps(custom))
    (clip,) = load_file(p, bone_map=m)
    assert clip.bone_nodes["leftHand"] == custom["leftHand"]
    (tmp_path / "odd.bonemap.json").write_text(json.dumps(custom))
    (clip,) = load_file(p)
    assert any("odd.bonemap.json" in n for n in clip.notes)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hips": "nope"}))
    with pytest.raises(ClipError, match="hips: joint 'nope' is not in nodes"):
        load_file(p, bone_map=bad)


def test_a_gltf_without_a_humanoid_skeleton_is_refused(tmp_path):
    p = write_gltf(tmp_path / "crane.gltf", gltf_clip(["base", "arm", "hook"], [-1, 0, 1], [(0, 0, 0)] * 3))
    with pytest.raises(ClipError, match=r"crane\.gltf: nodes: no humanoid-looking skeleton .*joint names: base, arm, hook"):
        load_file(p)


def test_a_clip_shorter_than_one_frame_is_refused(tmp_path):
    names, parents, tr = humanoid_skeleton({b: b for b in ["hips", "spine", "chest", "neck", "head"] + [
        f"{s}{p}" for s in ("left", "right") for p in ("UpperLeg", "LowerLeg", "Foot", "UpperArm", "LowerArm", "Hand")]})
    p = write_gltf(tmp_path / "blink.gltf", gltf_clip(names, parents, tr, keys=2, duration=0.004))
    with pytest.raises(ClipError, match=r"blink\.gltf: clip 'Swing': times: lasts 0\.004 s, shorter than one frame"):
        load_file(p)
    p = write_gltf(tmp_path / "one.gltf", gltf_clip(names, parents, tr, keys=1))
    with pytest.raises(ClipError, match="shorter than one frame"):
        load_file(p)


def test_gltf_nan_keys_name_the_channel(tmp_path):
    names, parents, tr = humanoid_skeleton({b: b for b in ["hips", "spine", "chest", "neck", "head"] + [
        f"{s}{p}" for s in ("left", "right") for p in ("UpperLeg", "LowerLeg", "Foot", "UpperArm", "LowerArm", "Hand")]})
    p = write_gltf(tmp_path / "nan.gltf", gltf_clip(names, parents, tr, nan_at=3))
    with pytest.raises(ClipError, match=r"animations\[0\]\.channels\[0\] \(node 0 'hips' rotation\): output accessor 1 "
                                        r"has NaN or inf at key 3"):
        load_file(p)


# ---------------------------------------------------------------------------- BVH
def test_a_cmu_bvh_loads_at_its_frame_rate_with_units_guessed(tmp_path):
    p = tmp_path / "cmu.bvh"
    p.write_text(bvh_text(frame_time=1 / 120, frames=121))
    clip = load_bvh(p)
    assert clip.frame_rate == pytest.approx(120.0) and clip.duration_s == pytest.approx(1.0)
    assert clip.bone_nodes["spine"] == "LowerBack" and clip.bone_nodes["chest"] == "Spine"
    assert any("cmu" in n for n in clip.notes) and any("centimetres" in n for n in clip.notes)
    # the rest hips stand at the leg height: 92 units of hips over the toes' end
    assert clip.rest.position["hips"][1] - clip.rest.ground_y == pytest.approx(0.01 * (5 + 42 + 40 + 6 + 5 - 5), abs=0.02)
    # the swing of LeftUpLeg about X (Z X Y order) shows in its world delta
    q = clip.rotations["leftUpperLeg"]
    assert quat_angle(q[30], np.array([0.0, 0, 0, 1])) == pytest.approx(np.radians(30.0), abs=1e-6)


def test_a_mixamo_style_bvh_and_a_unit_scale(tmp_path):
    p = tmp_path / "mixamo.bvh"
    p.write_text(bvh_text(joints=mixamo_joints(), frame_time=1 / 24, frames=25, order="XYZ"))
    clip = load_bvh(p, unit_scale=0.02)
    assert clip.bone_nodes["spine"] == "Spine" and clip.bone_nodes["chest"] == "Spine1"
    assert any("mixamo" in n for n in clip.notes)
    assert clip.rest.position["head"][1] > clip.rest.position["hips"][1]


def test_rotation_channels_compose_in_their_listed_order(tmp_path):
    text = bvh_text(frames=3)
    # every joint's channels are "Zrotation Xrotation Yrotation"; give the hips Z=90, X=90
    lines = text.splitlines()
    motion = lines.index("MOTION")
    vals = lines[motion + 3].split()
    vals[3], vals[4] = "90", "90"
    lines[motion + 3] = " ".join(vals)
    p = tmp_path / "order.bvh"
    p.write_text("\n".join(lines) + "\n")
    clip = load_bvh(p)
    rz = np.array([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)])
    rx = np.array([np.sin(np.pi / 4), 0, 0, np.cos(np.pi / 4)])
    assert quat_angle(clip.rotations["hips"][0], quat_mul(rz, rx)) < 1e-9


def test_bvh_broken_hierarchy_names_the_line(tmp_path):
    text = bvh_text(frames=2).splitlines()
    i = next(k for k, ln in enumerate(text) if "JOINT LeftLeg" in ln)
    del text[i + 1]                                       # the '{' after JOINT LeftLeg
    p = tmp_path / "broken.bvh"
    p.write_text("\n".join(text) + "\n")
    with pytest.raises(ClipError, match=rf"broken\.bvh: line {i + 2}: expected '{{' after JOINT LeftLeg"):
        load_bvh(p)
    text = bvh_text(frames=2).splitlines()
    k = next(k for k, ln in enumerate(text) if ln.strip() == "MOTION")
    del text[k - 1]                                       # the root's closing brace
    p.write_text("\n".join(text) + "\n")
    with pytest.raises(ClipError, match=r"line \d+: joint 'Hips' is not closed"):
        load_bvh(p)


def test_bvh_channel_count_mismatch_names_the_line(tmp_path):
    text = bvh_text(frames=4).splitlines()
    k = text.index("MOTION")
    text[k + 5] = text[k + 5] + " 1.0 2.0"
    p = tmp_path / "count.bvh"
    p.write_text("\n".join(text) + "\n")
    nchan = 6 + 3 * (len(CMU_JOINTS) - 1)
    with pytest.raises(ClipError, match=rf"count\.bvh: line {k + 6}: frame 2 has {nchan + 2} values, the hierarchy "
                                        rf"declares {nchan} channels"):
        load_bvh(p)
    text = bvh_text(frames=4).splitlines()
    text[text.index("MOTION") + 1] = "Frames: 9"
    p.write_text("\n".join(text) + "\n")
    with pytest.raises(ClipError, match="Frames: 9 but only 4 frame lines"):
        load_bvh(p)


def test_a_bvh_without_a_humanoid_is_refused(tmp_path):
    joints = [("Root", None, (0, 0, 0)), ("Boom", "Root", (0, 10, 0)), ("Jib", "Boom", (10, 0, 0))]
    p = tmp_path / "crane.bvh"
    p.write_text(bvh_text(joints=joints, frames=3))
    with pytest.raises(ClipError, match=r"crane\.bvh: HIERARCHY: no humanoid-looking skeleton"):
        load_bvh(p)


# ---------------------------------------------------------------------------- idle, bone maps
def test_the_generated_idle_loops_smoothly():
    clip = idle_clip(leg_m=0.8)
    assert clip.loop and clip.rest is None and clip.duration_s == 24.0
    for b, q in clip.rotations.items():
        assert quat_angle(q[0], q[-1]) < 1e-12, b              # the last key is the first: a seamless loop
        assert np.max(quat_angle(q[1:], q[:-1])) < np.radians(0.1), b   # slow: < 0.1° per 1/30 s
    assert np.abs(clip.hips_position).max() < 0.013


def test_detect_bone_map_reports_missing_required_bones():
    names = ["Hips", "Head", "LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot"]
    m = detect_bone_map(names)
    assert m.convention == "mixamo" and "spine" in m.missing_required and "leftHand" in m.missing_required


def test_a_clip_facing_minus_z_is_turned_to_face_plus_z(tmp_path):
    """A skeleton whose left is at −X and toes point −Z (a VRM 0.x-style export) is turned by
    180° about +Y. The same channel values swing its thigh about its own X, which faces the
    other way: after the turn that is the +Z clip's swing about −X, the inverse rotation."""
    flipped = [(n, p, (-o[0], o[1], -o[2])) for n, p, o in CMU_JOINTS]
    (tmp_path / "plus.bvh").write_text(bvh_text(frames=20))
    (tmp_path / "minus.bvh").write_text(bvh_text(joints=flipped, frames=20))
    plus, minus = load_bvh(tmp_path / "plus.bvh"), load_bvh(tmp_path / "minus.bvh")
    assert not any("turned" in n for n in plus.notes)
    assert any("turned by -180° about +Y to face +Z" in n for n in minus.notes), minus.notes
    assert minus.rest.position["leftUpperLeg"][0] > 0 and minus.rest.position["leftToes"][2] > 0
    a, b = minus.rotations["leftUpperLeg"][7], plus.rotations["leftUpperLeg"][7]
    assert quat_angle(b, np.array([0.0, 0, 0, 1])) > 0.1
    assert quat_angle(a, b * [-1, -1, -1, 1]) < 1e-9
