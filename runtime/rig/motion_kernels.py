"""Compiled body motion (numba, ``cache=True``, no NRT): clip sampling, cross-fading, the
tracked head on top, the node constraints, then the pose plan or whole-skeleton FK — one call
per substep and per drawn frame, allocating nothing (the Python side is :mod:`runtime.rig.motion`;
the constraint plans ``steps``/``vals`` are :class:`runtime.rig.constraints.ConstraintPlan`'s).

Data (C-contiguous; layouts are the constants below):

- a *bound clip* is two flat arrays: ``cf`` float64 = [duration, drift (3), times (K),
  local rotations (K·B·4), hips local translations (K·3)] and ``ci`` int64 = [K, B, hips
  slot (−1: none), loop, P, slots (B), substep columns (P)] — B columns (the clip's nodes),
  their driven slots, and the P columns the substep's pose plan reads;
- ``tl`` int64 and ``tf`` float64: the timeline (clip A playing, clip B fading out, the
  fade, the head layering, the cursors) and, from ``TL_HEAD``, the substep's slots
  (``TL_NSUB`` of them);
- ``buf`` (3, D, 10): the base pose rows (TRS layout of :mod:`runtime.rig.kernels`) and two
  scratch rows sets for the cross-fade;
- the head drive's ``hp``/``hs`` (:class:`runtime.rig.drive.HeadDrive`), the pose plan's
  ``ops``/``mats``, the FK rows ``fk``/``base34``, the driven ``trs`` and ``world``.

Clip time: τ = τ0 + (t − t_anchor) · 1e-9 · speed (t integer ns); a looping clip wraps τ
into [0, T) and adds its root-motion drift once per completed loop; a one-shot clip holds
its ends. Keys: k with times[k] <= τ < times[k+1], u = (τ − t_k)/(t_{k+1} − t_k);
rotations by three.js's ``Quaternion.slerpFlat`` arithmetic (exact ends, atan2 angle,
normalised lerp only below sin² θ = 2.2e-16), translations linearly. Fade weight
w = smoothstep((t − t_fade)/fade) of A over B; rotations slerp(B, A, w), translations
lerp — hair (authored) slots too: an outgoing clip's hair eases to the rest pose over the
fade, and the solver takes it back there (:mod:`runtime.rig.motion`).

Head on top (docs/design.md §10 "tracked neck/head on top"), with q the tracked rotation,
d = slerp(I, q, neck_share), c_n, c_h the clip's normalized neck and head rotations
(n = R0_parent · L · R0_bone⁻¹):

    additive:  n_neck = d · c_n,   n_head = c_n⁻¹ · d⁻¹ · q · c_n · c_h   (head = q · c_n · c_h)
    override:  n_neck = d,         n_head = d⁻¹ · q                          (the head drive's)

and L = R0_parent⁻¹ · n · R0_bone; the tracked lean is added to the clip's hips translation.
"""

from __future__ import annotations

import math

from numba import njit

from avatars.math_kernels import cursor_search, qmul, slerp_flat_three, slerp_from_identity

from .kernels import (
    HP_NECK_SHARE, HP_R0_HEAD, HP_R0_NECK, HP_R0_PARENT_INV, HS_HEAD, HS_HIPS, HS_NECK, TRS_Q, TRS_T, TRS_W,
    body_drive, eye_drive, hips_lean,
)

# ------------------------------------------------------------------ bound clip, int part
CI_K, CI_B, CI_HIPS, CI_LOOP, CI_P, CI_HEAD = 0, 1, 2, 3, 4, 5
# ------------------------------------------------------------------ bound clip, float part
CF_DURATION, CF_DRIFT, CF_HEAD = 0, 1, 4
# ------------------------------------------------------------------ timeline, int64
TL_A_ANCHOR = 0     # loop time (ns) at which clip A is at τ0_A
TL_B_ANCHOR = 1     # ... clip B
TL_FADE_START = 2   # loop time (ns) the cross-fade from B to A starts
TL_FADE_NS = 3      # its length (ns); 0: A at once
TL_B_ON = 4         # 1 while clip B still fades out
TL_LAYER = 5        # 0 additive, 1 override
TL_CUR_A = 6        # key cursors
TL_CUR_B = 7
TL_D = 8            # driven slots
TL_NSUB = 9         # substep slots listed from TL_HEAD
TL_HEAD = 16        # the substep's slots (TL_NSUB)
LAYER_ADDITIVE, LAYER_OVERRIDE = 0, 1
# ------------------------------------------------------------------ timeline, float64
TF_A_TAU0, TF_A_SPEED, TF_B_TAU0, TF_B_SPEED = 0, 1, 2, 3
TF_W = 4
# ------------------------------------------------------------------ buffers
BUF_BASE, BUF_A, BUF_B = 0, 1, 2


@njit(inline="always", cache=True)
def clip_time(t_ns, anchor, tau0, speed, duration, loop):
    """(τ wrapped or clamped, completed loops) at loop time ``t_ns`` (module doc)."""
    tau = tau0 + float(t_ns - anchor) * 1e-9 * speed
    if loop != 0 and duration > 0.0:
        n = math.floor(tau / duration)
        tau -= n * duration
        if tau >= duration:
            tau = 0.0
            n += 1.0
        return tau, n
    return min(max(tau, 0.0), duration), 0.0


@njit(inline="always", cache=True)
def locate(cf, ci, tau, tl, cur):
    """(k, u) with times[k] <= τ < times[k+1] (k = K−1, u = 0 at or past the end); ``tl[cur]``
    keeps the last k (sampling moves forward)."""
    kk = ci[CI_K]
    o = CF_HEAD
    k = cursor_search(cf, o, kk, tau, tl[cur])
    tl[cur] = k
    if k + 1 >= kk or tau <= cf[o + k]:
        return k, 0.0
    return k, (tau - cf[o + k]) / (cf[o + k + 1] - cf[o + k])


@njit(inline="always", cache=True)
def sample_into(cf, ci, tau, loops, tl, cur, out, all_cols):
    """Write the clip's columns at clip time τ into rows ``out`` (D, 10) by slot: all columns,
    or the substep's."""
    kk, bb, hs = ci[CI_K], ci[CI_B], ci[CI_HIPS]
    k, u = locate(cf, ci, tau, tl, cur)
    k1 = min(k + 1, kk - 1)
    o_rot = CF_HEAD + kk
    o_hips = o_rot + kk * bb * 4
    n = bb if all_cols else ci[CI_P]
    for j in range(n):
        c = j if all_cols else ci[CI_HEAD + bb + j]
        s = ci[CI_HEAD + c]
        a = o_rot + (k * bb + c) * 4
        b = o_rot + (k1 * bb + c) * 4
        q = slerp_flat_three(cf[a], cf[a + 1], cf[a + 2], cf[a + 3], cf[b], cf[b + 1], cf[b + 2], cf[b + 3],
                             u)
        for i in range(4):
            out[s, TRS_Q + i] = q[i]
    if hs >= 0:
        a = o_hips + k * 3
        b = o_hips + k1 * 3
        for i in range(3):
            out[hs, TRS_T + i] = cf[a + i] + (cf[b + i] - cf[a + i]) * u + loops * cf[CF_DRIFT + i]


@njit(inline="always", cache=True)
def motion_rows(t_ns, tl, tf, fa, ia, fb, ib, buf, trs, all_rows):
    """Clip A (and B fading out) at loop time ``t_ns`` into ``trs`` (every driven slot, or the
    substep's slots)."""
    d = tl[TL_D]
    nsub = tl[TL_NSUB]
    o_sub = TL_HEAD
    n = d if all_rows else nsub
    w = 1.0
    if tl[TL_B_ON] != 0:
        fl = tl[TL_FADE_NS]
        if fl > 0:
            x = min(max(float(t_ns - tl[TL_FADE_START]) / float(fl), 0.0), 1.0)
            w = x * x * (3.0 - 2.0 * x)
        elif t_ns < tl[TL_FADE_START]:
            w = 0.0
    tf[TF_W] = w
    ta, la = clip_time(t_ns, tl[TL_A_ANCHOR], tf[TF_A_TAU0], tf[TF_A_SPEED], fa[CF_DURATION], ia[CI_LOOP])
    if w >= 1.0:
        for r in range(n):
            s = r if all_rows else tl[o_sub + r]
            for i in range(TRS_W):
                trs[s, i] = buf[BUF_BASE, s, i]
        sample_into(fa, ia, ta, la, tl, TL_CUR_A, trs, all_rows)
        return
    tb, lb = clip_time(t_ns, tl[TL_B_ANCHOR], tf[TF_B_TAU0], tf[TF_B_SPEED], fb[CF_DURATION], ib[CI_LOOP])
    for r in range(n):
        s = r if all_rows else tl[o_sub + r]
        for i in range(TRS_W):
            buf[BUF_A, s, i] = buf[BUF_BASE, s, i]
            buf[BUF_B, s, i] = buf[BUF_BASE, s, i]
    sample_into(fa, ia, ta, la, tl, TL_CUR_A, buf[BUF_A], all_rows)
    sample_into(fb, ib, tb, lb, tl, TL_CUR_B, buf[BUF_B], all_rows)
    for r in range(n):
        s = r if all_rows else tl[o_sub + r]
        q = slerp_flat_three(buf[BUF_B, s, TRS_Q], buf[BUF_B, s, TRS_Q + 1], buf[BUF_B, s, TRS_Q + 2],
                             buf[BUF_B, s, TRS_Q + 3], buf[BUF_A, s, TRS_Q], buf[BUF_A, s, TRS_Q + 1],
                             buf[BUF_A, s, TRS_Q + 2], buf[BUF_A, s, TRS_Q + 3], w)
        for i in range(TRS_W):
            trs[s, i] = buf[BUF_B, s, i] + (buf[BUF_A, s, i] - buf[BUF_B, s, i]) * w
        for i in range(4):
            trs[s, TRS_Q + i] = q[i]


@njit(inline="always", cache=True)
def head_on_top(rotation, translation, use_t, hp, hs, layer, trs):
    """The tracked neck/head and lean on top of the clip's pose (module doc)."""
    qx, qy, qz, qw = rotation[0], rotation[1], rotation[2], rotation[3]
    head, neck = hs[HS_HEAD], hs[HS_NECK]
    pi = HP_R0_PARENT_INV
    # rest world rotations: P (the neck's parent, or the head's without a neck), N, H
    px, py, pz, pw = -hp[pi], -hp[pi + 1], -hp[pi + 2], hp[pi + 3]
    nx, ny, nz, nw = hp[HP_R0_NECK], hp[HP_R0_NECK + 1], hp[HP_R0_NECK + 2], hp[HP_R0_NECK + 3]
    hx, hy, hz, hw = hp[HP_R0_HEAD], hp[HP_R0_HEAD + 1], hp[HP_R0_HEAD + 2], hp[HP_R0_HEAD + 3]
    lh = (trs[head, TRS_Q], trs[head, TRS_Q + 1], trs[head, TRS_Q + 2], trs[head, TRS_Q + 3])
    if neck >= 0:
        ln = (trs[neck, TRS_Q], trs[neck, TRS_Q + 1], trs[neck, TRS_Q + 2], trs[neck, TRS_Q + 3])
        d = slerp_from_identity(qx, qy, qz, qw, hp[HP_NECK_SHARE])
        if layer == LAYER_ADDITIVE:
            t = qmul(px, py, pz, pw, ln[0], ln[1], ln[2], ln[3])
            cn = qmul(t[0], t[1], t[2], t[3], -nx, -ny, -nz, nw)            # c_n = P · L_n · N⁻¹
            t = qmul(nx, ny, nz, nw, lh[0], lh[1], lh[2], lh[3])
            ch = qmul(t[0], t[1], t[2], t[3], -hx, -hy, -hz, hw)            # c_h = N · L_h · H⁻¹
            n_n = qmul(d[0], d[1], d[2], d[3], cn[0], cn[1], cn[2], cn[3])  # d · c_n
            c = qmul(cn[0], cn[1], cn[2], cn[3], ch[0], ch[1], ch[2], ch[3])
            g = qmul(qx, qy, qz, qw, c[0], c[1], c[2], c[3])                 # q · c_n · c_h
            n_h = qmul(-n_n[0], -n_n[1], -n_n[2], n_n[3], g[0], g[1], g[2], g[3])
        else:
            n_n = d
            n_h = qmul(-d[0], -d[1], -d[2], d[3], qx, qy, qz, qw)
        t = qmul(-px, -py, -pz, pw, n_n[0], n_n[1], n_n[2], n_n[3])
        ln2 = qmul(t[0], t[1], t[2], t[3], nx, ny, nz, nw)                   # L = P⁻¹ · n · N
        t = qmul(-nx, -ny, -nz, nw, n_h[0], n_h[1], n_h[2], n_h[3])
        lh2 = qmul(t[0], t[1], t[2], t[3], hx, hy, hz, hw)
        for j in range(4):
            trs[neck, TRS_Q + j] = ln2[j]
            trs[head, TRS_Q + j] = lh2[j]
    else:
        if layer == LAYER_ADDITIVE:
            t = qmul(px, py, pz, pw, lh[0], lh[1], lh[2], lh[3])
            ch = qmul(t[0], t[1], t[2], t[3], -hx, -hy, -hz, hw)
            n_h = qmul(qx, qy, qz, qw, ch[0], ch[1], ch[2], ch[3])
        else:
            n_h = (qx, qy, qz, qw)
        t = qmul(-px, -py, -pz, pw, n_h[0], n_h[1], n_h[2], n_h[3])
        lh2 = qmul(t[0], t[1], t[2], t[3], hx, hy, hz, hw)
        for j in range(4):
            trs[head, TRS_Q + j] = lh2[j]
    hips = hs[HS_HIPS]
    if hips >= 0 and use_t:
        lx, ly, lz = hips_lean(translation, hp)
        trs[hips, TRS_T] += lx
        trs[hips, TRS_T + 1] += ly
        trs[hips, TRS_T + 2] += lz


# ============================================================== entry points
@njit(cache=True, _nrt=False)
def motion_drive_kernel(t_ns, tl, tf, fa, ia, fb, ib, buf, rotation, translation, gaze, bd, hp, hs, trs, all_rows):
    """The driven rows of a substep (``all_rows`` False: the substep's slots) or a drawn frame
    (True), docs/design.md §10: the clips, the tracked head on top, the eyes, a network body on top.
    The node constraints and the posing follow in
    :func:`runtime.rig.kernels.constrain_and_pose_kernel` / ``constrain_and_fk_kernel`` (two
    calls: one call with every array would pass CPython's 19-argument tuple free list, and
    allocate)."""
    motion_rows(t_ns, tl, tf, fa, ia, fb, ib, buf, trs, all_rows)
    head_on_top(rotation, translation, True, hp, hs, tl[TL_LAYER], trs)
    eye_drive(gaze, hp, hs, trs)
    body_drive(bd, hp, hs, trs)
    return 0


@njit(cache=True, _nrt=False)
def motion_rows_kernel(t_ns, tl, tf, fa, ia, fb, ib, buf, trs, all_rows):
    """The clips alone into ``trs`` (tests, checks)."""
    motion_rows(t_ns, tl, tf, fa, ia, fb, ib, buf, trs, all_rows)
    return 0
