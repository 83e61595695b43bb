"""Angle limits of VRMC_springBone joints, read into :class:`avatars.model.JointLimit`.

Two places carry them:

- the VRMC_springBone_limit-1.0 draft (vrm-c/vrm-specification commit 75fbd48,
  specification/VRMC_springBone_limit-1.0): a joint's ``extensions.VRMC_springBone_limit`` =
  ``{"specVersion": "1.0-draft", "limit": {"cone": {"angle", "rotation"?}} | {"hinge": {"angle",
  "rotation"?}} | {"spherical": {"pitch", "yaw", "rotation"?}}}`` (radians, xyzw);
- as some exporters write it, an ``angleLimit`` in the joint's
  ``extensions.VRMC_springBone_extended_collider``, holding the same ``limit`` object.

The draft wins when both are there. A kind we do not support (anything but cone, hinge and
spherical: a PhysBones "polar" or "twist", say) is a warning naming the joint, and the joint
runs without a limit; so is a malformed one (a negative or non-finite angle, a rotation that is
not a unit quaternion). Angles above the draft's caps (π; π/2 for the yaw) are kept as given:
the kernel reads them as the caps.
"""

from __future__ import annotations

import math

import numpy as np

from .model import LIMIT_KINDS, JointLimit

DRAFT = "VRMC_springBone_limit"
EXTENDED = "VRMC_springBone_extended_collider"


def _angle(doc, v, where: str) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        doc.issues.warn(where, f"{v!r} is not an angle >= 0 (radians); the limit is ignored")
        return None
    return float(v)


def _rotation(doc, v, where: str) -> np.ndarray | None:
    if v is None:
        return np.array([0.0, 0.0, 0.0, 1.0])
    try:
        q = np.asarray(v, float).reshape(4)
    except (TypeError, ValueError):
        q = None
    if q is None or not np.all(np.isfinite(q)) or abs(np.linalg.norm(q) - 1.0) > 1e-3:
        doc.issues.warn(where, f"{v!r} is not a unit quaternion [x, y, z, w]; the limit is ignored")
        return None
    return q / np.linalg.norm(q)


def parse_limit(doc, limit, where: str, joint_name: str, source: str) -> JointLimit | None:
    """One ``limit`` object (module doc) at JSON path ``where`` -> JointLimit, or None with a
    warning (naming ``joint_name``) when it is not one we support."""
    if not isinstance(limit, dict) or not limit:
        doc.issues.warn(where, f"joint {joint_name}: the angle limit is not an object with cone, hinge or "
                               f"spherical; ignored")
        return None
    kinds = [k for k in limit if k in LIMIT_KINDS]
    other = [k for k in limit if k not in LIMIT_KINDS and k not in ("extensions", "extras")]
    if not kinds:
        doc.issues.warn(where, f"joint {joint_name}: angle limit kind {other[0] if other else '?'!r} is not "
                               f"supported (supported: {', '.join(LIMIT_KINDS)}); the joint runs without a limit")
        return None
    if len(kinds) > 1:
        doc.issues.warn(where, f"joint {joint_name}: the limit has {', '.join(kinds)}; the draft allows one; "
                               f"{kinds[0]} is used")
    kind = kinds[0]
    data = limit[kind]
    p = f"{where}.{kind}"
    if not isinstance(data, dict):
        doc.issues.warn(p, f"joint {joint_name}: {data!r} is not an object; the limit is ignored")
        return None
    rot = _rotation(doc, data.get("rotation"), f"{p}.rotation")
    if rot is None:
        return None
    if kind == "spherical":
        pitch = _angle(doc, data.get("pitch"), f"{p}.pitch")
        yaw = _angle(doc, data.get("yaw"), f"{p}.yaw")
        if pitch is None or yaw is None:
            return None
        return JointLimit(kind=kind, angle=pitch, yaw=yaw, rotation=rot, source=source)
    angle = _angle(doc, data.get("angle"), f"{p}.angle")
    if angle is None:
        return None
    return JointLimit(kind=kind, angle=angle, rotation=rot, source=source)


def joint_limit(doc, j: dict, elem: str, joint_name: str) -> JointLimit | None:
    """The angle limit of joint ``j`` (a VRMC_springBone joint object at ``elem``), or None."""
    ext = j.get("extensions") if isinstance(j.get("extensions"), dict) else {}
    draft = ext.get(DRAFT)
    if draft is not None:
        where = f"{elem}.extensions.{DRAFT}"
        if not isinstance(draft, dict) or "limit" not in draft:
            doc.issues.warn(where, f"joint {joint_name}: no limit object; ignored")
        else:
            return parse_limit(doc, draft["limit"], f"{where}.limit", joint_name, "file")
    extended = ext.get(EXTENDED)
    if isinstance(extended, dict) and "angleLimit" in extended:
        return parse_limit(doc, extended["angleLimit"], f"{elem}.extensions.{EXTENDED}.angleLimit", joint_name,
                           "file:angleLimit")
    return None
