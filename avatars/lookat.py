"""Eye gaze data of an avatar: VRMC_vrm-1.0 ``lookAt`` and VRM 0.x ``firstPerson`` lookAt.

VRM 1.0 (VRMC_vrm-1.0 lookAt.md): ``type`` "bone" (the leftEye/rightEye local rotations)
or "expression" (lookUp/lookDown/lookLeft/lookRight weights); ``offsetFromHeadBone`` (3,)
metres; four range maps ``{inputMaxValue, outputScale}`` (defaults 90 and 10 for bone,
1 for expression, as three-vrm's loader). A range map turns the absolute yaw or pitch x
(degrees) into ``min(|x|, inputMaxValue) / inputMaxValue · outputScale`` (degrees of eye
rotation, or an expression weight); an inputMaxValue of 0 acts as 0.001 (the spec's advice).

VRM 0.x (``VRM.firstPerson``): ``lookAtTypeName`` "Bone" or "BlendShape"; degree maps
``{curve, xRange, yRange}``: ``curve(min(|x|, xRange) / xRange) · yRange`` with ``curve`` a
Unity AnimationCurve stored as keys (time, value, inTangent, outTangent) and evaluated as
cubic Hermite segments (UniVRM's CurveMapper; three-vrm ignores non-linear curves). The
default curve [0, 0, 0, 1, 1, 1, 1, 0] is the identity. ``firstPersonBoneOffset`` is in
Unity's frame; after the +Z turn of VRM 0.x avatars (:mod:`avatars.orientation`) it is
(−x_u, y_u, z_u)... mapped as three-vrm maps it into the file frame (x, y, −z) and then by
the turn (−x, y, −z): (−x_u, y_u, z_u).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .gltf_io import GltfDocument

LINEAR_CURVE = (0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0)
INPUT_MAX_MIN = 0.001


@dataclass(frozen=True)
class RangeMap:
    """One range map (module doc). ``curve``: flat Unity keyframes (4 floats per key) or None
    (linear)."""

    input_max_deg: float = 90.0
    output_scale: float = 10.0
    curve: tuple[float, ...] | None = None

    def map(self, x_deg: float) -> float:
        """The output (degrees or weight) for an input angle ``x_deg`` (its absolute value)."""
        m = max(self.input_max_deg, INPUT_MAX_MIN)
        s = min(abs(x_deg), m) / m
        if self.curve is not None:
            s = hermite_curve(self.curve, s)
        return s * self.output_scale


def hermite_curve(keys: tuple[float, ...], x: float) -> float:
    """A Unity AnimationCurve (keys (time, value, inTangent, outTangent), times increasing)
    at ``x``: cubic Hermite on the segment around x with the out-tangent of its first key
    and the in-tangent of its second; the end values outside."""
    k = [keys[i:i + 4] for i in range(0, len(keys) - len(keys) % 4, 4)]
    if not k:
        return x
    if x <= k[0][0]:
        return k[0][1]
    if x >= k[-1][0]:
        return k[-1][1]
    for a, b in zip(k, k[1:]):
        if a[0] <= x <= b[0]:
            dt = b[0] - a[0]
            if dt <= 0:
                return b[1]
            s = (x - a[0]) / dt
            s2, s3 = s * s, s * s * s
            return ((2 * s3 - 3 * s2 + 1) * a[1] + (s3 - 2 * s2 + s) * dt * a[3]
                    + (-2 * s3 + 3 * s2) * b[1] + (s3 - s2) * dt * b[2])
    return k[-1][1]


@dataclass(frozen=True, eq=False)
class LookAt:
    """An avatar's lookAt (module doc), in VRM 1.0 terms.

    Attributes:
        type: "bone" or "expression".
        offset_from_head: (3,) metres, the lookAt origin relative to the head bone.
        horizontal_inner, horizontal_outer, vertical_down, vertical_up: the range maps.
        source: "VRMC_vrm" or "VRM.firstPerson".
    """

    type: Literal["bone", "expression"] = "bone"
    offset_from_head: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.06, 0.0]))
    horizontal_inner: RangeMap = RangeMap()
    horizontal_outer: RangeMap = RangeMap()
    vertical_down: RangeMap = RangeMap()
    vertical_up: RangeMap = RangeMap()
    source: str = "VRMC_vrm"

    def eye_angles(self, yaw_deg: float, pitch_deg: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """Bone type: ((yaw, pitch) of the left eye, (yaw, pitch) of the right eye), degrees
        of local Euler rotation (YXZ) for a gaze (yaw > 0 left, pitch > 0 down), by the
        spec's table: yaw > 0 uses horizontalOuter for the left eye and horizontalInner for
        the right, yaw < 0 the reverse; pitch > 0 verticalDown, pitch < 0 verticalUp."""
        p = self.vertical_down.map(pitch_deg) if pitch_deg > 0 else -self.vertical_up.map(pitch_deg)
        if yaw_deg > 0:
            ly, ry = self.horizontal_outer.map(yaw_deg), self.horizontal_inner.map(yaw_deg)
        else:
            ly, ry = -self.horizontal_inner.map(yaw_deg), -self.horizontal_outer.map(yaw_deg)
        return (ly, p), (ry, p)

    def expression_weights(self, yaw_deg: float, pitch_deg: float) -> dict[str, float]:
        """Expression type: {lookLeft, lookRight, lookUp, lookDown} weights (spec table:
        horizontalOuter for both sides)."""
        h = self.horizontal_outer.map(yaw_deg)
        return {"lookLeft": h if yaw_deg > 0 else 0.0, "lookRight": h if yaw_deg < 0 else 0.0,
                "lookDown": self.vertical_down.map(pitch_deg) if pitch_deg > 0 else 0.0,
                "lookUp": self.vertical_up.map(pitch_deg) if pitch_deg < 0 else 0.0}


def _num(doc: GltfDocument, v, default: float, elem: str) -> float:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        doc.issues.warn(elem, f"{v!r} is not a finite number; {default} used")
        return default
    return float(v)


def _map1(doc, m, scale: float, elem: str) -> RangeMap:
    m = m if isinstance(m, dict) else {}
    return RangeMap(max(_num(doc, m.get("inputMaxValue"), 90.0, f"{elem}.inputMaxValue"), 0.0),
                    _num(doc, m.get("outputScale"), scale, f"{elem}.outputScale"))


def _map0(doc, m, scale: float, elem: str) -> RangeMap:
    m = m if isinstance(m, dict) else {}
    curve = m.get("curve")
    keys = None
    if isinstance(curve, list) and len(curve) >= 4 and all(
            isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) for c in curve):
        keys = tuple(float(c) for c in curve)
        if keys == LINEAR_CURVE:
            keys = None
    elif curve is not None:
        doc.issues.warn(f"{elem}.curve", "not a list of keyframe numbers; linear used")
    return RangeMap(max(_num(doc, m.get("xRange"), 90.0, f"{elem}.xRange"), 0.0),
                    _num(doc, m.get("yRange"), scale, f"{elem}.yRange"), keys)


def build_look_at(doc: GltfDocument, vrm1: dict | None, vrm0: dict | None) -> LookAt | None:
    """The file's lookAt in the loaded avatar's frame (+Z facing), or None when it has none."""
    if vrm1 is not None:
        la = vrm1.get("lookAt")
        if not isinstance(la, dict):
            return None
        base = "VRMC_vrm.lookAt"
        kind = la.get("type", "bone")
        if kind not in ("bone", "expression"):
            doc.issues.warn(f"{base}.type", f"{kind!r} is not bone/expression; bone used")
            kind = "bone"
        scale = 1.0 if kind == "expression" else 10.0
        off = la.get("offsetFromHeadBone", [0.0, 0.06, 0.0])
        if not (isinstance(off, list) and len(off) == 3):
            off = [0.0, 0.06, 0.0]
        return LookAt(kind, np.array([_num(doc, v, 0.0, f"{base}.offsetFromHeadBone") for v in off]),
                      *(_map1(doc, la.get(k), scale, f"{base}.{k}") for k in (
                          "rangeMapHorizontalInner", "rangeMapHorizontalOuter", "rangeMapVerticalDown",
                          "rangeMapVerticalUp")), source="VRMC_vrm")
    if vrm0 is not None:
        fp = vrm0.get("firstPerson")
        if not isinstance(fp, dict):
            return None
        base = "VRM.firstPerson"
        kind = "expression" if fp.get("lookAtTypeName") == "BlendShape" else "bone"
        scale = 1.0 if kind == "expression" else 10.0
        o = fp.get("firstPersonBoneOffset") or {}
        o = o if isinstance(o, dict) else {}
        off = np.array([-_num(doc, o.get("x"), 0.0, base), _num(doc, o.get("y"), 0.06, base),
                        _num(doc, o.get("z"), 0.0, base)])
        return LookAt(kind, off, *(_map0(doc, fp.get(k), scale, f"{base}.{k}") for k in (
            "lookAtHorizontalInner", "lookAtHorizontalOuter", "lookAtVerticalDown", "lookAtVerticalUp")),
            source="VRM.firstPerson")
    return None
