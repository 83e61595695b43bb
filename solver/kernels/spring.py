"""The per-link pieces of a substep (numba, inlined into :func:`solver.kernels.step.step_kernel`).

:func:`joint_frame` (a joint's frame with its rest local rotation), :func:`link_root`
(where link i starts and how long it is), :func:`spring_tail` (the
docs/design.md §4.1 rest-shape / §4.2 legacy spring step with its length projection) and
:func:`store_link` (the link's new state and its per-substep scratch). The step kernel
runs them in two loops over a chain: a short one for links that need no contact work (most
of them) and the full one, with the contact projection, from the first link that does; the
pieces are shared so that both give the same bits.
"""

from __future__ import annotations

import math

from numba import njit

from avatars.math_kernels import EPS, IDENT, inv34, mul34, row34, vec, world34

from ..layout import (
    MODE_REST_SHAPE, SI_AUTH, SI_FAST, SI_NODE, SI_SPAR, S_B, S_DAMP, S_G, S_GPRE, S_K, S_L0, S_LEN, S_NCONV, S_O, S_REL, S_TLOC,
    S_UNR, S_V, S_W, S_X, S_XP,
)

# The segment sections (solver.layout): ``st`` state, ``par`` parameters, ``rst`` rest
# constants, ``scr`` scratch, each (S, stride) views of F indexed with their own constants.


@njit(inline="always", cache=True)
def joint_frame(world, rst, scr, segi, i):
    """World frame H of joint i with its rest local rotation: from the body when it hangs from
    the body, else carried by its solved simulated ancestor (authored joints: exact)."""
    sp = segi[i, SI_SPAR]
    node = segi[i, SI_NODE]
    if sp < 0:
        return world34(world, node)
    if segi[i, SI_AUTH] != 0:
        # authored: keep the animated local transforms below the solved ancestor
        d = mul34(row34(scr, sp, S_W), inv34(world34(world, segi[sp, SI_NODE])))
        return mul34(d, world34(world, node))
    return mul34(row34(scr, sp, S_W), row34(rst, i, S_REL))


@njit(inline="always", cache=True)
def link_root(world, st, rst, scr, segi, i, s, s0, lhx, lhy, lhz):
    """Root o of link i at this substep, the joint's frame H with its rest local rotation,
    the rest offset p carried by H, and the link length (metres, world).

    Fast path (a rest-shape joint at its simulated parent's tail): o is the parent's new
    tail — ``(lhx, lhy, lhz)`` when the parent is the previous link of the chain (still in
    registers), else read from its row; H is not composed (identity), p = 0 and the length is
    s L0. Otherwise H = :func:`joint_frame` and the length is |H p_local|.
    Returns (H (12-tuple), ox, oy, oz, px, py, pz, length)."""
    if segi[i, SI_FAST] != 0:
        sp = segi[i, SI_SPAR]
        if sp == i - 1 and i > s0:
            ox, oy, oz = lhx, lhy, lhz
        else:
            ox, oy, oz = st[sp, S_X], st[sp, S_X + 1], st[sp, S_X + 2]
        return IDENT, ox, oy, oz, 0.0, 0.0, 0.0, s * rst[i, S_L0]
    node_h = joint_frame(world, rst, scr, segi, i)
    px, py, pz = vec(node_h, rst[i, S_TLOC], rst[i, S_TLOC + 1], rst[i, S_TLOC + 2])
    return node_h, node_h[3], node_h[7], node_h[11], px, py, pz, math.sqrt(px * px + py * py + pz * pz)


@njit(inline="always", cache=True)
def spring_tail(st, par, rst, i, ma, mode, s, h, ox, oy, oz, px, py, pz, xx, xy, xz, length):
    """New tail of link i after one spring step of h seconds (docs/design.md §4.1 / §4.2).

    Rest-shape: the restoring target is the saved rest arc carried by the anchor frame
    ``ma`` (a = M_H b) with the gravity preload; legacy: the rest offset p carried by the
    parent's current frame. u = damp (v + h f), f = k (o + a − x) + s g − g_pre, then the
    tail x + h u is projected onto the sphere of radius ``length`` about o (degenerate: the
    rest direction). Returns (hx, hy, hz)."""
    if mode == MODE_REST_SHAPE:
        # restoring offset from the saved rest arc carried by the anchor frame
        ax_, ay_, az_ = vec(ma, rst[i, S_B], rst[i, S_B + 1], rst[i, S_B + 2])
        gpx, gpy, gpz = vec(ma, par[i, S_GPRE], par[i, S_GPRE + 1], par[i, S_GPRE + 2])
    else:
        # legacy: from the parent's current (already deflected) frame
        ax_, ay_, az_ = px, py, pz
        gpx, gpy, gpz = 0.0, 0.0, 0.0
    kk = par[i, S_K]
    damp = par[i, S_DAMP]
    # x + h u - o written as P + Q o: the root o (the parent's new tail, on the serial path
    # down the chain) enters with one multiply-add instead of seven dependent operations
    hd = h * damp
    hhd = h * hd
    qo = hhd * kk - 1.0
    px_ = xx + hd * st[i, S_V] + hhd * (kk * (ax_ - xx) + s * par[i, S_G] - gpx)
    py_ = xy + hd * st[i, S_V + 1] + hhd * (kk * (ay_ - xy) + s * par[i, S_G + 1] - gpy)
    pz_ = xz + hd * st[i, S_V + 2] + hhd * (kk * (az_ - xz) + s * par[i, S_G + 2] - gpz)
    dx, dy, dz = px_ + qo * ox, py_ + qo * oy, pz_ + qo * oz
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn > 1e-9 * length and dn > 1e-300:
        sc = length / dn
        return ox + dx * sc, oy + dy * sc, oz + dz * sc
    # degenerate: the rest direction
    an = math.sqrt(ax_ * ax_ + ay_ * ay_ + az_ * az_)
    sc = length / an if an > EPS else 0.0
    return ox + ax_ * sc, oy + ay_ * sc, oz + az_ * sc


@njit(inline="always", cache=True)
def store_link(st, scr, i, hx, hy, hz, vx, vy, vz, ox, oy, oz, length, unr, nconv):
    """Link i's new tail and velocity (the old tail becomes the previous one), and the
    substep scratch the relaxation and the diagnostics read: root, length, residual overlaps,
    non-convergence flag."""
    for j in range(3):
        st[i, S_XP + j] = st[i, S_X + j]
    st[i, S_X] = hx
    st[i, S_X + 1] = hy
    st[i, S_X + 2] = hz
    st[i, S_V] = vx
    st[i, S_V + 1] = vy
    st[i, S_V + 2] = vz
    scr[i, S_O] = ox
    scr[i, S_O + 1] = oy
    scr[i, S_O + 2] = oz
    scr[i, S_LEN] = length
    scr[i, S_UNR] = unr
    scr[i, S_NCONV] = nconv
