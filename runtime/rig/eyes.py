"""The rig's eyes and network body as packed data for the compiled drive
(:mod:`runtime.rig.kernels`: :func:`~runtime.rig.kernels.eye_drive`,
:func:`~runtime.rig.kernels.body_drive`).

- :class:`EyeDrive`: the avatar's lookAt (:class:`avatars.lookat.LookAt`) -> ``lp`` (range
  maps, the eyes' parent rest rotations and rest locals) and ``es`` (the two eye slots);
  type bone only (an expression-type lookAt is applied as expression weights by the rig,
  an avatar without eye bones gets none). Eyes without a lookAt in the file use the spec's
  defaults (90° -> 10°). The gaze multiplier ``lp[LP_SCALE]`` is the drawn frame's
  overrideLookAt factor (:func:`look_at_multiplier`).
- :class:`BodyDrive`: for each of the 55 humanoid bones of :mod:`tracking.body` the avatar
  has, its slot and the rest world rotations of it and its parent.
"""

from __future__ import annotations

import numpy as np

from avatars import Avatar
from avatars.lookat import LookAt
from avatars.math3d import mat_decompose, quat_conj
from tracking.body import BODY_BONES, NUM_BONES

from . import kernels as RK

_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def _rest_rotations(avatar: Avatar) -> np.ndarray:
    return mat_decompose(avatar.skeleton.rest_world)[1]


def _parent_rot(avatar: Avatar, rest: np.ndarray, node: int) -> np.ndarray:
    p = int(avatar.skeleton.parents[node])
    return rest[p] if p >= 0 else _IDENTITY


def look_at_of(avatar: Avatar) -> LookAt | None:
    """The lookAt the rig applies: the file's, or the spec's defaults (type bone) for an
    avatar with eye bones but no lookAt; None without either."""
    la = avatar.look_at
    if la is None and "leftEye" in avatar.humanoid and "rightEye" in avatar.humanoid:
        la = LookAt()
    return la


class EyeDrive:
    """Packed lookAt of one avatar (module doc). ``nodes``: the eye nodes it drives (bone
    type), ``lp`` (LP,) float64, :meth:`slots` -> ``es`` (2,) int64."""

    def __init__(self, avatar: Avatar):
        self.look_at = look_at_of(avatar)
        la = self.look_at
        self.lp = np.zeros(RK.LP)
        self.lp[RK.LP_SCALE] = 1.0
        self.eyes = (avatar.humanoid.get("leftEye", -1), avatar.humanoid.get("rightEye", -1))
        bone = la is not None and la.type == "bone"
        self.nodes = tuple(n for n in self.eyes if n >= 0) if bone else ()
        if la is None:
            return
        for m, rm in enumerate((la.horizontal_inner, la.horizontal_outer, la.vertical_down, la.vertical_up)):
            o = RK.LP_MAPS + m * RK.MAP_W
            self.lp[o] = rm.input_max_deg
            self.lp[o + 1] = rm.output_scale
            keys = rm.curve or ()
            nk = min(len(keys) // 4, RK.MAX_KEYS)
            self.lp[o + 2] = nk
            self.lp[o + 3:o + 3 + 4 * nk] = keys[:4 * nk]
        rest = _rest_rotations(avatar)
        for e, node in enumerate(self.eyes):
            if node < 0:
                continue
            o = RK.LP_EYES + e * RK.EYE_W
            p = _parent_rot(avatar, rest, node)
            self.lp[o:o + 4] = p
            self.lp[o + 4:o + 8] = quat_conj(p)
            self.lp[o + 8:o + 12] = avatar.skeleton.rest_rotation[node]

    def slots(self, slot_of: np.ndarray) -> np.ndarray:
        """(2,) int64 slots of the left/right eye in the driven set (−1: not driven)."""
        out = np.full(2, -1, np.int64)
        for e, node in enumerate(self.eyes):
            if node in self.nodes and slot_of[node] >= 0:
                out[e] = slot_of[node]
        return out


def look_at_multiplier(avatar: Avatar, values: dict[str, float]) -> float:
    """1 − the overrideLookAt rate of expression ``values`` (UniVRM 1.0's
    DefaultExpressionValidator: each non-look expression with weight w > 0 adds 1 for
    "block", w for "blend"; the sum is clamped to [0, 1])."""
    rate = 0.0
    for name, w in values.items():
        e = avatar.expressions.get(name)
        if e is None or w <= 0.0 or name in ("lookUp", "lookDown", "lookLeft", "lookRight"):
            continue
        if e.override_look_at == "block":
            rate += 1.0
        elif e.override_look_at == "blend":
            rate += min(float(w), 1.0)
    return 1.0 - min(rate, 1.0)


class BodyDrive:
    """Packed humanoid map for a network body (module doc): ``nodes`` (the humanoid bones the
    avatar has), ``bp`` (55, 8), :meth:`slots` -> ``bs`` (55,) int64."""

    def __init__(self, avatar: Avatar):
        rest = _rest_rotations(avatar)
        self.bp = np.zeros((NUM_BONES, RK.BP_W))
        self.bp[:, RK.BP_PINV + 3] = 1.0
        self.bp[:, RK.BP_R0 + 3] = 1.0
        self.nodes: list[int] = []
        self.node_of = np.full(NUM_BONES, -1, np.int64)
        for b, name in enumerate(BODY_BONES):
            node = avatar.humanoid.get(name, -1)
            if node < 0:
                continue
            self.node_of[b] = node
            self.nodes.append(node)
            self.bp[b, RK.BP_PINV:RK.BP_PINV + 4] = quat_conj(_parent_rot(avatar, rest, node))
            self.bp[b, RK.BP_R0:RK.BP_R0 + 4] = rest[node]

    def slots(self, slot_of: np.ndarray, on: bool) -> np.ndarray:
        """(55,) int64 driven slots of the bones (−1: absent, or ``on`` False)."""
        out = np.full(NUM_BONES, -1, np.int64)
        if on:
            for b, node in enumerate(self.node_of):
                if node >= 0 and slot_of[node] >= 0:
                    out[b] = slot_of[node]
        return out
