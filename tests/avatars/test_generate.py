"""The generated avatars (avatars.generate) reload through avatars.load_avatar and pass the
checks the real files pass: VRM 1.0, humanoid, skin, springs/colliders, expressions, faces +Z."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from avatars import Avatar, load_avatar
from avatars.generate import build_default_avatar, build_layered_avatar
from avatars.generate.colliders import segment_distance
from avatars.generate.face import EYE_X, EYE_Y, MOUTH_Y, NOSE
from avatars.generate.rig import HEAD_CENTER

F32 = 1e-6          # float32 round trip of metre-scale values
KINDS = ("default", "layered")
BUILDERS = {"default": build_default_avatar, "layered": build_layered_avatar}
# the VRM 1.0 preset emotions were appended after happy (issue 34 finding 9): the older
# targets keep their indices
EMOTIONS = ("happy", "angry", "sad", "relaxed", "surprised")
TARGETS = ("blink", "blinkLeft", "blinkRight", "aa", "ih", "ou", "ee", "oh", *EMOTIONS)
HUMAN_BONES = (
    "hips", "spine", "chest", "upperChest", "neck", "head",
    *(f"{s}{p}" for s in ("left", "right")
      for p in ("Shoulder", "UpperArm", "LowerArm", "Hand", "UpperLeg", "LowerLeg", "Foot")),
)
# the numbers the generator was designed with (see avatars/generate/default.py, layered.py)
EXPECTED = {
    "default": dict(name="swaycam default", springs=9, joints=38, nodes=64, vertices=14938,
                    chains={"Bang": 5, "SideLock": 2, "Ponytail": 1, "Ahoge": 1}),
    "layered": dict(name="swaycam layered", springs=26, joints=140, nodes=166, vertices=27886,
                    chains={"Bang": 6, "SideLock": 2, "Inner": 10, "Outer": 8}),
}


@functools.lru_cache(maxsize=None)
def generated(kind: str) -> tuple[bytes, Avatar]:
    """(GLB bytes, loaded avatar) of a generated avatar, built once per test session."""
    data = BUILDERS[kind]()
    return data, load_avatar(f"{kind}.vrm", data)


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    return request.param


@pytest.fixture
def avatar(kind) -> Avatar:
    return generated(kind)[1]


def face_instance(a: Avatar):
    return next(i for i in a.mesh_instances if a.meshes[i.mesh].name == "Face")


def spring_nodes(a: Avatar) -> set[int]:
    return {j.node for s in a.springs for j in s.joints}


def dominant_nodes(a: Avatar, prim, skin) -> np.ndarray:
    """Node index of each vertex's largest skin weight."""
    k = np.argmax(prim.weights, axis=1)
    return a.skins[skin].joints[prim.joints[np.arange(prim.vertex_count), k]]


def hair_vertex_count(a: Avatar) -> int:
    """Vertices whose dominant skin weight is on a spring joint."""
    nodes = np.array(sorted(spring_nodes(a)))
    return sum(int(np.isin(dominant_nodes(a, p, mi.skin), nodes).sum())
               for mi in a.mesh_instances for p in a.meshes[mi.mesh].primitives)


# --------------------------------------------------------------------------- format


def test_loads_as_vrm_1_without_warnings(avatar, kind):
    assert avatar.vrm_version == "1.0"
    assert avatar.warnings == ()
    assert avatar.meta.name == EXPECTED[kind]["name"]
    assert avatar.meta.authors == ("swaycam",)
    assert avatar.meta.license_url == "https://vrm.dev/licenses/1.0/"
    assert avatar.meta.avatar_permission == "everyone"
    assert avatar.meta.commercial_usage == "corporation"
    assert avatar.meta.allow_redistribution is True
    assert avatar.meta.modification == "allowModificationRedistribution"


def test_humanoid_bones(avatar, kind):
    assert set(HUMAN_BONES) <= set(avatar.humanoid)
    assert len(avatar.humanoid) == 22          # the 20 body bones and leftEye / rightEye
    head = avatar.humanoid["head"]
    for eye in ("leftEye", "rightEye"):
        assert avatar.skeleton.parents[avatar.humanoid[eye]] == head
    assert avatar.skeleton.node_count == EXPECTED[kind]["nodes"]
    w = avatar.skeleton.rest_world
    head_y = w[avatar.humanoid["head"], 1, 3]
    assert 1.40 < head_y < 1.60
    # the avatar's left is +X (it faces +Z)
    for part in ("Shoulder", "UpperArm", "Hand", "UpperLeg", "Foot"):
        assert w[avatar.humanoid[f"left{part}"], 0, 3] > 0 > w[avatar.humanoid[f"right{part}"], 0, 3]
    # every bone has an identity rest rotation
    assert np.abs(avatar.skeleton.rest_rotation - [0, 0, 0, 1]).max() == 0.0


def test_one_skin_with_exact_inverse_bind_matrices(avatar):
    assert len(avatar.skins) == 1
    skin = avatar.skins[0]
    assert set(avatar.humanoid.values()) | spring_nodes(avatar) <= set(skin.joints.tolist())
    m = avatar.skeleton.rest_world[skin.joints] @ skin.inverse_bind
    assert np.abs(m - np.eye(4)).max() < F32
    assert all(i.skin == 0 for i in avatar.mesh_instances)


def test_vertex_weights_are_valid(avatar):
    n_joints = len(avatar.skins[0].joints)
    for mi in avatar.mesh_instances:
        for p in avatar.meshes[mi.mesh].primitives:
            assert p.joints.shape == (p.vertex_count, 4) and p.weights.shape == (p.vertex_count, 4)
            assert int(p.joints.max()) < n_joints
            assert np.all(p.weights >= 0)
            assert np.abs(p.weights.sum(axis=1) - 1.0).max() < F32
            assert p.normals is not None
            assert np.abs(np.linalg.norm(p.normals, axis=1) - 1.0).max() < 1e-5
            assert p.indices.size % 3 == 0 and int(p.indices.max()) < p.vertex_count


def test_vertex_counts(avatar, kind):
    assert avatar.vertex_count() == EXPECTED[kind]["vertices"]
    assert [avatar.meshes[i.mesh].name for i in avatar.mesh_instances] == ["Body", "Face", "Hair"]


def test_faces_plus_z(avatar):
    face = avatar.meshes[face_instance(avatar).mesh]
    skin = face.primitives[0]  # the head skin (material "skin")
    pos = skin.positions
    front = pos[(np.abs(pos[:, 0]) < 0.004) & (np.abs(pos[:, 1] - NOSE[1]) < 0.01)]
    nose = front[np.argmax(front[:, 2])]
    assert nose[2] > HEAD_CENTER[2] + 0.085  # the nose is at the front (+Z) of the head
    cheek = pos[(np.abs(np.abs(pos[:, 0]) - 0.02) < 0.004) & (np.abs(pos[:, 1] - nose[1]) < 0.004)]
    assert len(cheek) and nose[2] > cheek[:, 2].max() + 0.003  # and sticks out of the face
    for p in face.primitives[1:]:  # eyes, lashes, brows, mouth, blush: all on the front
        assert p.positions[:, 2].min() > HEAD_CENTER[2] + 0.025
        assert p.positions[:, 2].mean() > HEAD_CENTER[2] + 0.045
    w = avatar.skeleton.rest_world
    assert w[avatar.humanoid["head"], 2, 3] < nose[2]


# --------------------------------------------------------------------------- expressions


def moved(a: Avatar, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(rest positions, deltas) of the face vertices an expression moves (weight 1)."""
    e = a.expressions[name]
    inst = face_instance(a)
    mesh = a.meshes[inst.mesh]
    pos, delta = [], []
    for b in e.morph_target_binds:
        assert b.node == inst.node
        for p in mesh.primitives:
            d = p.morph_positions[b.index] * b.weight
            m = np.linalg.norm(d, axis=1) > 1e-7
            pos.append(p.positions[m])
            delta.append(d[m])
    return np.concatenate(pos), np.concatenate(delta)


def test_expressions_have_binds_to_face_targets(avatar):
    assert set(TARGETS) <= set(avatar.expressions)
    mesh = avatar.meshes[face_instance(avatar).mesh]
    assert mesh.target_names == TARGETS
    for name in TARGETS:
        e = avatar.expressions[name]
        assert e.preset
        assert [(b.index, b.weight) for b in e.morph_target_binds] == [(TARGETS.index(name), 1.0)]
        pos, delta = moved(avatar, name)
        assert len(pos) > 20, name
        assert np.abs(delta).max() > 0.003, name
    assert avatar.expressions["happy"].override_blink == "block"
    for name in EMOTIONS[1:]:       # they move the lids and mouth part of the way: blink and visemes fade
        e = avatar.expressions[name]
        assert (e.override_blink, e.override_mouth, e.override_look_at) == ("blend", "blend", "none"), name


@pytest.mark.parametrize("side,sign", [("blinkLeft", 1.0), ("blinkRight", -1.0)])
def test_blink_side_closes_that_eye_only(avatar, side, sign):
    pos, delta = moved(avatar, side)
    assert np.all(pos[:, 0] * sign > 0.01)  # the avatar's left eye is at +X
    assert np.all(np.abs(np.abs(pos[:, 0]) - EYE_X) < 0.025)
    assert np.all(np.abs(pos[:, 1] - EYE_Y) < 0.03)
    # the upper half of the eye moves down (the lid closes)
    upper = pos[:, 1] > EYE_Y + 0.005
    assert upper.any() and np.all(delta[upper, 1] < 0)


def test_blink_closes_both_eyes(avatar):
    pos, _ = moved(avatar, "blink")
    left, right = pos[:, 0] > 0, pos[:, 0] < 0
    assert left.sum() == right.sum() > 0
    both = len(moved(avatar, "blinkLeft")[0]) + len(moved(avatar, "blinkRight")[0])
    assert len(pos) == both


@pytest.mark.parametrize("name", ["aa", "ih", "ou", "ee", "oh"])
def test_mouth_shapes_move_the_mouth(avatar, name):
    pos, delta = moved(avatar, name)
    assert np.all(np.abs(pos[:, 1] - MOUTH_Y) < 0.01) and np.all(np.abs(pos[:, 0]) < 0.02)
    low = delta[:, 1].min()
    assert low < -0.003  # the lower lip drops: the mouth opens


def test_aa_opens_the_mouth_downward(avatar):
    pos, delta = moved(avatar, "aa")
    lower = pos[:, 1] < MOUTH_Y - 0.0005
    assert lower.any() and np.all(delta[lower, 1] < 0)
    assert delta[:, 1].min() < -0.012


def test_happy_smiles_and_closes_the_eyes_upward(avatar):
    pos, delta = moved(avatar, "happy")
    mouth = np.abs(pos[:, 1] - MOUTH_Y) < 0.01
    corners = mouth & (np.abs(pos[:, 0]) >= np.abs(pos[mouth, 0]).max() - 1e-6)
    assert corners.sum() >= 2 and np.all(delta[corners, 1] > 0.002)  # the mouth corners go up
    eyes = np.abs(pos[:, 1] - EYE_Y) < 0.03
    assert (eyes & (pos[:, 0] > 0)).any() and (eyes & (pos[:, 0] < 0)).any()


# The emotions' features, found by their rest positions (face coordinates, metres): the
# mouth within MOUTH_BOX of its centre, the brows above BROW_Y, the eyes' upper lids (patch
# and lash) above UPPER_LID_DY over the eye centre line and below BROW_Y; "inner"/"outer"
# ends at least END_DX nearer the nose / the ear than the eye or brow centre.
MOUTH_BOX = (0.02, 0.01)
BROW_Y = 1.535
UPPER_LID_DY = 0.008
END_DX = 0.008
#: a feature "moves" when its mean delta is at least this (metres); rest-pose shapes are 1-5 mm
FEATURE_MOVE_M = 0.001
#: ...and "stays" when it is within this
FEATURE_STILL_M = 0.0002
#: a slanted lid: its lower end moves down at least this many times as far as its other end
SLANT = 1.5


def features(a: Avatar, name: str) -> dict[str, np.ndarray]:
    """Mean (dx, dy) deltas, |x| made the distance from the face centre (dx > 0: away from
    it), of the features ``name`` moves: mouth corners, mouth centre top/bottom lip, brow
    inner/outer ends, upper lid inner/middle/outer."""
    pos, delta = moved(a, name)
    ax = np.abs(pos[:, 0])
    d = np.stack([np.sign(pos[:, 0]) * delta[:, 0], delta[:, 1]], -1)
    mouth = (ax < MOUTH_BOX[0]) & (np.abs(pos[:, 1] - MOUTH_Y) < MOUTH_BOX[1])
    centre = mouth & (ax < 0.0006)         # the mouth's middle column (both lips)
    brow = pos[:, 1] > BROW_Y
    lid = (pos[:, 1] > EYE_Y + UPPER_LID_DY) & ~brow
    sel = {
        "mouth_corner": mouth & (ax >= ax[mouth].max() - 1e-6) if mouth.any() else mouth,
        "upper_lip": centre & (pos[:, 1] >= pos[centre, 1].max() - 1e-6),
        "lower_lip": centre & (pos[:, 1] <= pos[centre, 1].min() + 1e-6),
        "brow_inner": brow & (ax < EYE_X - END_DX),
        "brow_outer": brow & (ax > EYE_X + END_DX + 0.004),
        "lid_inner": lid & (ax < EYE_X - END_DX),
        "lid_middle": lid & (np.abs(ax - EYE_X) < 0.003),
        "lid_outer": lid & (ax > EYE_X + END_DX),
    }
    out = {}
    for k, m in sel.items():
        assert m.sum() >= (1 if k.endswith("_lip") else 2), (name, k, int(m.sum()))
        out[k] = d[m].mean(axis=0)
    return out


@pytest.mark.parametrize("name", EMOTIONS)
def test_every_preset_emotion_moves_mouth_brows_and_lids_only(avatar, name):
    pos, delta = moved(avatar, name)
    mouth = (np.abs(pos[:, 0]) < MOUTH_BOX[0]) & (np.abs(pos[:, 1] - MOUTH_Y) < MOUTH_BOX[1])
    eyes = (np.abs(np.abs(pos[:, 0]) - EYE_X) < 0.03) & (pos[:, 1] > EYE_Y - 0.03) & (pos[:, 1] < EYE_Y + 0.06)
    assert np.all(mouth | eyes), f"{name} moves vertices outside the mouth, eyes and brows"
    for side in (1, -1):          # both sides, mirrored
        s = pos[:, 0] * side > 0
        assert (s & mouth).any() and (s & eyes).any(), (name, side)
    left, right = pos[:, 0] > 0.0005, pos[:, 0] < -0.0005
    assert np.allclose(np.sort(pos[left, 0]), np.sort(-pos[right, 0]), atol=F32)
    assert np.allclose(np.sort(delta[left, 1]), np.sort(delta[right, 1]), atol=F32)


def test_happy_and_relaxed_lift_the_mouth_corners_angry_and_sad_drop_them(avatar):
    corner = {n: features(avatar, n)["mouth_corner"][1] for n in EMOTIONS}
    assert corner["happy"] > 2 * FEATURE_MOVE_M and corner["relaxed"] > FEATURE_MOVE_M, corner
    assert corner["angry"] < -2 * FEATURE_MOVE_M and corner["sad"] < -2 * FEATURE_MOVE_M, corner


def test_angry_lowers_the_brows_inner_ends_and_draws_them_in(avatar):
    f = features(avatar, "angry")
    assert f["brow_inner"][1] < -2 * FEATURE_MOVE_M and f["brow_outer"][1] > -FEATURE_STILL_M, f
    assert f["brow_inner"][0] < -FEATURE_MOVE_M        # toward the nose
    assert f["lid_outer"][1] < -FEATURE_MOVE_M and f["lid_inner"][1] < SLANT * f["lid_outer"][1], f


def test_sad_raises_the_brows_inner_ends_and_droops_the_lids_outside(avatar):
    f = features(avatar, "sad")
    assert f["brow_inner"][1] > 2 * FEATURE_MOVE_M and f["brow_outer"][1] < -FEATURE_MOVE_M, f
    assert f["lid_outer"][1] < -2 * FEATURE_MOVE_M and f["lid_outer"][1] < SLANT * f["lid_inner"][1], f


def test_relaxed_lowers_the_upper_lids_evenly(avatar):
    f = features(avatar, "relaxed")
    assert f["lid_middle"][1] < -2 * FEATURE_MOVE_M, f
    assert abs(f["lid_inner"][1] - f["lid_outer"][1]) < FEATURE_MOVE_M, f
    assert f["brow_inner"][1] > -FEATURE_STILL_M and f["brow_outer"][1] > -FEATURE_STILL_M, f


def test_surprised_raises_brows_and_lids_and_opens_the_mouth(avatar):
    f = features(avatar, "surprised")
    assert min(f["brow_inner"][1], f["brow_outer"][1]) > 3 * FEATURE_MOVE_M, f
    assert f["lid_middle"][1] > FEATURE_MOVE_M, f
    assert f["upper_lip"][1] > 3 * FEATURE_MOVE_M and f["lower_lip"][1] < -8 * FEATURE_MOVE_M, f
    assert f["mouth_corner"][0] < -2 * FEATURE_MOVE_M        # narrower: a round mouth


# --------------------------------------------------------------------------- springs, colliders


def test_spring_counts(avatar, kind):
    exp = EXPECTED[kind]
    assert len(avatar.springs) == exp["springs"]
    assert avatar.spring_joint_count() == exp["joints"]
    prefixes = {}
    for s in avatar.springs:
        key = s.name.rstrip("0123456789").split("_")[0]
        prefixes[key] = prefixes.get(key, 0) + 1
    assert prefixes == exp["chains"]


def test_colliders(avatar):
    shapes = [c.shape for c in avatar.colliders]
    assert shapes == ["sphere", "capsule", "capsule", "capsule", "capsule"]
    assert [(g.name, g.colliders) for g in avatar.collider_groups] == [
        ("head", (0,)), ("neck", (1,)), ("shoulders", (2, 3)), ("torso", (4,))]
    names = avatar.skeleton.names
    assert [names[c.node] for c in avatar.colliders] == ["J_Head", "J_Neck", "J_Shoulder_L", "J_Shoulder_R",
                                                         "J_UpperChest"]
    groups = {g.name: i for i, g in enumerate(avatar.collider_groups)}
    for s in avatar.springs:
        assert groups["head"] in s.collider_groups
        if s.name.startswith(("Ponytail", "Inner", "Outer")):
            assert set(s.collider_groups) == set(groups.values())


def test_spring_chains_are_head_hung_tips(avatar):
    sk = avatar.skeleton
    head = avatar.humanoid["head"]
    for s in avatar.springs:
        nodes = [j.node for j in s.joints]
        assert sk.parents[nodes[0]] == head
        assert all(sk.parents[b] == a for a, b in zip(nodes, nodes[1:]))
        assert sk.children(nodes[-1]) == []  # the last joint is the tip
        assert s.tail_offset is None and s.segment_count == len(nodes) - 1
        for j in s.joints:
            assert 0.5 <= j.stiffness <= 2.0 and 0.3 <= j.drag_force <= 0.6
            assert 0.0 <= j.gravity_power <= 0.35 and 0.005 <= j.hit_radius <= 0.02
            assert j.gravity_dir.tolist() == [0.0, -1.0, 0.0]


def collider_world(a: Avatar, c) -> tuple[np.ndarray, np.ndarray]:
    w = a.skeleton.rest_world[c.node]
    return w[:3, :3] @ c.offset + w[:3, 3], w[:3, :3] @ c.tail + w[:3, 3]


def test_hair_at_rest_is_clear_of_its_colliders(avatar):
    """Every segment's closest distance to every collider of its groups >= radius + hitRadius."""
    w = avatar.skeleton.rest_world
    worst = np.inf
    for s in avatar.springs:
        cols = {ci for g in s.collider_groups for ci in avatar.collider_groups[g].colliders}
        for a_joint, b_joint in zip(s.joints, s.joints[1:]):
            p0, p1 = w[a_joint.node, :3, 3], w[b_joint.node, :3, 3]
            for ci in cols:
                c = avatar.colliders[ci]
                q0, q1 = collider_world(avatar, c)
                d, _, _ = segment_distance(p0, p1, q0, q1)
                gap = d - c.radius - a_joint.hit_radius
                assert gap >= 0.0, f"{s.name}: segment at {p0} is {gap:.4f} m inside collider {ci}"
                worst = min(worst, gap)
    assert worst < 0.02  # the colliders are snug, not far away


def test_segment_distance_matches_brute_force():
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 1.0, 801)
    for _ in range(30):
        p0, p1, q0, q1 = rng.normal(size=(4, 3))
        if rng.random() < 0.3:
            q1 = q0  # sphere
        d, cp, cq = segment_distance(p0, p1, q0, q1)
        a = p0 + t[:, None] * (p1 - p0)
        b = q0 + t[:, None] * (q1 - q0)
        brute = np.min(np.linalg.norm(a[:, None] - b[None], axis=2))
        assert d <= brute + 1e-12 and d > brute - 0.01
        assert np.linalg.norm(cp - cq) == pytest.approx(d, abs=1e-12)


def test_strands_are_skinned_to_their_chain(avatar):
    """Hair strand vertices blend at most two neighbouring joints of one chain (or the head and
    the first joint at the root), and every joint but the tip drives some vertices."""
    a = avatar
    hair = next(i for i in a.mesh_instances if a.meshes[i.mesh].name == "Hair")
    skin = a.skins[hair.skin]
    head = a.humanoid["head"]
    chain_of = {j.node: (si, k) for si, s in enumerate(a.springs) for k, j in enumerate(s.joints)}
    driven = set()
    for p in a.meshes[hair.mesh].primitives:
        nodes = skin.joints[p.joints]
        for v in range(p.vertex_count):
            used = sorted({int(n) for n, wt in zip(nodes[v], p.weights[v]) if wt > 0})
            springs = [chain_of[n] for n in used if n in chain_of]
            assert len(used) <= 2
            assert all(n == head or n in chain_of for n in used)
            if len(springs) == 2:
                assert springs[0][0] == springs[1][0] and abs(springs[0][1] - springs[1][1]) == 1
            driven.update(n for n in used if n in chain_of)
    for s in a.springs:
        assert {j.node for j in s.joints[:-1]} <= driven
        assert s.joints[-1].node not in driven


def test_hair_vertices(avatar, kind):
    n = hair_vertex_count(avatar)
    if kind == "layered":
        assert n >= 12_000
    else:
        assert n >= 1_000


# --------------------------------------------------------------------------- looks


def test_materials_mtoon_and_texture(avatar):
    mats = {m.name: m for m in avatar.materials}
    assert all(m.mtoon is not None for m in avatar.materials)
    hair = mats["hair"]
    rgb = hair.base_color_factor[:3]
    # a saturated colour (teal): HSV saturation of the linear colour well above greys
    assert (rgb.max() - rgb.min()) / rgb.max() > 0.8 and rgb[1] > rgb[0] * 5
    assert hair.mtoon.outline_width_mode == "worldCoordinates" and 0 < hair.mtoon.outline_width <= 0.003
    eye = mats["eye"]
    assert eye.base_color_texture is not None
    img = avatar.images[avatar.textures[eye.base_color_texture.texture].image]
    assert img.rgba.shape == (128, 128, 4) and img.mime_type == "image/png"
    face = avatar.meshes[face_instance(avatar).mesh]
    eye_prims = [p for p in face.primitives if p.material == avatar.materials.index(eye)]
    assert len(eye_prims) == 1 and eye_prims[0].uv0 is not None
    uv = eye_prims[0].uv0
    assert uv.min() >= -1e-6 and uv.max() <= 1 + 1e-6


def test_deterministic_bytes(kind):
    assert BUILDERS[kind]() == generated(kind)[0]


def test_collar_stays_with_the_chest_when_the_neck_turns(avatar):
    """Regression (jagged holes at the V-neckline on strong head turns): no shirt vertex
    follows the neck or head, and the neck skin below the collar follows the upper chest only."""
    from avatars.generate.body import NECK_BASE_Y

    hb = avatar.humanoid
    turning = {hb["neck"], hb["head"]}
    names = [m.name for m in avatar.materials]
    shirt = names.index("shirt")
    skin = names.index("skin")
    checked = {"shirt": 0, "neck base": 0}
    for mi in avatar.mesh_instances:
        joints_of = avatar.skins[mi.skin].joints
        for p in avatar.meshes[mi.mesh].primitives:
            nodes = joints_of[p.joints]
            moving = (np.isin(nodes, list(turning)) & (p.weights > 0)).any(axis=1)
            if p.material == shirt:
                assert not moving.any()
                checked["shirt"] += p.vertex_count
            elif p.material == skin:
                below = (p.positions[:, 1] < NECK_BASE_Y - 1e-6) & (p.positions[:, 1] > 1.30) & (
                    np.abs(p.positions[:, 0]) < 0.04)
                assert not (below & moving).any()
                checked["neck base"] += int(below.sum())
    assert checked["shirt"] > 1000 and checked["neck base"] >= 20
