"""An arm pose (:mod:`tracking.hands`, avatar frame) -> normalized local rotations of the
avatar's arm and finger bones (:mod:`tracking.body`'s convention: n_b = D_parent⁻¹ · D_b,
D = W · W0⁻¹ the world change from the rest pose; bones above the upper arm at rest).

Per avatar side (``left``, ``right``):

- **Arm, two-bone IK**: the wrist target is the tracked shoulder→wrist direction at the
  tracked reach (|wrist − shoulder| over the tracked upper + lower arm lengths, at most
  0.999) times the avatar's own arm length, from the avatar's shoulder joint (its upper
  arm's rest position); the elbow bends in the plane of the tracked elbow (the hint) by the
  law of cosines with the avatar's segment lengths. D_upper takes the rest upper-arm
  direction to shoulder→elbow (shortest arc), D_lower = arc(D_upper·r_lower, elbow→wrist) ·
  D_upper.
- **Hand**: the palm frame (wrist→middle knuckle, index→little knuckle) of the landmarks
  against the avatar's (hand→middle proximal, index→little proximal) in rest:
  D_hand = B_tracked · (D_lower · B_rest)ᵀ ⋅ D_lower (an orthonormal-frame alignment); without
  hand landmarks the hand follows the forearm (D_hand = D_lower).
- **Fingers**: each segment's direction from its landmark pair, chained like the forearm
  (D_k = arc(D_{k−1}·r_k, t_k) · D_{k−1}): curls and spreads follow the landmarks.

The directions are scale-free, so the user's and the avatar's proportions need not match.
"""

from __future__ import annotations

import numpy as np

from avatars import Avatar
from avatars.math3d import quat_conj, quat_from_mat, quat_from_vecs, quat_mul, vec_transform_quat
from tracking.body import BONE_INDEX
from tracking.hands import (FINGER_LANDMARKS, S_ARM, S_ELBOW, S_HAND, S_LANDMARKS, S_SHOULDER, S_WRIST, SIDE_W,
                            SIDES)

_SEGS = {"Thumb": ("Metacarpal", "Proximal", "Distal")}
_ID = np.array([0.0, 0.0, 0.0, 1.0])


def _unit(v: np.ndarray) -> np.ndarray | None:
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-9 else None


def _frame(forward: np.ndarray, across: np.ndarray) -> np.ndarray | None:
    """(3, 3) orthonormal columns (forward, across ⊥ forward, forward × across), or None."""
    f = _unit(forward)
    if f is None:
        return None
    a = _unit(across - (across @ f) * f)
    if a is None:
        return None
    return np.stack([f, a, np.cross(f, a)], axis=1)


def arc_then(d_parent: np.ndarray, rest_dir: np.ndarray, target: np.ndarray) -> np.ndarray:
    """arc(D_parent · r, t) · D_parent: the child's world change turning its parent-carried
    rest direction onto the target direction (shortest arc)."""
    carried = vec_transform_quat(rest_dir, d_parent)
    return quat_mul(quat_from_vecs(carried, target), d_parent)


class ArmSolver:
    """The rest geometry of an avatar's arms and hands; :meth:`solve` (module doc).

    Attributes:
        bones: the body bone indices (:data:`tracking.body.BODY_BONES`) it can drive, per side.
    """

    def __init__(self, avatar: Avatar) -> None:
        sk = avatar.skeleton
        pos = np.asarray(sk.rest_world)[:, :3, 3]
        hum = avatar.humanoid
        self.rest: dict[str, np.ndarray] = {b: pos[n] for b, n in hum.items()}
        self.sides = {}
        for s in SIDES:
            need = [f"{s}UpperArm", f"{s}LowerArm", f"{s}Hand"]
            if not all(b in hum for b in need):
                continue
            fingers = {}
            for f in FINGER_LANDMARKS:
                segs = _SEGS.get(f, ("Proximal", "Intermediate", "Distal"))
                names = [f"{s}{f}{g}" for g in segs if f"{s}{f}{g}" in hum]
                if names:
                    fingers[f] = names
            self.sides[s] = fingers
        self.bones = {s: [BONE_INDEX[b] for b in self.side_bones(s)] for s in self.sides}

    def side_bones(self, s: str) -> list[str]:
        out = [f"{s}UpperArm", f"{s}LowerArm", f"{s}Hand"]
        for names in self.sides.get(s, {}).values():
            out += names
        return out

    def _dir(self, a: str, b: str) -> np.ndarray | None:
        if a not in self.rest or b not in self.rest:
            return None
        return _unit(self.rest[b] - self.rest[a])

    def solve(self, arms: np.ndarray, side: str) -> dict[str, np.ndarray] | None:
        """{bone name: normalized local rotation (4,)} of ``side`` from the arm pose ``arms``
        (ARM_W,), or None when that arm is not tracked (``arm_on`` 0) or the avatar lacks it."""
        if side not in self.sides:
            return None
        o = SIDES.index(side) * SIDE_W
        if not arms[o + S_ARM]:
            return None
        sh, el, wr = (np.asarray(arms[o + k:o + k + 3]) for k in (S_SHOULDER, S_ELBOW, S_WRIST))
        u, lo, hd = f"{side}UpperArm", f"{side}LowerArm", f"{side}Hand"
        l1 = float(np.linalg.norm(self.rest[lo] - self.rest[u]))
        l2 = float(np.linalg.norm(self.rest[hd] - self.rest[lo]))
        t1, t2 = float(np.linalg.norm(el - sh)), float(np.linalg.norm(wr - el))
        reach_dir = _unit(wr - sh)
        if reach_dir is None or t1 + t2 <= 1e-9 or l1 <= 1e-9 or l2 <= 1e-9:
            return None
        reach = min(float(np.linalg.norm(wr - sh)) / (t1 + t2), 0.999) * (l1 + l2)
        reach = max(reach, abs(l1 - l2) + 1e-6)
        # the elbow in the plane of the hint, by the law of cosines
        cos_a = (l1 * l1 + reach * reach - l2 * l2) / (2.0 * l1 * reach)
        a = float(np.arccos(np.clip(cos_a, -1.0, 1.0)))
        hint = el - sh
        v = _unit(hint - (hint @ reach_dir) * reach_dir)
        if v is None:                       # a straight arm: any bend plane
            v = _unit(np.cross(reach_dir, [0.0, 0.0, 1.0]))
            if v is None:
                v = _unit(np.cross(reach_dir, [0.0, 1.0, 0.0]))
        elbow = l1 * (np.cos(a) * reach_dir + np.sin(a) * v)
        wrist = reach * reach_dir
        d_u = quat_from_vecs(self._dir(u, lo), _unit(elbow))
        d_l = arc_then(d_u, self._dir(lo, hd), _unit(wrist - elbow))
        out = {u: d_u, lo: quat_mul(quat_conj(d_u), d_l)}
        d_h = d_l
        if arms[o + S_HAND]:
            lm = np.asarray(arms[o + S_LANDMARKS:o + SIDE_W]).reshape(21, 3)
            fingers = self.sides[side]
            mid = fingers.get("Middle", [None])[0]
            idx, lit = fingers.get("Index", [None])[0], fingers.get("Little", [None])[0]
            if mid and idx and lit:
                b_rest = _frame(self.rest[mid] - self.rest[hd], self.rest[lit] - self.rest[idx])
                b_trk = _frame(lm[9] - lm[0], lm[17] - lm[5])
                if b_rest is not None and b_trk is not None:
                    carried = np.array([vec_transform_quat(b_rest[:, k], d_l) for k in range(3)]).T
                    d_h = quat_mul(quat_from_mat(b_trk @ carried.T, project=True), d_l)
            out[hd] = quat_mul(quat_conj(d_l), d_h)
            for f, names in fingers.items():
                chain = (0,) + FINGER_LANDMARKS[f] if f != "Thumb" else FINGER_LANDMARKS[f]
                # landmark segments per bone: thumb 1→2, 2→3, 3→4; others knuckle onward
                pairs = list(zip(chain[1:], chain[2:])) if f != "Thumb" else list(zip(chain[:-1], chain[1:]))
                d_prev = d_h
                for k, name in enumerate(names):
                    nxt = names[k + 1] if k + 1 < len(names) else None
                    rest_dir = self._dir(name, nxt) if nxt else None
                    if rest_dir is None and k > 0:
                        rest_dir = self._dir(names[k - 1], name)
                    if rest_dir is None or k >= len(pairs):
                        break
                    t = _unit(lm[pairs[k][1]] - lm[pairs[k][0]])
                    if t is None:
                        break
                    d = arc_then(d_prev, rest_dir, t)
                    out[name] = quat_mul(quat_conj(d_prev), d)
                    d_prev = d
        else:
            out[hd] = _ID.copy()
        return out
