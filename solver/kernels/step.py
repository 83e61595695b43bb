"""Compiled substep kernels (numba, ``cache=True``): one call per substep, no allocation.

Entry points (all take ``world`` (N, 4, 4) float64 animated world matrices of the skeleton,
hair joints at their rest local rotations, and the packed buffers ``F`` float64 / ``I``
int64 described in :mod:`solver.layout`):

- :func:`step_kernel` advances one substep of h = F[G_H] seconds (docs/design.md §4.1-§4.4);
- :func:`reset_kernel` puts every tail at rest under ``world`` with zero velocity;
- :func:`step_many_kernel` runs several substeps in one call.

The drawing side (tails -> joint frames for skinning) is :mod:`solver.kernels.pose`.

Small 3x4 affine matrices travel as 12-tuples (row-major, column-vector convention) and
vectors as 3-tuples, which numba keeps in registers: the substep path allocates nothing.
The compiled entry points are built without numba's reference counting (``_nrt=False``):
they only index views of the arrays they are given, and the NRT incref/decref calls numba
puts around every inlined helper that takes an array cost ~13 % of a substep (measured
with ``perf``; results bit-identical). An allocation in a kernel now fails to compile.
The algebra lives in :mod:`avatars.math_kernels`, the per-link spring step in :mod:`solver.kernels.spring`,
the contact geometry in :mod:`solver.kernels.contact`, the per-link contact resolution in
:mod:`solver.kernels.resolve`, the chain relaxation after a contact in :mod:`solver.kernels.relax` and
the sideways links of linked sheets in :mod:`solver.kernels.sheets`.

A chain is stepped in two loops: a short one (root, spring step, broad phase and an exact
"can anything touch?" test) for the links that need no contact work — most links in most
substeps — and the full one from the first link that does. Both use the same inlined
pieces, so they give the same bits; the split exists because the contact code inlined in a
loop slows the whole loop (~20 % of the spring step, measured).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numba import njit

from avatars.kernel_cache import refresh
from avatars.math_kernels import (
    EPS, IDENT, arc_quat, det3, inv34, inv_vec, mul34, pt, put34, rotate_frame, row34, vec, world34,
)

from .contact import contact, pair_depth
from .forces import add_forces, forces_now
from .inertia import carry_excess
from .limits import apply_limits
from .relax import _relax
from .sheets import sheet_limits, sheet_pass
from .spring import joint_frame, link_root, spring_tail, store_link
from .resolve import _candidates, _in_reach, _no_radial, _residual, _resolve
from ..layout import (
    AI, CF, CI, CI_NODE, CI_SHAPE, C_BC, C_BR, C_NRM, C_OFF, C_RAD, C_TAIL, C_WA, C_WB, C_WN, C_WR, GF, G_BEND_COS,
    G_BEND_MAX, G_BEND_WP, G_CONTACT_TOL, G_H, G_TELEPORT, G_U_MIN, H_C, H_K, H_M, H_MAXIT, H_MODE, H_N_AUTO_RESET,
    H_N_CONTACT, H_N_CONTACT_TOTAL, H_N_ROOT_INSIDE, H_N_STEPS, H_N_UNRESOLVED, H_OF_CB, H_OF_CH, H_OF_COL, H_OF_G,
    H_OF_PAIRF, H_OF_PAR, H_OF_REST, H_OF_SCR, H_OF_ST, H_OI_AFF, H_OI_CAND, H_OI_CH, H_OI_COL, H_OI_PAIR, H_OI_SEG,
    H_L, H_OF_EXT, H_OF_FRC, H_P, H_RELAX, H_S, KF, KI, KI_ANCHOR, KI_CENTER, KI_SEG0, KI_SEG1, K_AMPREV, K_APREV,
    K_CPREV, G_VLIM, G_WLIM,
    K_DET0, K_S,
    MODE_REST_SHAPE, MODE_VRM, SF_PAR, SF_REST, SF_SCR, SF_ST, SHAPE_PLANE, SI, SI_AUTH, SI_FAST, SI_NEEDW, SI_P0,
    SI_P1, SI_REFMASK, S_HIT, S_TLOC, S_UNR, S_V, S_VDRAG, S_VEXT, S_VST, S_W, S_X, S_XP, W_NLIM, W_ON, WF, XF,
)


@njit(cache=True, _nrt=False)
def overlap_kernel(world, F, I, out):
    """Overlap depth (metres, > 0 overlapping) of every (segment, collider) reference at the
    current tails, measured exactly as the contact test sees it (no allowance); ``out`` (P,).
    Used at build time on the rest pose to set the allowances."""
    st, par, rst, scr, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    _update_colliders(world, col, coli, I[H_C], F[I[H_OF_CB]:I[H_OF_CB] + 4 * I[H_C]])
    segment_wise = I[H_MODE] != MODE_VRM
    for k in range(I[H_K]):
        s = (abs(det3(world34(world, chi[k, KI_ANCHOR]))) / ch[k, K_DET0]) ** (1.0 / 3.0)
        for i in range(chi[k, KI_SEG0], chi[k, KI_SEG1]):
            w = row34(scr, i, S_W)
            ox, oy, oz = w[3], w[7], w[11]
            rh = par[i, S_HIT] * s
            for p in range(segi[i, SI_P0], segi[i, SI_P1]):
                c = pairs[p]
                out[p] = pair_depth(coli[c, CI_SHAPE], col, c, ox, oy, oz, st[i, S_X], st[i, S_X + 1],
                                     st[i, S_X + 2], rh, segment_wise)
    return 0


# ============================================================== sections
@njit(inline="always", cache=True)
def _sections(F, I):
    """Views of the sections (solver.layout): segment state, parameters, rest constants,
    scratch (S, stride each), colliders, chains, globals, segment / collider / chain ints,
    collider references, affected nodes."""
    S = I[H_S]
    C = I[H_C]
    K = I[H_K]
    P = I[H_P]
    M = I[H_M]
    st = F[I[H_OF_ST]:I[H_OF_ST] + S * SF_ST].reshape((S, SF_ST))
    # sections that share rows (solver.layout.ROW_GROUPS) share one view, decided at compile
    # time: LLVM keeps separate views apart even when they are equal, and every extra base
    # pointer in the link loops costs (4 views of one block: 1.03-1.07x the frame, measured)
    if H_OF_PAR == H_OF_ST:
        par = st
    else:
        par = F[I[H_OF_PAR]:I[H_OF_PAR] + S * SF_PAR].reshape((S, SF_PAR))
    if H_OF_REST == H_OF_ST:
        rst = st
    elif H_OF_REST == H_OF_PAR:
        rst = par
    else:
        rst = F[I[H_OF_REST]:I[H_OF_REST] + S * SF_REST].reshape((S, SF_REST))
    if H_OF_SCR == H_OF_ST:
        scr = st
    elif H_OF_SCR == H_OF_PAR:
        scr = par
    elif H_OF_SCR == H_OF_REST:
        scr = rst
    else:
        scr = F[I[H_OF_SCR]:I[H_OF_SCR] + S * SF_SCR].reshape((S, SF_SCR))
    col = F[I[H_OF_COL]:I[H_OF_COL] + C * CF].reshape((C, CF))
    ch = F[I[H_OF_CH]:I[H_OF_CH] + K * KF].reshape((K, KF))
    g = F[I[H_OF_G]:I[H_OF_G] + GF]
    segi = I[I[H_OI_SEG]:I[H_OI_SEG] + S * SI].reshape((S, SI))
    coli = I[I[H_OI_COL]:I[H_OI_COL] + C * CI].reshape((C, CI))
    chi = I[I[H_OI_CH]:I[H_OI_CH] + K * KI].reshape((K, KI))
    pairs = I[I[H_OI_PAIR]:I[H_OI_PAIR] + P]
    aff = I[I[H_OI_AFF]:I[H_OI_AFF] + M * AI].reshape((M, AI))
    return st, par, rst, scr, col, ch, g, segi, coli, chi, pairs, aff


@njit(inline="always", cache=True)
def _update_colliders(world, col, coli, C, cb):
    """World head/tail/radius/normal of every collider, and the compact bounding spheres
    ``cb`` (4 C,), struct of arrays: centre x (C), y (C), z (C), radius (C) (infinite for
    planes), so that the broad phase tests four colliders per vector instruction."""
    prev = -2
    m = IDENT
    sc = 1.0
    for c in range(C):
        node = coli[c, CI_NODE]
        if node != prev:
            m = world34(world, node)
            sc = abs(det3(m)) ** (1.0 / 3.0)
            prev = node
        a = pt(m, col[c, C_OFF], col[c, C_OFF + 1], col[c, C_OFF + 2])
        b = pt(m, col[c, C_TAIL], col[c, C_TAIL + 1], col[c, C_TAIL + 2])
        r = col[c, C_RAD] * sc
        for j in range(3):
            col[c, C_WA + j] = a[j]
            col[c, C_WB + j] = b[j]
        col[c, C_WR] = r
        if coli[c, CI_SHAPE] == SHAPE_PLANE:
            n = vec(m, col[c, C_NRM], col[c, C_NRM + 1], col[c, C_NRM + 2])
            nn = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
            if nn < EPS:
                nn = 1.0
            for j in range(3):
                col[c, C_WN + j] = n[j] / nn
            col[c, C_BR] = -1.0
            cb[c] = a[0]
            cb[C + c] = a[1]
            cb[2 * C + c] = a[2]
            cb[3 * C + c] = np.inf
        else:
            hx, hy, hz = 0.5 * (b[0] - a[0]), 0.5 * (b[1] - a[1]), 0.5 * (b[2] - a[2])
            br = math.sqrt(hx * hx + hy * hy + hz * hz) + r
            col[c, C_BC] = a[0] + hx
            col[c, C_BC + 1] = a[1] + hy
            col[c, C_BC + 2] = a[2] + hz
            col[c, C_BR] = br
            cb[c] = a[0] + hx
            cb[C + c] = a[1] + hy
            cb[2 * C + c] = a[2] + hz
            cb[3 * C + c] = br


@njit(inline="always", cache=True)
def _solved_frame(h, rst, i, ox, oy, oz, xx, xy, xz):
    """Joint frame after the shortest-arc rotation from the rest axis to the tail direction
    (three-vrm's local formulation, exact for scaled frames); returns (frame, local quat)."""
    tx, ty, tz = rst[i, S_TLOC], rst[i, S_TLOC + 1], rst[i, S_TLOC + 2]
    tn = math.sqrt(tx * tx + ty * ty + tz * tz)
    bx, by, bz = inv_vec(h, xx - ox, xy - oy, xz - oz)
    bn = math.sqrt(bx * bx + by * by + bz * bz)
    if tn < EPS or bn < EPS:
        return h, (0.0, 0.0, 0.0, 1.0)
    q = arc_quat(tx / tn, ty / tn, tz / tn, bx / bn, by / bn, bz / bn)
    return rotate_frame(h, q), q


# ============================================================== reset
@njit(cache=True, _nrt=False)
def reset_kernel(world, F, I):
    """Every tail at rest under ``world``, velocity zero, history cleared. Allocation-free."""
    st, par, rst, scr, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    K = I[H_K]
    for k in range(K):
        anchor = chi[k, KI_ANCHOR]
        m = world34(world, anchor)
        ch[k, K_APREV] = m[3]
        ch[k, K_APREV + 1] = m[7]
        ch[k, K_APREV + 2] = m[11]
        ch[k, K_S] = (abs(det3(m)) / ch[k, K_DET0]) ** (1.0 / 3.0)
        put34(ch, k, K_CPREV, world34(world, chi[k, KI_CENTER]))
        put34(ch, k, K_AMPREV, m)
        for i in range(chi[k, KI_SEG0], chi[k, KI_SEG1]):
            hm = joint_frame(world, rst, scr, segi, i)
            x = pt(hm, rst[i, S_TLOC], rst[i, S_TLOC + 1], rst[i, S_TLOC + 2])
            for j in range(3):
                st[i, S_X + j] = x[j]
                st[i, S_XP + j] = x[j]
                st[i, S_V + j] = 0.0
            put34(scr, i, S_W, hm)
    return 0


# ============================================================== step
@njit(cache=True, _nrt=False)
def step_kernel(world, F, I):
    """Advance every chain by one substep (docs/design.md §4.1 rest-shape, §4.2 legacy, or the VRM
    Verlet of three-vrm/UniVRM), with colliders sampled from ``world``.

    Returns 1 when an automatic reset (teleport) happened instead of a step, else 0.
    """
    st, par, rst, scr, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    C = I[H_C]
    K = I[H_K]
    mode = I[H_MODE]
    maxit = I[H_MAXIT]
    h = g[G_H]
    inv_h = 1.0 / h
    tele = g[G_TELEPORT]
    tol = g[G_CONTACT_TOL]
    u_min = g[G_U_MIN]
    relax = I[H_RELAX]
    bend_max = g[G_BEND_MAX]
    bend_cos = g[G_BEND_COS]
    bend_wp = g[G_BEND_WP]
    allow = F[I[H_OF_PAIRF]:I[H_OF_PAIRF] + I[H_P]]
    cb = F[I[H_OF_CB]:I[H_OF_CB] + 4 * C]
    cand = I[I[H_OI_CAND]:I[H_OI_CAND] + C + 1]
    I[H_N_STEPS] += 1
    n_contact = 0
    n_unresolved = 0
    n_root_inside = 0

    # ---- chain scale and teleport detection (anchor jump within one substep)
    jumped = False
    prev_anchor = -2
    m = IDENT
    s = 1.0
    for k in range(K):
        anchor = chi[k, KI_ANCHOR]
        if anchor != prev_anchor:
            m = world34(world, anchor)
            s = (abs(det3(m)) / ch[k, K_DET0]) ** (1.0 / 3.0)
            prev_anchor = anchor
        ch[k, K_S] = s
        dx = m[3] - ch[k, K_APREV]
        dy = m[7] - ch[k, K_APREV + 1]
        dz = m[11] - ch[k, K_APREV + 2]
        if dx * dx + dy * dy + dz * dz > (tele * s) * (tele * s):
            jumped = True
        ch[k, K_APREV] = m[3]
        ch[k, K_APREV + 1] = m[7]
        ch[k, K_APREV + 2] = m[11]
    if jumped:
        reset_kernel(world, F, I)
        I[H_N_AUTO_RESET] += 1
        I[H_N_CONTACT] = 0
        I[H_N_UNRESOLVED] = 0
        I[H_N_ROOT_INSIDE] = 0
        return 1

    _update_colliders(world, col, coli, C, cb)
    segment_wise = mode != MODE_VRM
    # external forces and angle limits (solver.kernels.forces / .limits): called, not inlined
    frc = F[I[H_OF_FRC]:I[H_OF_FRC] + WF]
    ext = F[I[H_OF_EXT]:I[H_OF_EXT] + I[H_S] * XF].reshape((I[H_S], XF))
    forces_on = frc[W_ON] != 0.0
    limits_on = frc[W_NLIM] > 0.0
    wx, wy, wz, ix, iy, iz = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if forces_on:
        wx, wy, wz, ix, iy, iz = forces_now(frc, I[H_N_STEPS], h)

    vlim = g[G_VLIM]
    wlim = g[G_WLIM]
    for k in range(K):
        s = ch[k, K_S]
        s0 = chi[k, KI_SEG0]
        s1 = chi[k, KI_SEG1]
        # ---- centre space: carry the tail history with the centre node (three-vrm "center")
        cn = chi[k, KI_CENTER]
        if cn >= 0:
            cm = world34(world, cn)
            d = mul34(cm, inv34(row34(ch, k, K_CPREV)))
            put34(ch, k, K_CPREV, cm)
            # the speed limits see the anchor's motion in centre space
            put34(ch, k, K_AMPREV, mul34(d, row34(ch, k, K_AMPREV)))
            for i in range(s0, s1):
                x = pt(d, st[i, S_X], st[i, S_X + 1], st[i, S_X + 2])
                xp = pt(d, st[i, S_XP], st[i, S_XP + 1], st[i, S_XP + 2])
                v = vec(d, st[i, S_V], st[i, S_V + 1], st[i, S_V + 2])
                for j in range(3):
                    st[i, S_X + j] = x[j]
                    st[i, S_XP + j] = xp[j]
                    st[i, S_V + j] = v[j]
        ma = world34(world, chi[k, KI_ANCHOR])
        if mode != MODE_VRM:
            # ---- speed limits: the excess of a fast anchor motion carries the chain rigidly
            carry_excess(st, ch, k, ma, s0, s1, h, vlim * s, wlim)
        put34(ch, k, K_AMPREV, ma)
        if forces_on:
            add_forces(st, ext, segi, s0, s1, h, mode, wx, wy, wz, ix, iy, iz)
        chain_hits = 0
        chain_unres = 0
        lhx, lhy, lhz = 0.0, 0.0, 0.0      # the previous link's final tail
        first = s0
        handed = False                     # the short loop hands over a link in contact reach
        if mode != MODE_VRM:
            # ---- the short loop: links that need no contact work (most links, most substeps).
            # It stops at the first link that is authored or has a child reading its solved
            # frame (the full loop below does all of that link), or that may touch a collider
            # (its spring step and candidates are handed over). Kept apart because the
            # contact code in a loop slows all of it (~20 %).
            while first < s1:
                i = first
                if segi[i, SI_AUTH] != 0 or segi[i, SI_NEEDW] != 0:
                    break
                _, ox, oy, oz, px, py, pz, length = link_root(world, st, rst, scr, segi, i, s, s0, lhx, lhy, lhz)
                xx, xy, xz = st[i, S_X], st[i, S_X + 1], st[i, S_X + 2]
                hx, hy, hz = spring_tail(st, par, rst, i, ma, mode, s, h, ox, oy, oz, px, py, pz, xx, xy, xz, length)
                if segi[i, SI_P1] > segi[i, SI_P0]:
                    rh = par[i, S_HIT] * s
                    n_cand = _candidates(cb, C, segi[i, SI_REFMASK], ox, oy, oz, length + rh, segi, i, pairs, cand)
                    if n_cand > 0 and _in_reach(col, coli, pairs, cand, n_cand, ox, oy, oz, hx, hy, hz, length, rh):
                        handed = True
                        break
                store_link(st, scr, i, hx, hy, hz, (hx - xx) * inv_h, (hy - xy) * inv_h, (hz - xz) * inv_h, ox, oy,
                           oz, length, 0.0, 0.0)
                lhx, lhy, lhz = hx, hy, hz
                first += 1
        # ---- the full loop, from the first link that needs more than the spring step
        for i in range(first, s1):
            fast = segi[i, SI_FAST] != 0
            unr = 0
            nconv = 0.0
            stepped = handed
            if handed:
                # root, spring step and candidate list come from the short loop
                handed = False
                node_h = IDENT
            else:
                node_h, ox, oy, oz, px, py, pz, length = link_root(world, st, rst, scr, segi, i, s, s0, lhx, lhy, lhz)
                xx, xy, xz = st[i, S_X], st[i, S_X + 1], st[i, S_X + 2]
                if segi[i, SI_AUTH] != 0:
                    # authored motion wins: follow the animated tail, keep a consistent velocity
                    nx_, ny_, nz_ = ox + px, oy + py, oz + pz
                    store_link(st, scr, i, nx_, ny_, nz_, (nx_ - xx) * inv_h, (ny_ - xy) * inv_h,
                               (nz_ - xz) * inv_h, ox, oy, oz, length, 0.0, 0.0)
                    put34(scr, i, S_W, node_h)
                    lhx, lhy, lhz = nx_, ny_, nz_
                    continue
                rh = par[i, S_HIT] * s
                n_cand = 0
                if segi[i, SI_P1] > segi[i, SI_P0]:
                    n_cand = _candidates(cb, C, segi[i, SI_REFMASK], ox, oy, oz, length + rh, segi, i, pairs, cand)
            if mode == MODE_VRM:
                # ---- three-vrm / UniVRM Verlet, one step of h (stiffness and gravity per step)
                inv_l = 1.0 / length if length > EPS else 0.0
                stf = par[i, S_VST] * h * s * inv_l
                keep = 1.0 - par[i, S_VDRAG]
                ge = h * s
                yx = xx + (xx - st[i, S_XP]) * keep + px * stf + par[i, S_VEXT] * ge
                yy = xy + (xy - st[i, S_XP + 1]) * keep + py * stf + par[i, S_VEXT + 1] * ge
                yz = xz + (xz - st[i, S_XP + 2]) * keep + pz * stf + par[i, S_VEXT + 2] * ge
                dx, dy, dz = yx - ox, yy - oy, yz - oz
                dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                if dn > EPS:
                    hx, hy, hz = ox + dx * (length / dn), oy + dy * (length / dn), oz + dz * (length / dn)
                else:
                    hx, hy, hz = ox + px, oy + py, oz + pz
                for q in range(n_cand):
                    c = pairs[cand[q]]
                    cnx, cny, cnz, dep, _, hit, _ = contact(coli[c, CI_SHAPE], col, c, ox, oy, oz, hx, hy, hz,
                                                             rh, 0.0, False)
                    if hit:
                        # three-vrm: push the tail out along n, then restore the length
                        n_contact += 1
                        hx, hy, hz = hx + cnx * dep, hy + cny * dep, hz + cnz * dep
                        dx, dy, dz = hx - ox, hy - oy, hz - oz
                        dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                        if dn > EPS:
                            hx, hy, hz = ox + dx * (length / dn), oy + dy * (length / dn), oz + dz * (length / dn)
                vx, vy, vz = (hx - xx) * inv_h, (hy - xy) * inv_h, (hz - xz) * inv_h
            else:
                # ---- docs/design.md §4.1 / §4.2 spring step, then contact (§4.4)
                if not stepped:
                    hx, hy, hz = spring_tail(st, par, rst, i, ma, mode, s, h, ox, oy, oz, px, py, pz, xx, xy, xz,
                                             length)
                # velocity rebuilt from the length-projected position (docs/design.md §4.4)
                vx, vy, vz = (hx - xx) * inv_h, (hy - xy) * inv_h, (hz - xz) * inv_h
                if n_cand > 0:
                    v0x, v0y, v0z = vx, vy, vz
                    hx, hy, hz, vx, vy, vz, hits, converged, mx, my, mz, rin, _, _, _, _ = _resolve(
                        col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, vx, vy, vz, length, rh, s,
                        maxit, segment_wise, u_min)
                    n_root_inside += rin
                    if hits > 0:
                        chain_hits += hits
                        vx, vy, vz = _no_radial(ox, oy, oz, hx, hy, hz, vx, vy, vz)
                        # never leave faster than before the contact along the last correction
                        allowed = max(v0x * mx + v0y * my + v0z * mz, 0.0)
                        vm = vx * mx + vy * my + vz * mz
                        if vm > allowed:
                            vx, vy, vz = vx - (vm - allowed) * mx, vy - (vm - allowed) * my, vz - (vm - allowed) * mz
                    if hits > 0 and not converged:
                        nconv = 1.0
                        unr = _residual(col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, rh, s, tol,
                                        segment_wise)
                        chain_unres += unr
            store_link(st, scr, i, hx, hy, hz, vx, vy, vz, ox, oy, oz, length, unr, nconv)
            lhx, lhy, lhz = hx, hy, hz
            if segi[i, SI_NEEDW] != 0:
                if fast:
                    node_h = joint_frame(world, rst, scr, segi, i)
                w, _ = _solved_frame(node_h, rst, i, ox, oy, oz, hx, hy, hz)
                put34(scr, i, S_W, w)
        if chain_hits > 0 and relax > 0 and mode == MODE_REST_SHAPE:
            chain_hits += _relax(st, par, rst, scr, segi, col, coli, cb, C, pairs, allow, cand, ma, s0, s1, s, relax,
                                 bend_max, bend_cos, bend_wp, maxit, u_min, tol)
            chain_unres = 0
            for i in range(s0, s1):
                chain_unres += int(scr[i, S_UNR])
        if limits_on:
            apply_limits(world, st, rst, scr, segi, ext, s0, s1, mode, h)
        n_contact += chain_hits
        n_unresolved += chain_unres
    if I[H_L] > 0 and mode == MODE_REST_SHAPE:
        # linked sheets: across chains, after all of them (solver/kernels/sheets.py)
        sh_hits, sh_unres = sheet_pass(F, I, st, par, scr, segi, ch, chi, col, coli, cb, C, pairs, allow, cand,
                                       maxit, u_min, tol)
        n_contact += sh_hits
        n_unresolved += sh_unres
        if limits_on:
            sheet_limits(world, I, st, rst, scr, segi, chi, ext, mode, h)
    I[H_N_CONTACT] = n_contact
    I[H_N_CONTACT_TOTAL] += n_contact
    I[H_N_UNRESOLVED] = n_unresolved
    I[H_N_ROOT_INSIDE] = n_root_inside
    return 0


@njit(cache=True, _nrt=False)
def step_many_kernel(worlds, F, I):
    """Several substeps in one call: ``worlds`` (n, N, 4, 4), one animated pose per substep."""
    r = 0
    for n in range(worlds.shape[0]):
        r += step_kernel(worlds[n], F, I)
    return r


#: What the kernels of this folder (here and :mod:`.pose`) are built from besides their own files:
#: every module of the folder (the inlined pieces) and the packed layout (its constants are folded
#: into the machine code); :func:`avatars.kernel_cache.refresh` adds the shared math.
KERNEL_SOURCES: list[Path] = sorted(Path(__file__).parent.glob("*.py")) + [Path(__file__).parents[1] / "layout.py"]

# a change to an inlined helper module must not leave an old compiled kernel in use
refresh(step_kernel, KERNEL_SOURCES)
