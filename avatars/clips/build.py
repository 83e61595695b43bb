"""A source skeleton's animation -> :class:`avatars.clips.model.Clip` (world deltas facing +Z).

Every loader ends here: it hands over the source skeleton (names, parents, rest TRS), its
humanoid bone map, and local TRS at every key (K, N); this module runs forward kinematics
of the rest pose and of every key (:func:`avatars.clips.channels.world_pose`), turns the
result to the avatar convention and computes the world deltas D_b = W_b(t) · C_b⁻¹.

Orientation: the clip's up is hips -> head and its left is right -> left upper leg (or
upper arm) in the rest pose; a clip whose up is not +Y or whose forward (left × up) is
not +Z is turned by one rotation O applied to every world rotation and position
(W' = O W, p' = O p, so D' = O D O⁻¹). Rotations within 10° of a quarter turn are snapped to
it, and a clip already within 10° of +Y up / +Z forward is left exactly as it is (VRMA
clips face +Z by specification; so do glTF exports from Blender and Mixamo).
"""

from __future__ import annotations

import math

import numpy as np

from ..math3d import quat_conj, quat_from_axis_angle, quat_mul, vec_transform_quat
from ..skeleton import Skeleton
from .channels import world_pose
from .model import Clip, ClipRest

#: Orientation fixes within this angle of a quarter turn snap to it (and of none: none).
SNAP_DEG = 10.0


def _snap(angle: float) -> float:
    q = round(angle / (math.pi / 2)) * (math.pi / 2)
    return q if abs(angle - q) <= math.radians(SNAP_DEG) else angle


def orientation_fix(rest_pos: np.ndarray, bones: dict[str, int]) -> tuple[np.ndarray | None, str]:
    """(O (4,) xyzw or None when the clip already faces +Z with +Y up, a note) from rest
    world positions (N, 3) of the source skeleton (module doc)."""
    def p(b):
        return rest_pos[bones[b]]

    up = p("head") - p("hips")
    pairs = [("leftUpperLeg", "rightUpperLeg"), ("leftUpperArm", "rightUpperArm"), ("leftShoulder", "rightShoulder")]
    left = next((p(a) - p(b) for a, b in pairs if a in bones and b in bones), None)
    if left is None or np.linalg.norm(up) < 1e-9 or np.linalg.norm(left) < 1e-9:
        return None, ""
    up = up / np.linalg.norm(up)
    o = np.array([0.0, 0.0, 0.0, 1.0])
    notes = []
    if up[1] < math.cos(math.radians(SNAP_DEG)):
        axis = np.cross(up, [0.0, 1.0, 0.0])
        if np.linalg.norm(axis) < 1e-9:
            axis = np.array([1.0, 0.0, 0.0])
        ang = _snap(math.acos(max(-1.0, min(1.0, up[1]))))
        o = quat_from_axis_angle(axis / np.linalg.norm(axis), ang)
        notes.append(f"up axis turned to +Y by {math.degrees(ang):.0f}°")
    left = vec_transform_quat(left, o)
    fwd = np.cross(left, [0.0, 1.0, 0.0])
    if np.hypot(fwd[0], fwd[2]) < 1e-9:
        return (o if notes else None), "; ".join(notes)
    yaw = _snap(math.atan2(fwd[0], fwd[2]))
    if abs(yaw) > 1e-12:
        o = quat_mul(quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), -yaw), o)
        notes.append(f"turned by {math.degrees(-yaw):.0f}° about +Y to face +Z")
    return (o if notes else None), "; ".join(notes)


def build_clip(*, name: str, source: str, skeleton: Skeleton, bones: dict[str, int], times: np.ndarray,
               translation: np.ndarray, rotation: np.ndarray, scale: np.ndarray,
               rest: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, unit_scale: float = 1.0,
               animated_rotation: set[int] = frozenset(), loop: bool | None = None, frame_rate: float = 0.0,
               notes: list[str] | None = None, expressions: dict[str, np.ndarray] | None = None,
               look_at: np.ndarray | None = None, hips_rest_position: np.ndarray | None = None) -> Clip:
    """The clip of K keys of a source skeleton (module doc).

    Args:
        skeleton: the source skeleton (rest TRS from the file, metres after ``unit_scale``).
        bones: {VRM 1.0 bone: node} (must contain hips and head).
        times: (K,) seconds; translation (K, N, 3), rotation (K, N, 4), scale (K, N, 3) local.
        rest: (translation (N, 3), rotation (N, 4), scale (N, 3)) of the rest pose when it is
            not the skeleton's own (BVH: zero rotations).
        unit_scale: metres per source unit (BVH; 1 for glTF).
        animated_rotation: nodes with a rotation track: those that are not humanoid bones nor
            ancestors of one become node tracks (hair and other authored joints).
        loop: None: from the name (contains "loop").
        hips_rest_position: the hips' rest world position in source units when the file's
            rest pose is not standing where the motion is (BVH), else from the rest pose.
        expressions, look_at: passed through (K,) / (K, 4).
    """
    notes = list(notes or [])
    rt, rr, rs = rest if rest is not None else (skeleton.rest_translation, skeleton.rest_rotation,
                                                skeleton.rest_scale)
    rest_rot, rest_pos = world_pose(skeleton, rt[None], rr[None], rs[None])
    rest_rot, rest_pos = rest_rot[0], rest_pos[0] * unit_scale
    o, note = orientation_fix(rest_pos, bones)
    if note:
        notes.append(note)
    wr, wp = world_pose(skeleton, translation, rotation, scale)
    wp = wp * unit_scale
    if o is not None:
        rest_rot = quat_mul(o, rest_rot)
        rest_pos = vec_transform_quat(rest_pos, o)
        wr = quat_mul(o, wr)
        wp = vec_transform_quat(wp, o)
    order = [b for b in bones]
    rot_tracks = {b: quat_mul(wr[:, bones[b]], quat_conj(rest_rot[bones[b]])) for b in order}
    hips = bones["hips"]
    below_hips = set(skeleton.descendants(hips))
    ground = float(min(rest_pos[i, 1] for i in below_hips))
    if hips_rest_position is not None:       # the rest pose moved to stand where the motion is
        hp = np.asarray(hips_rest_position, np.float64) * unit_scale
        shift = (vec_transform_quat(hp, o) if o is not None else hp) - rest_pos[hips]
        rest_pos = rest_pos + shift
        ground += float(shift[1])
    rest_positions = {b: rest_pos[bones[b]].copy() for b in order}
    # node tracks: animated nodes that are neither humanoid bones nor above one
    above = set()
    for n in bones.values():
        p = int(skeleton.parents[n])
        while p >= 0:
            above.add(p)
            p = int(skeleton.parents[p])
    node_tracks, node_rest = {}, {}
    humanoid_nodes = set(bones.values())
    for n in sorted(animated_rotation):
        nm = skeleton.names[n]
        if n in humanoid_nodes or n in above or not nm or nm in node_tracks:
            continue
        if np.allclose(rotation[:, n], rr[n], atol=1e-9) or np.allclose(rotation[:, n], -rr[n], atol=1e-9):
            continue
        node_tracks[nm] = np.ascontiguousarray(rotation[:, n])
        node_rest[nm] = np.asarray(rr[n], np.float64).copy()
    if loop is None:
        loop = "loop" in name.lower()
    return Clip(name=name, source=source, times=np.asarray(times, np.float64),
                rotations={b: np.ascontiguousarray(v) for b, v in rot_tracks.items()},
                hips_position=np.ascontiguousarray(wp[:, hips]),
                rest=ClipRest(rotation={b: rest_rot[bones[b]].copy() for b in order}, position=rest_positions,
                              ground_y=ground),
                expressions=dict(expressions or {}), look_at=look_at, node_tracks=node_tracks,
                node_rest=node_rest, loop=bool(loop), frame_rate=float(frame_rate), notes=tuple(notes),
                bone_nodes={b: skeleton.names[bones[b]] for b in order})


def key_rate(times: np.ndarray) -> float:
    """Keys per second: 1 / the median key interval (0 for a single key)."""
    if len(times) < 2:
        return 0.0
    d = float(np.median(np.diff(times)))
    return round(1.0 / d, 3) if d > 0 else 0.0
