"""Compiled VRMC_node_constraint 1.0 evaluation (numba, ``cache=True``, inlined into the rig's
entry points in :mod:`runtime.rig.kernels`; nothing here allocates).

One constraint step writes the destination's local rotation into its driven TRS row
(:class:`runtime.rig.posing.DrivenPose`), from its rest rotation ``D`` (the file's), the
constraint's weight ``w`` and (vrm-c/vrm-specification VRMC_node_constraint-1.0, "Evaluation of
rotations"; the arithmetic and operation order of three-vrm 3.5.5's ``VRMRollConstraint``,
``VRMAimConstraint``, ``VRMRotationConstraint`` and three.js r180's quaternion helpers):

- rotation (local-local): ``S`` the source's local rotation, ``S0`` its rest rotation;
  ``target = D · (S0⁻¹ · S)``;
- roll about the unit axis ``a`` (the destination's local X, Y or Z):
  ``Δ = D⁻¹ · S · (S0⁻¹ · D)`` (the source's rest-relative rotation in the destination's
  frame), ``target = D · fromTo(Δ a, a) · Δ`` (the swing that carries ``a`` away is removed,
  the twist about ``a`` is kept);
- aim with the unit axis ``a``: ``P`` the rotation of the destination parent's world matrix
  (three.js ``Matrix4.decompose``), ``a0 = P · D · a``, ``a1`` the unit direction from the
  destination's world position (``W_parent · t``) to the source's,
  ``target = P⁻¹ · fromTo(a0, a1) · P · D``;

then the rotation is ``slerp(D, target, w)`` (three.js ``Quaternion.slerp``: ``D`` at w = 0,
``target`` at w = 1). ``fromTo`` is three.js ``setFromUnitVectors`` (antiparallel below
1e-8, normalised). The destination's translation and scale rows are left alone. The
quaternion arithmetic is the three.js-order set of :mod:`avatars.math_kernels` (``*_three``).

Data (C-contiguous; layouts are the constants below): ``steps`` (K, 5) int64 and ``vals``
(K, 16) float64, one row per step of a :class:`runtime.rig.constraints.ConstraintPlan`;
``trs`` (D, 10) the driven TRS buffer (:data:`runtime.rig.kernels.TRS_T` ...); ``world``
(N, 4, 4) world matrices (read: the aim's source and destination parent, written earlier
by the plan's pose rows).
"""

from __future__ import annotations

import math

from numba import njit

from avatars.math_kernels import (
    qmul_three, quat_from_unit_vecs_three, quat_rotate_three, rotation34_three, slerp_three, world34,
)

# ------------------------------------------------------------------ step row (int64, 5 wide)
STEP_KIND = 0       # one of the kinds below
STEP_POSE = 0       # a pose row: W[node] = W[src] · M · L(slot), columns as below
STEP_ROLL = 1
STEP_AIM = 2
STEP_ROTATION = 3
ST_NODE, ST_SRC, ST_SLOT = 1, 2, 3          # pose row: node, source row's node (−1: I), slot (−1: none)
ST_DST_SLOT, ST_SOURCE, ST_SOURCE_SLOT, ST_DST_PARENT = 1, 2, 3, 4   # constraint row
ST_W = 5

# ------------------------------------------------------------------ step values (float64, 16 wide)
V_M = 0             # pose row: (12) the constant factor M, 3x4 row-major
V_AXIS = 0          # constraint: (3) unit roll / aim axis in the destination's frame
V_DST_REST = 3      # (4) D, the destination's rest local rotation
V_SRC_TERM = 7      # (4) roll: S0⁻¹ · D; rotation: S0⁻¹; aim: unused
V_WEIGHT = 11       # weight in [0, 1]
V_SRC_LOCAL = 12    # (4) the source's local rotation when it is not driven (source slot −1)
V_W = 16

# the TRS row layout of runtime.rig.kernels (not imported: kernels.py imports this module)
_TRS_T = 0
_TRS_Q = 3


@njit(inline="always", cache=True)
def source_local(steps, vals, trs, k):
    """The source's current local rotation: its driven TRS row, else the constant in ``vals``."""
    slot = steps[k, ST_SOURCE_SLOT]
    if slot >= 0:
        return trs[slot, _TRS_Q], trs[slot, _TRS_Q + 1], trs[slot, _TRS_Q + 2], trs[slot, _TRS_Q + 3]
    v = V_SRC_LOCAL
    return vals[k, v], vals[k, v + 1], vals[k, v + 2], vals[k, v + 3]


@njit(inline="always", cache=True)
def constraint_step(world, steps, vals, trs, k):
    """Evaluate the constraint of step row ``k`` (module doc) into its destination's TRS row."""
    kind = steps[k, STEP_KIND]
    dx, dy, dz, dw = vals[k, V_DST_REST], vals[k, V_DST_REST + 1], vals[k, V_DST_REST + 2], vals[k, V_DST_REST + 3]
    tx, ty, tz, tw = vals[k, V_SRC_TERM], vals[k, V_SRC_TERM + 1], vals[k, V_SRC_TERM + 2], vals[k, V_SRC_TERM + 3]
    ax, ay, az = vals[k, V_AXIS], vals[k, V_AXIS + 1], vals[k, V_AXIS + 2]
    dslot = steps[k, ST_DST_SLOT]
    if kind == STEP_ROTATION:
        sx, sy, sz, sw = source_local(steps, vals, trs, k)
        d = qmul_three(tx, ty, tz, tw, sx, sy, sz, sw)
        g = qmul_three(dx, dy, dz, dw, d[0], d[1], d[2], d[3])
    elif kind == STEP_ROLL:
        sx, sy, sz, sw = source_local(steps, vals, trs, k)
        d = qmul_three(-dx, -dy, -dz, dw, sx, sy, sz, sw)
        d = qmul_three(d[0], d[1], d[2], d[3], tx, ty, tz, tw)
        n = quat_rotate_three(d[0], d[1], d[2], d[3], ax, ay, az)
        f = quat_from_unit_vecs_three(n[0], n[1], n[2], ax, ay, az)
        g = qmul_three(dx, dy, dz, dw, f[0], f[1], f[2], f[3])
        g = qmul_three(g[0], g[1], g[2], g[3], d[0], d[1], d[2], d[3])
    else:  # STEP_AIM
        parent = steps[k, ST_DST_PARENT]
        pw = world34(world, parent)
        if parent >= 0:
            px, py, pz, pq = rotation34_three(pw)
        else:
            px, py, pz, pq = 0.0, 0.0, 0.0, 1.0
        a0 = quat_rotate_three(dx, dy, dz, dw, ax, ay, az)
        a0 = quat_rotate_three(px, py, pz, pq, a0[0], a0[1], a0[2])
        # the destination's world position: W_parent · t (its own rotation does not move it)
        lx, ly, lz = trs[dslot, _TRS_T], trs[dslot, _TRS_T + 1], trs[dslot, _TRS_T + 2]
        ox = pw[0] * lx + pw[1] * ly + pw[2] * lz + pw[3]
        oy = pw[4] * lx + pw[5] * ly + pw[6] * lz + pw[7]
        oz = pw[8] * lx + pw[9] * ly + pw[10] * lz + pw[11]
        s = steps[k, ST_SOURCE]
        vx, vy, vz = world[s, 0, 3] - ox, world[s, 1, 3] - oy, world[s, 2, 3] - oz
        ln = math.sqrt(vx * vx + vy * vy + vz * vz)     # three.js Vector3.normalize: v · (1 / (|v| or 1))
        ln = 1.0 / (ln if ln != 0.0 else 1.0)
        vx, vy, vz = vx * ln, vy * ln, vz * ln
        f = quat_from_unit_vecs_three(a0[0], a0[1], a0[2], vx, vy, vz)
        g = qmul_three(-px, -py, -pz, pq, f[0], f[1], f[2], f[3])
        g = qmul_three(g[0], g[1], g[2], g[3], px, py, pz, pq)
        g = qmul_three(g[0], g[1], g[2], g[3], dx, dy, dz, dw)
    r = slerp_three(dx, dy, dz, dw, g[0], g[1], g[2], g[3], vals[k, V_WEIGHT])
    for j in range(4):
        trs[dslot, _TRS_Q + j] = r[j]
