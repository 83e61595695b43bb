"""Angle limits and wind responses of the segments, resolved at build and packed into the
``external`` section (:mod:`solver.layout`; enforced by :mod:`solver.kernels.limits`, the wind
by :mod:`solver.kernels.forces`).

A segment's limit comes from, first match wins:

1. the config: ``BuildOptions.limits``, {fnmatch pattern over spring names: a
   :class:`avatars.model.JointLimit`, or None to run the spring without any limit} (the first
   matching pattern wins, as :func:`solver.params.override_for`); a config limit applies to
   every joint of the spring;
2. the file: the joint's :attr:`avatars.model.SpringJoint.limit` (the VRMC_springBone_limit
   draft or an ``angleLimit``, :mod:`avatars.spring_limits`);
3. the fit (with ``BuildOptions.fit_limits``): the try-on auto-rig's
   :attr:`avatars.model.SpringJoint.max_bend`, as a cone about the rest direction (automatic
   root-bend limits for fitted hair).

The limit space of a joint (VRMC_springBone_limit-1.0 draft, vrm-specification commit 75fbd48,
"Rotation"): ``axisRotation`` (the shortest arc from +Y to the joint's rest tail direction in
its own frame, ``boneAxis``; a half turn about X when that is −Y) times the limit's
``rotation``, packed as the 3x3 ``X_LQ`` (:func:`limit_frame`). Angles are packed capped as the
draft reads them: cone and hinge angles and the pitch at π, the yaw at π/2.

A segment's wind response (1/s, the tail's acceleration per m/s of wind: drag per unit mass)
is ``BuildOptions.wind_drag``: a number for every spring or {pattern: number} (first match),
:data:`DEFAULT_WIND_RESPONSE` where nothing matches.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping

import numpy as np

from avatars.model import LIMIT_KINDS, JointLimit

from . import layout as L
from .errors import SolverOptionError

#: Wind response of a segment no setting names, 1/s (10 m/s of wind: 10 m/s² on the tail).
DEFAULT_WIND_RESPONSE = 1.0
#: Largest wind response accepted, 1/s.
MAX_WIND_RESPONSE = 100.0

Limits = Mapping[str, "JointLimit | None"] | None
WindDrag = Mapping[str, float] | float | None


def axis_rotation(bone_axis: np.ndarray) -> np.ndarray:
    """xyzw quaternion of the shortest arc from +Y to the unit ``bone_axis`` (3,), as the draft's
    reference code (quaternion(cross(Y, a), dot(Y, a) + 1) normalised; (1, 0, 0, 0) when a is −Y
    to 1e-8)."""
    a = np.asarray(bone_axis, float)
    dot1 = a[1] + 1.0
    if dot1 < 1e-8:
        return np.array([1.0, 0.0, 0.0, 0.0])
    q = np.array([a[2], 0.0, -a[0], dot1])
    return q / np.linalg.norm(q)


def _qmat(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def limit_frame(tail_local: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """(3, 3) limit space -> the joint's rest local frame: axisRotation(boneAxis) · rotation,
    boneAxis the unit rest tail ``tail_local`` (3,); columns are the limit's axes."""
    t = np.asarray(tail_local, float)
    return _qmat(_qmul(axis_rotation(t / np.linalg.norm(t)), np.asarray(rotation, float)))


def check_limit(lim: JointLimit, where: str) -> JointLimit:
    """``lim`` if it is a limit the kernel runs; SolverOptionError naming ``where`` otherwise."""
    if lim.kind not in LIMIT_KINDS:
        raise SolverOptionError(f"{where}: limit kind {lim.kind!r} is not one of {', '.join(LIMIT_KINDS)}")
    for name, v in (("angle", lim.angle), ("yaw", lim.yaw)):
        if not math.isfinite(v) or v < 0.0:
            raise SolverOptionError(f"{where}: limit {name} {v!r} is not an angle >= 0 (radians)")
    q = np.asarray(lim.rotation, float)
    if q.shape != (4,) or not np.all(np.isfinite(q)) or abs(np.linalg.norm(q) - 1.0) > 1e-6:
        raise SolverOptionError(f"{where}: limit rotation {lim.rotation!r} is not a unit quaternion [x, y, z, w]")
    return lim


def _first(mapping, name):
    for pattern, value in mapping.items():
        if fnmatch.fnmatchcase(name, pattern):
            return True, value
    return False, None


def resolve_limit(spring_name: str, joint, limits: Limits, fit: bool = True) -> JointLimit | None:
    """The limit of ``joint`` (a :class:`avatars.model.SpringJoint` of spring ``spring_name``):
    config, then file, then (with ``fit``) the fit's ``max_bend`` (module doc)."""
    if limits:
        hit, lim = _first(limits, spring_name)
        if hit:
            return None if lim is None else check_limit(lim, f"limit of spring {spring_name!r}")
    if joint.limit is not None:
        return joint.limit
    if fit and joint.max_bend is not None:
        return JointLimit(kind="cone", angle=float(joint.max_bend), source="fit")
    return None


def resolve_wind_drag(spring_name: str, wind_drag: WindDrag) -> float:
    """The wind response (1/s) of the spring's segments (module doc).

    Raises:
        SolverOptionError: a value that is not a finite number in [0, :data:`MAX_WIND_RESPONSE`].
    """
    v = DEFAULT_WIND_RESPONSE
    if isinstance(wind_drag, Mapping):
        hit, value = _first(wind_drag, spring_name)
        if hit:
            v = value
    elif wind_drag is not None:
        v = wind_drag
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not \
            0.0 <= v <= MAX_WIND_RESPONSE:
        raise SolverOptionError(f"wind_drag of spring {spring_name!r}: {v!r} is not a number in "
                                f"[0, {MAX_WIND_RESPONSE:g}] (1/s)")
    return float(v)


def pack_external(F: np.ndarray, I: np.ndarray, chains, limits: Limits, wind_drag: WindDrag,  # noqa: E741
                  fit_limits: bool = False) -> list[dict]:
    """Fill the ``external`` section of the buffers (and the forces row's count of limited
    segments) for the topology's ``chains`` (:class:`solver.topology.Chain`, segments in their
    order). Returns the limits in effect: [{"segment", "spring", "node", "kind", "angle",
    "yaw", "source"}] (radians)."""
    ext = L.views(L.EXTERNAL, F, I)
    out = []
    for chain in chains:
        name = chain.spring.name
        response = resolve_wind_drag(name, wind_drag)
        for j, link in enumerate(chain.links):
            i = chain.first + j
            ext.wind_response[i] = response
            lim = resolve_limit(name, link.joint, limits, fit_limits)
            ext.limit_frame[i] = np.eye(3)
            if lim is None:
                continue
            ext.limit_kind[i] = L.LIMITS[lim.kind]
            angle = min(lim.angle, math.pi)
            ext.limit_angle[i] = angle
            ext.limit_yaw[i] = min(lim.yaw, 0.5 * math.pi)
            ext.limit_cos[i] = math.cos(angle)
            ext.limit_frame[i] = limit_frame(link.tail_local, lim.rotation)
            out.append({"segment": i, "spring": name, "node": int(link.joint.node), "kind": lim.kind,
                        "angle": float(lim.angle), "yaw": float(lim.yaw), "source": lim.source})
    L.views(L.FORCES, F, I).limited[()] = float(len(out))
    return out


def repack(chains, limits: Limits, wind_drag: WindDrag, fit_limits: bool = False) -> list[dict]:
    """Re-resolve a running chain set's limits and wind responses (:func:`pack_external` on its
    own buffers, from the avatar it was built from), between substeps; the motion state is not
    touched. Returns the limits in effect (also in ``chains.report.angle_limits``).

    Raises:
        SolverOptionError: a bad limit or wind response (nothing is changed then).
    """
    import dataclasses

    from .topology import chain_topology

    topo = chain_topology(chains._avatar)
    F2, I2 = chains._F.copy(), chains._I.copy()
    out = pack_external(F2, I2, topo.chains, limits, wind_drag, fit_limits)   # raises before any change
    ext = L.block_array(L.EXTERNAL, chains._F, chains._I)
    ext[:] = L.block_array(L.EXTERNAL, F2, I2)
    L.views(L.FORCES, chains._F, chains._I).limited[()] = float(len(out))
    chains.report = dataclasses.replace(chains.report, angle_limits=tuple(out))
    return out
