"""Compiled per-substep code of the rig (numba, ``cache=True``, no NRT): head drive, targeted
posing and whole-skeleton forward kinematics, in one call each; nothing here allocates.

Entry points (the Python side is :mod:`runtime.rig.drive` and :mod:`runtime.rig.posing`):

- :func:`drive_and_pose_kernel` — per 120 Hz substep: the head drive writes the driven
  nodes' local TRS, the node constraints the solver's targets depend on write theirs
  (docs/design.md §10: drive -> constraints -> posing), then the pose plan writes the world matrices
  of the solver's targets;
- :func:`drive_and_fk_kernel` — per drawn frame: the head drive, every node constraint, then
  every node's world matrix (whole-skeleton FK, parents first);
- :func:`head_drive_kernel`, :func:`constrain_kernel`, :func:`pose_plan_kernel`,
  :func:`forward_kinematics_kernel` — the same pieces alone (tests,
  :meth:`runtime.rig.drive.HeadDrive.apply`, future drives).

Data (all C-contiguous, float64 unless said; the layouts are the constants below):

- ``trs`` (D, 10): local translation (metres, parent space), rotation (xyzw) and scale of
  every driven node, one row per slot (:class:`runtime.rig.posing.DrivenPose`);
- ``hp`` (HP,) and ``hs`` (3,) int64: the head drive's parameters and its three slots
  (hips, neck, head; −1 when absent), packed by :class:`runtime.rig.drive.HeadDrive`;
- ``ops`` (P, 3) int64 and ``mats`` (P, 12): the pose plan (:class:`runtime.rig.posing.PosePlan`),
  one world matrix per row: ``W[node] = W[src] · M · L(slot)``, with W[−1] = I and L(−1) = I;
- ``steps`` (K, 5) int64 and ``vals`` (K, 16): a constraint plan
  (:class:`runtime.rig.constraints.ConstraintPlan`, layouts in :mod:`runtime.rig.constraint_kernels`):
  pose rows (the world matrices the constraints read) and constraint steps in dependency
  order, each step writing its destination's rotation into ``trs``;
- ``fk`` (N, 3) int64 (node, parent, slot; parents first) and ``base`` (N, 12): the base
  local matrices, for whole-skeleton FK ``W[n] = W[parent] · (L(slot) or base[n])``;
- ``world`` (N, 4, 4): world matrices, column vectors (docs/design.md §3); rows written whole,
  bottom row (0, 0, 0, 1).

3x4 matrices travel as 12-tuples (row-major) and quaternions as 4-tuples, in registers
(:mod:`avatars.math_kernels`).
"""

from __future__ import annotations

import math
from pathlib import Path

from numba import njit

from avatars.kernel_cache import refresh
from avatars.math_kernels import compose34, mul34, put_world, qmul, quat_rotate, row34, slerp_from_identity, world34

import tracking.body
from tracking.body import BD_BONES, BD_FLAGS, BD_HIPS, BD_MASK, BD_ROOT, BD_WEIGHT, F_HIPS, F_ON, F_ROOT, NUM_BONES

from .constraint_kernels import ST_NODE, ST_SLOT, ST_SRC, STEP_KIND, STEP_POSE, constraint_step

# ------------------------------------------------------------------ driven TRS row (10 wide)
TRS_T = 0      # (3) translation, metres, parent space
TRS_Q = 3      # (4) rotation xyzw
TRS_S = 7      # (3) scale
TRS_W = 10

# ------------------------------------------------------------------ pose plan row (int64, 3 wide)
OP_NODE = 0    # the node whose world matrix the row writes
OP_SRC = 1     # an earlier row's node (its world matrix is read), −1: identity
OP_SLOT = 2    # the node's driven slot (its local TRS is composed last), −1: none
OP_W = 3

# ------------------------------------------------------------------ head drive parameters (float64)
HP_NECK_SHARE = 0    # share of the tracked rotation the neck takes, [0, 1]
HP_LEAN_SHARE = 1    # hips translation per metre of head translation
HP_MAX_LEAN = 2      # metres per axis
HP_R0_HEAD = 3       # (4) rest world rotation of the head
HP_R0_NECK = 7       # (4) rest world rotation of the neck
HP_R0_PARENT_INV = 11  # (4) conjugate of the rest world rotation of the neck's (head's) parent
HP_REST_HIPS_T = 15  # (3) rest local translation of the hips
HP_HIPS_PARENT_INV = 18  # (4) conjugate of the rest world rotation of the hips' parent
HP = 22
HS_HIPS, HS_NECK, HS_HEAD = 0, 1, 2   # slots in hs (int64 (3,))

# ------------------------------------------------------------------ eye drive (lookAt, float64 ``lp``)
LP_SCALE = 0         # the gaze multiplier (1 − the overrideLookAt rate of the drawn frame's expressions)
LP_MAPS = 1          # four range maps: horizontal inner, outer, vertical down, up
MAX_KEYS = 8         # curve keys per map (VRM 0.x degree maps; 0: linear)
MAP_W = 3 + 4 * MAX_KEYS   # input max (deg), output scale, key count, keys (time, value, in, out)
LP_EYES = LP_MAPS + 4 * MAP_W   # per eye (left, right): parent rest world rotation (4), its conjugate (4),
EYE_W = 12                       #   rest local rotation (4)
LP = LP_EYES + 2 * EYE_W
MAP_INNER, MAP_OUTER, MAP_DOWN, MAP_UP = 0, 1, 2, 3

# ------------------------------------------------------------------ body drive (a network performer's pose)
BP_PINV = 0          # (4) conjugate of the rest world rotation of the bone's parent
BP_R0 = 4            # (4) rest world rotation of the bone
BP_W = 8

# ------------------------------------------------------------------ the rig's packed parameters
# ``hp`` (float64): the head drive's HP values, then the lookAt's LP, then the body's 55 BP rows;
# ``hs`` (int64): hips, neck, head slots, then the two eye slots, then the 55 body slots
HP_LP = HP
HP_BP = HP_LP + LP
HPX = HP_BP + NUM_BONES * BP_W
HS_EYES = 3
HS_BODY = 5
HSX = HS_BODY + NUM_BONES


# ============================================================== small pieces
@njit(inline="always", cache=True)
def trs34(trs, r):
    """Local matrix T·R·S of driven slot ``r`` as a 3x4 tuple (:func:`avatars.math_kernels.compose34`)."""
    return compose34(trs[r, TRS_T], trs[r, TRS_T + 1], trs[r, TRS_T + 2],
                     trs[r, TRS_Q], trs[r, TRS_Q + 1], trs[r, TRS_Q + 2], trs[r, TRS_Q + 3],
                     trs[r, TRS_S], trs[r, TRS_S + 1], trs[r, TRS_S + 2])


@njit(inline="always", cache=True)
def hips_lean(translation, hp):
    """The tracked lean added to the hips' local translation: R0_hips_parent⁻¹ ·
    clamp(lean_share · t, ±max_lean) per axis, t the tracked head translation (metres)."""
    m, s = hp[HP_MAX_LEAN], hp[HP_LEAN_SHARE]
    lx = min(max(translation[0] * s, -m), m)
    ly = min(max(translation[1] * s, -m), m)
    lz = min(max(translation[2] * s, -m), m)
    hi = HP_HIPS_PARENT_INV
    return quat_rotate(hp[hi], hp[hi + 1], hp[hi + 2], hp[hi + 3], lx, ly, lz)


# ============================================================== head drive (docs/design.md §2 "head pose at t_n")
@njit(inline="always", cache=True)
def head_drive(rotation, translation, use_t, hp, hs, trs):
    """Write the neck/head local rotations and the hips translation (module doc of
    :mod:`runtime.rig.drive`): D_neck = slerp(I, q, neck_share), W_neck = D_neck · R0_neck,
    L_neck = R0_parent⁻¹ · W_neck, L_head = W_neck⁻¹ · q · R0_head (no neck: L_head =
    R0_parent⁻¹ · q · R0_head); hips: t0 + R0_hips_parent⁻¹ · clamp(lean_share · t, ±max_lean)."""
    qx, qy, qz, qw = rotation[0], rotation[1], rotation[2], rotation[3]
    qh = qmul(qx, qy, qz, qw, hp[HP_R0_HEAD], hp[HP_R0_HEAD + 1], hp[HP_R0_HEAD + 2], hp[HP_R0_HEAD + 3])
    pi = HP_R0_PARENT_INV
    head, neck = hs[HS_HEAD], hs[HS_NECK]
    if neck >= 0:
        d = slerp_from_identity(qx, qy, qz, qw, hp[HP_NECK_SHARE])
        wn = qmul(d[0], d[1], d[2], d[3], hp[HP_R0_NECK], hp[HP_R0_NECK + 1], hp[HP_R0_NECK + 2],
                  hp[HP_R0_NECK + 3])
        ln = qmul(hp[pi], hp[pi + 1], hp[pi + 2], hp[pi + 3], wn[0], wn[1], wn[2], wn[3])
        lh = qmul(-wn[0], -wn[1], -wn[2], wn[3], qh[0], qh[1], qh[2], qh[3])
        for j in range(4):
            trs[neck, TRS_Q + j] = ln[j]
    else:
        lh = qmul(hp[pi], hp[pi + 1], hp[pi + 2], hp[pi + 3], qh[0], qh[1], qh[2], qh[3])
    for j in range(4):
        trs[head, TRS_Q + j] = lh[j]
    hips = hs[HS_HIPS]
    if hips >= 0:
        for j in range(3):
            trs[hips, TRS_T + j] = hp[HP_REST_HIPS_T + j]
        if use_t:
            lx, ly, lz = hips_lean(translation, hp)
            trs[hips, TRS_T] += lx
            trs[hips, TRS_T + 1] += ly
            trs[hips, TRS_T + 2] += lz


# ============================================================== eyes (VRMC_vrm-1.0 lookAt, type bone)
@njit(inline="always", cache=True)
def range_map(hp, m, x):
    """Range map ``m`` of ``lp`` at the input angle x (degrees): min(|x|, max)/max, through
    the map's Hermite curve when it has keys (:func:`avatars.lookat.hermite_curve`), times
    the output scale (:class:`avatars.lookat.RangeMap`)."""
    lp = hp
    o = HP_LP + LP_MAPS + m * MAP_W
    mx = max(lp[o], 0.001)
    s = min(abs(x), mx) / mx
    nk = int(lp[o + 2])
    if nk > 0:
        k0 = o + 3
        if s <= lp[k0]:
            s = lp[k0 + 1]
        elif s >= lp[k0 + 4 * (nk - 1)]:
            s = lp[k0 + 4 * (nk - 1) + 1]
        else:
            for i in range(nk - 1):
                a = k0 + 4 * i
                b = a + 4
                if lp[a] <= s <= lp[b]:
                    dt = lp[b] - lp[a]
                    if dt <= 0.0:
                        s = lp[b + 1]
                        break
                    u = (s - lp[a]) / dt
                    u2 = u * u
                    u3 = u2 * u
                    s = ((2 * u3 - 3 * u2 + 1) * lp[a + 1] + (u3 - 2 * u2 + u) * dt * lp[a + 3]
                         + (-2 * u3 + 3 * u2) * lp[b + 1] + (u3 - u2) * dt * lp[b + 2])
                    break
    return s * lp[o + 1]


@njit(inline="always", cache=True)
def eye_drive(gaze, hp, hs, trs):
    """The eyes' local rotations from the gaze (yaw > 0 left, pitch > 0 down, radians) by the
    lookAt range maps (:meth:`avatars.lookat.LookAt.eye_angles`): E = Ry(yaw_e) · Rx(pitch_e)
    (YXZ Euler) in the head's rest-aligned frame, L = P⁻¹ · E · P · L0 (three-vrm's
    VRMLookAtBoneApplier: P the eye parent's rest world rotation, L0 the eye's rest local)."""
    lp = hp
    sc = lp[HP_LP + LP_SCALE]
    yaw = math.degrees(gaze[0]) * sc
    pitch = math.degrees(gaze[1]) * sc
    if pitch > 0.0:
        pe = range_map(hp, MAP_DOWN, pitch)
    else:
        pe = -range_map(hp, MAP_UP, pitch)
    for e in range(2):
        s = hs[HS_EYES + e]
        if s < 0:
            continue
        if yaw > 0.0:
            ye = range_map(hp, MAP_OUTER if e == 0 else MAP_INNER, yaw)
        else:
            ye = -range_map(hp, MAP_INNER if e == 0 else MAP_OUTER, yaw)
        hy = 0.5 * math.radians(ye)
        hp_ = 0.5 * math.radians(pe)
        q = qmul(0.0, math.sin(hy), 0.0, math.cos(hy), math.sin(hp_), 0.0, 0.0, math.cos(hp_))
        o = HP_LP + LP_EYES + e * EYE_W
        t = qmul(lp[o + 4], lp[o + 5], lp[o + 6], lp[o + 7], q[0], q[1], q[2], q[3])
        t = qmul(t[0], t[1], t[2], t[3], lp[o], lp[o + 1], lp[o + 2], lp[o + 3])
        t = qmul(t[0], t[1], t[2], t[3], lp[o + 8], lp[o + 9], lp[o + 10], lp[o + 11])
        for j in range(4):
            trs[s, TRS_Q + j] = t[j]


# ============================================================== body (a network performer, runtime.vmc)
@njit(inline="always", cache=True)
def body_drive(bd, hp, hs, trs):
    """A whole-body pose (``bd``: the flat :class:`tracking.body.BodyPose` buffer, normalized
    local rotations n) onto the driven rows: L = R0_parent⁻¹ · n · R0_bone for every received
    bone the avatar has (three-vrm's normalized humanoid); the hips translation
    R0_hips_parent⁻¹ · p (the hips is bone 0 of :data:`tracking.body.BODY_BONES`); then the
    root placement (R_r, p_r) on top of the hips, whatever drove them (the pose or the clip):
    in the avatar frame W_hips' = R_r · W_hips, x_hips' = p_r + R_r · x_hips. A weight w < 1
    (``bd[BD_WEIGHT]``, a silent sender being eased out) blends each from the row's own value:
    L' = slerp(I, L·L_own⁻¹, w)·L_own, t' = t_own + w (t − t_own), the root slerp(I, R_r, w),
    w p_r; a bone's mask m in (0, 1) weighs it by w·m (the webcam's arms eased in and out,
    :mod:`runtime.hands.drive`; a mask of 1 is w exactly). Bones, hips and root the pose
    does not name are left as they are."""
    if bd[BD_FLAGS + F_ON] == 0.0:
        return
    w = bd[BD_WEIGHT]
    if w <= 0.0:
        return
    for b in range(NUM_BONES):
        s = hs[HS_BODY + b]
        if s < 0 or bd[BD_MASK + b] == 0.0:
            continue
        wb = w * bd[BD_MASK + b]          # a mask below 1 is a per-bone weight (runtime.hands)
        o = HP_BP + b * BP_W
        q = BD_BONES + 4 * b
        t = qmul(hp[o + BP_PINV], hp[o + BP_PINV + 1], hp[o + BP_PINV + 2], hp[o + BP_PINV + 3],
                 bd[q], bd[q + 1], bd[q + 2], bd[q + 3])
        t = qmul(t[0], t[1], t[2], t[3], hp[o + BP_R0], hp[o + BP_R0 + 1], hp[o + BP_R0 + 2], hp[o + BP_R0 + 3])
        if wb < 1.0:
            ox, oy, oz, ow = trs[s, TRS_Q], trs[s, TRS_Q + 1], trs[s, TRS_Q + 2], trs[s, TRS_Q + 3]
            d = qmul(t[0], t[1], t[2], t[3], -ox, -oy, -oz, ow)
            e = slerp_from_identity(d[0], d[1], d[2], d[3], wb)
            t = qmul(e[0], e[1], e[2], e[3], ox, oy, oz, ow)
        for j in range(4):
            trs[s, TRS_Q + j] = t[j]
    s = hs[HS_BODY]
    if s < 0:
        return
    o = HP_BP
    px, py, pz, pw = hp[o + BP_PINV], hp[o + BP_PINV + 1], hp[o + BP_PINV + 2], hp[o + BP_PINV + 3]
    if bd[BD_FLAGS + F_HIPS] != 0.0:
        v = quat_rotate(px, py, pz, pw, bd[BD_HIPS], bd[BD_HIPS + 1], bd[BD_HIPS + 2])
        for j in range(3):
            trs[s, TRS_T + j] = v[j] if w >= 1.0 else trs[s, TRS_T + j] + w * (v[j] - trs[s, TRS_T + j])
    r = BD_ROOT
    if bd[BD_FLAGS + F_ROOT] != 0.0 and not (bd[r] == 0.0 and bd[r + 1] == 0.0 and bd[r + 2] == 0.0 and
                                            bd[r + 3] == 0.0 and bd[r + 4] == 0.0 and bd[r + 5] == 0.0):
        rq = (bd[r + 3], bd[r + 4], bd[r + 5], bd[r + 6])     # (a root at the origin changes nothing)
        rx, ry, rz = bd[r], bd[r + 1], bd[r + 2]
        if w < 1.0:
            rq = slerp_from_identity(rq[0], rq[1], rq[2], rq[3], w)
            rx, ry, rz = w * rx, w * ry, w * rz
        # the hips in the avatar frame (P = the parent's rest world rotation = PINV⁻¹), the
        # root on top, back into the parent's frame
        x = quat_rotate(-px, -py, -pz, pw, trs[s, TRS_T], trs[s, TRS_T + 1], trs[s, TRS_T + 2])
        x = quat_rotate(rq[0], rq[1], rq[2], rq[3], x[0], x[1], x[2])
        v = quat_rotate(px, py, pz, pw, x[0] + rx, x[1] + ry, x[2] + rz)
        q = qmul(-px, -py, -pz, pw, trs[s, TRS_Q], trs[s, TRS_Q + 1], trs[s, TRS_Q + 2], trs[s, TRS_Q + 3])
        q = qmul(rq[0], rq[1], rq[2], rq[3], q[0], q[1], q[2], q[3])
        q = qmul(px, py, pz, pw, q[0], q[1], q[2], q[3])
        for j in range(3):
            trs[s, TRS_T + j] = v[j]
        for j in range(4):
            trs[s, TRS_Q + j] = q[j]


# ============================================================== posing
@njit(inline="always", cache=True)
def pose_row(world, node, src, slot, rows, r, trs):
    """W[node] = W[src] · M · L(slot) with M the first 12 values of ``rows[r]`` (3x4,
    row-major), W[−1] = I and L(−1) = I."""
    m = row34(rows, r, 0)
    if src >= 0:
        m = mul34(world34(world, src), m)
    if slot >= 0:
        m = mul34(m, trs34(trs, slot))
    put_world(world, node, m)


@njit(inline="always", cache=True)
def pose_plan(world, ops, mats, trs):
    """Run the plan: for every row p in order, W[node] = W[src] · M_p · L(slot)."""
    for p in range(ops.shape[0]):
        pose_row(world, ops[p, OP_NODE], ops[p, OP_SRC], ops[p, OP_SLOT], mats, p, trs)


@njit(inline="always", cache=True)
def constrain(world, steps, vals, trs):
    """Run a constraint plan in order: a pose row W[node] = W[src] · M · L(slot) (M the first
    12 values of its row), or a constraint step that writes its destination's rotation into
    ``trs`` (:func:`runtime.rig.constraint_kernels.constraint_step`)."""
    for k in range(steps.shape[0]):
        if steps[k, STEP_KIND] == STEP_POSE:
            pose_row(world, steps[k, ST_NODE], steps[k, ST_SRC], steps[k, ST_SLOT], vals, k, trs)
        else:
            constraint_step(world, steps, vals, trs, k)


@njit(inline="always", cache=True)
def forward_kinematics(world, fk, base, trs):
    """Whole skeleton, parents first: W[n] = W[parent] · L_n, L_n the driven TRS of its slot
    or its base local matrix."""
    for r in range(fk.shape[0]):
        n = fk[r, 0]
        parent = fk[r, 1]
        slot = fk[r, 2]
        if slot >= 0:
            m = trs34(trs, slot)
        else:
            m = row34(base, n, 0)
        if parent >= 0:
            m = mul34(world34(world, parent), m)
        put_world(world, n, m)


# ============================================================== entry points
@njit(cache=True, _nrt=False)
def head_drive_kernel(rotation, translation, use_t, hp, hs, trs):
    """The head drive alone (see :func:`head_drive`)."""
    head_drive(rotation, translation, use_t, hp, hs, trs)
    return 0


@njit(cache=True, _nrt=False)
def constrain_kernel(world, steps, vals, trs):
    """A constraint plan alone (see :func:`constrain`)."""
    constrain(world, steps, vals, trs)
    return 0


@njit(cache=True, _nrt=False)
def pose_plan_kernel(world, ops, mats, trs):
    """The pose plan alone (see :func:`pose_plan`)."""
    pose_plan(world, ops, mats, trs)
    return 0


@njit(cache=True, _nrt=False)
def forward_kinematics_kernel(world, fk, base, trs):
    """Whole-skeleton FK alone (see :func:`forward_kinematics`)."""
    forward_kinematics(world, fk, base, trs)
    return 0


@njit(cache=True, _nrt=False)
def drive_and_pose_kernel(rotation, translation, use_t, hp, hs, gaze, bd, trs, steps, vals, ops, mats, world):
    """One substep's posing: head drive, eyes, a network body on top, the node constraints the
    targets depend on, then the plan's world matrices."""
    head_drive(rotation, translation, use_t, hp, hs, trs)
    eye_drive(gaze, hp, hs, trs)
    body_drive(bd, hp, hs, trs)
    constrain(world, steps, vals, trs)
    pose_plan(world, ops, mats, trs)
    return 0


@njit(cache=True, _nrt=False)
def drive_and_fk_kernel(rotation, translation, use_t, hp, hs, gaze, bd, trs, steps, vals, fk, base, world):
    """One drawn frame's body pose: head drive, eyes, a network body on top, every node
    constraint, then whole-skeleton FK."""
    head_drive(rotation, translation, use_t, hp, hs, trs)
    eye_drive(gaze, hp, hs, trs)
    body_drive(bd, hp, hs, trs)
    constrain(world, steps, vals, trs)
    forward_kinematics(world, fk, base, trs)
    return 0


@njit(cache=True, _nrt=False)
def constrain_and_pose_kernel(trs, steps, vals, ops, mats, world):
    """The node constraints the targets depend on, then the plan's world matrices (after a
    drive that wrote ``trs``: :func:`runtime.rig.motion_kernels.motion_drive_kernel`)."""
    constrain(world, steps, vals, trs)
    pose_plan(world, ops, mats, trs)
    return 0


@njit(cache=True, _nrt=False)
def constrain_and_fk_kernel(trs, steps, vals, fk, base, world):
    """Every node constraint, then whole-skeleton FK (after a drive that wrote ``trs``)."""
    constrain(world, steps, vals, trs)
    forward_kinematics(world, fk, base, trs)
    return 0


# numba checks only this file's stamp: the rig's cache folder also holds
# runtime.rig.motion_kernels, which inlines this file, and the constraint steps come from
# runtime.rig.constraint_kernels (every *kernels.py of this folder is watched); the body buffer's
# layout constants are folded in from tracking.body; refresh adds the shared math
KERNEL_SOURCES: list[Path] = sorted(Path(__file__).parent.glob("*kernels.py")) + [Path(tracking.body.__file__)]
refresh(drive_and_pose_kernel, KERNEL_SOURCES)
