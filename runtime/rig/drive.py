"""Avatar drive: a tracked head pose -> local rotations of the humanoid neck and head.

The tracked head rotation ``q`` (xyzw, relative to the rest pose, expressed in the avatar
frame: +Y up, avatar facing +Z) is the desired change of the head's WORLD rotation. It is
split between neck and head: the neck turns by ``slerp(I, q, neck_share)`` and the head
completes the rest, so the head's world rotation is exactly ``q · R0_head`` (R0 = rest world
rotation). Local rotations follow from the rest world rotations of the parents:

    L_neck = R0_parent⁻¹ · D_neck · R0_neck
    L_head = (D_neck · R0_neck)⁻¹ · q · R0_head

T-posed arms are lowered once (:meth:`HeadDrive.relaxed_arms`). A translation (metres) leans
the upper body: the hips move by ``lean_share · t`` clamped to ``max_lean`` per axis
(chair-sitting users mostly lean, not walk), turned into the hips' parent frame:

    t_hips = t0_hips + R0_hips_parent⁻¹ · clamp(lean_share · t, −max_lean, max_lean)

The per-substep drive is compiled (:func:`runtime.rig.kernels.head_drive`, the formulas
above with numpy's arithmetic order) and writes a driven TRS buffer
(:class:`runtime.rig.posing.DrivenPose`) through :meth:`HeadDrive.write`, allocating nothing;
:meth:`HeadDrive.apply` is the same drive into whole-skeleton rotation/translation arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from avatars import Avatar
from avatars.math3d import mat_decompose, quat_conj, quat_from_vecs, quat_mul

from . import kernels as RK
from .errors import RigError

IDENTITY_Q = np.array([0.0, 0.0, 0.0, 1.0])


@dataclass(frozen=True)
class DriveOptions:
    """How a head pose drives the body. ``neck_share`` in [0, 1]; ``lean_share`` unitless;
    ``max_lean`` metres per axis."""

    neck_share: float = 0.35
    lean_share: float = 0.5
    max_lean: float = 0.08
    #: T-posed avatars (VRM's rest pose) get their upper arms lowered to this angle below
    #: horizontal, as VTuber apps show them; 0 keeps the rest pose. Arms already lower than
    #: 45° (A-posed avatars) are left alone.
    arms_down_deg: float = 65.0


class HeadDrive:
    """Writes neck/head local rotations and hips translation into pose arrays.

    Raises:
        RigError (a ValueError): the avatar has no humanoid head bone (VRM humanoid required).
    """

    def __init__(self, avatar: Avatar, *, options: DriveOptions = DriveOptions()):
        sk = avatar.skeleton
        self.options = options
        self.head = avatar.humanoid.get("head", -1)
        if self.head < 0:
            raise RigError(f"{avatar.path}: no humanoid head bone; swaycam drives the head of a VRM humanoid")
        self.neck = avatar.humanoid.get("neck", -1)
        if self.neck >= 0 and int(sk.parents[self.head]) != self.neck:
            self.neck = -1  # a gap between neck and head: drive the head alone
        self.hips = avatar.humanoid.get("hips", -1)
        rest_rot = mat_decompose(sk.rest_world)[1]
        self._r0_head = rest_rot[self.head]
        self._r0_neck = rest_rot[self.neck] if self.neck >= 0 else None
        p = int(sk.parents[self.neck if self.neck >= 0 else self.head])
        self._r0_parent = rest_rot[p] if p >= 0 else IDENTITY_Q
        self._rest_hips_t = sk.rest_translation[self.hips].copy() if self.hips >= 0 else None
        self._hips_parent_rot = rest_rot[int(sk.parents[self.hips])] if self.hips >= 0 and sk.parents[self.hips] >= 0 else IDENTITY_Q
        #: the nodes whose local transform :meth:`apply` writes
        self.nodes = tuple(n for n in (self.hips, self.neck, self.head) if n >= 0)
        hp = np.zeros(RK.HP)
        hp[RK.HP_NECK_SHARE] = options.neck_share
        hp[RK.HP_LEAN_SHARE] = options.lean_share
        hp[RK.HP_MAX_LEAN] = options.max_lean
        hp[RK.HP_R0_HEAD:RK.HP_R0_HEAD + 4] = self._r0_head
        hp[RK.HP_R0_NECK:RK.HP_R0_NECK + 4] = self._r0_neck if self._r0_neck is not None else IDENTITY_Q
        hp[RK.HP_R0_PARENT_INV:RK.HP_R0_PARENT_INV + 4] = quat_conj(self._r0_parent)
        if self._rest_hips_t is not None:
            hp[RK.HP_REST_HIPS_T:RK.HP_REST_HIPS_T + 3] = self._rest_hips_t
        hp[RK.HP_HIPS_PARENT_INV:RK.HP_HIPS_PARENT_INV + 4] = quat_conj(self._hips_parent_rot)
        self._hp = hp
        self._zero3 = np.zeros(3)

    def relaxed_arms(self, avatar: Avatar) -> dict[int, np.ndarray]:
        """Local rotations {upper-arm node: (4,) xyzw} that lower T-posed arms (see DriveOptions)."""
        out: dict[int, np.ndarray] = {}
        angle = np.radians(self.options.arms_down_deg)
        if angle <= 0:
            return out
        sk = avatar.skeleton
        rest = sk.rest_world
        rest_rot = mat_decompose(rest)[1]
        for side, sx in (("left", 1.0), ("right", -1.0)):
            ua, la = avatar.humanoid.get(f"{side}UpperArm", -1), avatar.humanoid.get(f"{side}LowerArm", -1)
            if ua < 0 or la < 0:
                continue
            d = rest[la, :3, 3] - rest[ua, :3, 3]
            n = np.linalg.norm(d)
            if n < 1e-9 or -d[1] / n > np.sin(np.radians(45.0)):
                continue  # degenerate, or already hanging down (A-pose)
            target = np.array([sx * np.cos(angle), -np.sin(angle), 0.0])
            q = quat_from_vecs(d / n, target)
            p = int(sk.parents[ua])
            r0p = rest_rot[p] if p >= 0 else IDENTITY_Q
            out[ua] = quat_mul(quat_conj(r0p), quat_mul(q, rest_rot[ua]))
        return out

    # ------------------------------------------------------------------ compiled drive
    @property
    def params(self) -> np.ndarray:
        """(HP,) float64 packed parameters of the compiled drive (:data:`runtime.rig.kernels.HP_NECK_SHARE` ...)."""
        return self._hp

    def slots(self, slot_of: np.ndarray) -> np.ndarray:
        """(3,) int64 slots (hips, neck, head; −1 when absent) of this drive's nodes in a
        driven set whose ``slot_of`` (N,) maps nodes to slots (:class:`runtime.rig.posing.DrivenPose`).

        Raises:
            RigError: one of :attr:`nodes` is not in the driven set.
        """
        out = np.full(3, -1, np.int64)
        for k, node in ((RK.HS_HIPS, self.hips), (RK.HS_NECK, self.neck), (RK.HS_HEAD, self.head)):
            if node >= 0:
                if slot_of[node] < 0:
                    raise RigError(f"node {node} driven by the head drive is not in the driven set")
                out[k] = slot_of[node]
        return out

    def write(self, rotation: np.ndarray, translation: np.ndarray | None, trs: np.ndarray,
              slots: np.ndarray) -> None:
        """Write the drive into the driven TRS buffer ``trs`` (D, 10) at ``slots`` (from
        :meth:`slots`): one compiled call, no allocation. ``rotation`` (4,) xyzw and
        ``translation`` (3,) metres or None as in :meth:`apply` (C-contiguous float64)."""
        RK.head_drive_kernel(rotation, self._zero3 if translation is None else translation,
                             translation is not None, self._hp, slots, trs)

    def apply(self, rotation: np.ndarray, translation: np.ndarray | None, local_rot: np.ndarray,
              local_t: np.ndarray) -> None:
        """Write the drive into ``local_rot`` (N, 4) and ``local_t`` (N, 3) in place (build time
        and checks; the substep path uses :meth:`write` through the rig's compiled call).

        Args:
            rotation: (4,) xyzw head rotation relative to rest, avatar frame.
            translation: (3,) metres relative to the neutral head position, avatar frame, or None.
        """
        trs = np.zeros((3, RK.TRS_W))
        slots = np.array([0 if self.hips >= 0 else -1, 1 if self.neck >= 0 else -1, 2], np.int64)
        self.write(np.ascontiguousarray(rotation, np.float64),
                   None if translation is None else np.ascontiguousarray(translation, np.float64), trs, slots)
        if self.neck >= 0:
            local_rot[self.neck] = trs[1, RK.TRS_Q:RK.TRS_Q + 4]
        local_rot[self.head] = trs[2, RK.TRS_Q:RK.TRS_Q + 4]
        if self.hips >= 0:
            local_t[self.hips] = trs[0, RK.TRS_T:RK.TRS_T + 3]
