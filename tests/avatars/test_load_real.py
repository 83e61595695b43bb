"""Loading the real VRM files of ../shared/assets/vrm and checking facts about them."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.math3d import vec_transform_quat
from tests.conftest import asset

EXACT = 1e-12          # values copied through float64 unchanged
F32 = 1e-7             # values stored as float32 in the file


@pytest.fixture(scope="module")
def godette(godette_path):
    return load_avatar(godette_path)


def test_every_shared_vrm_loads_without_warnings():
    files = sorted(asset("vrm").glob("*.vrm"))
    assert len(files) == 5
    for f in files:
        a = load_avatar(f)
        assert a.warnings == (), f"{f.name}: {a.warnings}"
        assert a.skeleton.node_count > 0


def test_godette_is_vrm0_with_expanded_springs(godette):
    assert godette.vrm_version == "0.x"
    assert godette.format_name == "VRM 0.x"
    assert len(godette.springs) == 8  # 4 + 1 + 3 roots, each a 2-node chain
    assert godette.spring_joint_count() == 16
    assert all(s.tail_offset is not None for s in godette.springs)
    # the 7 cm virtual tail of VRM 0.x leaves
    for s in godette.springs:
        assert np.linalg.norm(s.tail_offset) == pytest.approx(0.07, abs=1e-12)
    stiff = sorted({s.joints[0].stiffness for s in godette.springs})
    assert stiff == [2.0, 2.5, 4.0]  # read from the misspelled 'stiffiness' key
    names = {godette.skeleton.names[s.joints[0].node] for s in godette.springs}
    assert names == {"FrontHair_Center_L", "FrontHair_Center_R", "FrontHair_L", "FrontHair_R", "Ribbon",
                     "HairBall_L", "HairBall_R", "HairBall_Center"}


def test_godette_colliders(godette):
    assert len(godette.colliders) == 4
    assert [len(g.colliders) for g in godette.collider_groups] == [2, 2]
    assert all(c.shape == "sphere" for c in godette.colliders)
    radii = [c.radius for c in godette.colliders]
    assert radii == pytest.approx([0.10000000149011612, 0.21699999272823334, 0.15000000596046448, 1.0], abs=EXACT)
    # file offset of collider 0 is (1.6e-10, 0.06, -0.04) in Unity's left-handed frame: z is
    # negated on import (-> +0.04), then the VRM 0.x turn to +Z negates x and z (-> -0.04).
    c0 = godette.colliders[0]
    assert c0.offset == pytest.approx([-1.60711888241849e-10, 0.060000061988830566, -0.039999956265091896], abs=EXACT)
    assert godette.skeleton.names[c0.node] == "chest_Armature"


def test_godette_expressions_and_morphs(godette):
    face = [godette.meshes[i.mesh] for i in godette.mesh_instances if godette.meshes[i.mesh].name == "FaceMesh"]
    assert len(face) == 1 and len(face[0].target_names) == 15
    for name in ("aa", "ih", "ou", "ee", "oh", "blink"):
        e = godette.expressions[name]
        assert e.preset
        assert e.morph_target_binds, name
        for b in e.morph_target_binds:
            assert 0.0 < b.weight <= 1.0
    assert {"happy", "sad", "relaxed", "blinkLeft", "blinkRight"} <= set(godette.expressions)


def test_godette_faces_plus_z(godette):
    w = godette.skeleton.rest_world
    hb = godette.humanoid
    head = w[hb["head"], :3, 3]
    # front hair hangs in front of the head centre, the backpack behind the chest
    fh = w[godette.skeleton.find("FrontHair_Center_L"), :3, 3]
    back = w[godette.skeleton.find("backpack_Armature"), :3, 3]
    chest = w[hb["chest"], :3, 3]
    assert fh[2] > head[2] + 0.1
    assert back[2] < chest[2] - 0.1
    # the avatar's left hand is at +X when it faces +Z
    assert w[hb["leftHand"], 0, 3] > 0.3 and w[hb["rightHand"], 0, 3] < -0.3
    # nose-side face vertices (max z) are in front of the head bone
    inst = next(i for i in godette.mesh_instances if godette.meshes[i.mesh].name == "FaceMesh")
    pos = np.concatenate([p.positions for p in godette.meshes[inst.mesh].primitives])
    assert pos[:, 2].max() > head[2] + 0.1


def test_godette_skinning_is_consistent_after_turn(godette):
    """Rest world @ inverse bind must be identity-like for a well-formed skin after the +Z turn."""
    skin = godette.skins[0]
    m = godette.skeleton.rest_world[skin.joints] @ skin.inverse_bind
    assert np.abs(m - np.eye(4)).max() < 1e-5


def test_godette_humanoid_and_meta(godette):
    assert len(godette.humanoid) == 45
    assert godette.skeleton.names[godette.humanoid["head"]] == "head_Armature"
    assert godette.meta.name == "Low-Poly Godette"
    assert godette.meta.authors == ("SirRichard94",)
    assert godette.meta.license_name == "CC_BY"


def test_godette_materials_mtoon(godette):
    mats = {m.name: m for m in godette.materials}
    assert mats["Face"].mtoon is not None and mats["Body"].mtoon is not None
    assert mats["GodotLogo"].alpha_mode == "BLEND"
    img = godette.images[godette.textures[mats["Body"].base_color_texture.texture].image]
    assert img.rgba.dtype == np.uint8 and img.rgba.ndim == 3 and img.rgba.shape[2] == 4


def test_smoke_spring():
    a = load_avatar(asset("vrm", "smoke_spring.vrm"))
    assert a.vrm_version == "1.0"
    assert len(a.springs) == 1
    s = a.springs[0]
    assert len(s.joints) == 4 and s.segment_count == 3 and s.tail_offset is None
    assert [j.node for j in s.joints] == [19, 20, 21, 22]
    assert s.joints[0].hit_radius == pytest.approx(0.02, abs=F32)
    assert s.joints[0].stiffness == 0.5 and s.joints[0].gravity_power == 0.5
    assert a.colliders == ()


def test_sphere_collider_file_reads_exactly():
    a = load_avatar(asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm"))
    assert len(a.colliders) == 1
    c = a.colliders[0]
    assert c.shape == "sphere"
    # VRM 1.0: no handedness conversion; values exactly as stored (float32 written as JSON)
    assert c.radius == 0.10000000149011612
    assert list(c.offset) == [0.019999999552965164, -0.10000000149011612, 0.0]
    assert a.springs[0].collider_groups == (0,)
    assert a.collider_groups[0].name == "head_g"


def test_debug_robot_humanoid_no_skin():
    a = load_avatar(asset("vrm", "debug_robot.vrm"))
    assert a.vrm_version == "1.0"
    assert len(a.humanoid) == 53
    assert a.skins == ()
    assert all(i.skin == -1 for i in a.mesh_instances)


def test_sphere_vrm0():
    a = load_avatar(asset("vrm", "sphere.vrm"))
    assert a.vrm_version == "0.x"
    assert a.springs == () and a.colliders == ()
    assert a.meta.license_name == "CC0"


def test_forward_kinematics_matches_rest(godette):
    sk = godette.skeleton
    w = sk.forward_kinematics()
    assert np.abs(w - sk.rest_world).max() < EXACT
    # rotating the head rotates the front hair about the head position
    q = np.tile([0.0, 0.0, 0.0, 1.0], (sk.node_count, 1))
    q[:] = sk.rest_rotation
    head = godette.humanoid["head"]
    yaw = np.array([0.0, np.sin(np.pi / 12), 0.0, np.cos(np.pi / 12)])  # 30 degrees about +Y
    from avatars.math3d import quat_mul
    q[head] = quat_mul(q[head], yaw)
    w2 = sk.forward_kinematics(rotation=q)
    hair = sk.find("FrontHair_Center_L")
    rel0 = sk.rest_world[hair, :3, 3] - sk.rest_world[head, :3, 3]
    rel1 = w2[hair, :3, 3] - w2[head, :3, 3]
    R_head = sk.rest_world[head, :3, :3]
    expected = R_head @ vec_transform_quat(R_head.T @ rel0, yaw)
    assert rel1 == pytest.approx(expected, abs=1e-12)


def test_load_speed_is_reasonable_benchmark(benchmark, godette_path):
    benchmark(load_avatar, godette_path)
