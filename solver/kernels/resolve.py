"""Per-link contact resolution inside a substep (numba, inlined into the kernels).

The broad phase (:func:`_candidates`: the collider pairs a link can reach), the exact
skips of the projection (:func:`_skips`) and whether any candidate is in reach at all
(:func:`_in_reach`), the repeated contact projection with the bounce-free velocity rule
(:func:`_resolve`, docs/design.md §4.4),
radial velocity removal (:func:`_no_radial`) and what is left unresolved
(:func:`_residual`). The geometry of one link against one collider is
:func:`solver.kernels.contact.contact`; the step that calls these is :func:`solver.kernels.step.step_kernel`.
"""

from __future__ import annotations

import math

import numpy as np

from numba import njit

from avatars.math_kernels import EPS, qmul

from .contact import contact, point_segment, rotate_out_q
from ..layout import CI_SHAPE, C_BC, C_BR, C_WA, C_WB, C_WR, SHAPE_CAPSULE, SHAPE_SPHERE, SI_P0, SI_P1


@njit(inline="always", cache=True)
def _candidates(cb, C, refm, ox, oy, oz, bnd, segi, i, pairs, cand):
    """Collider references of segment i whose bounding sphere can touch the link's ball
    (centre o, radius ``bnd`` = L + r_h: every tail the step can produce lies in it).
    Writes pair indices into ``cand`` in reference order; returns their count.

    ``cb`` (4 C,) holds the bounding spheres as struct of arrays (x, y, z, radius). When
    ``refm`` (the segment's referenced colliders as a bit mask, set when there are at most
    63 colliders and the segment's references are sorted and unique) is non-zero, one
    branchless (vectorised) pass over all colliders builds a bit mask, and the pair index of
    collider c is the segment's first pair plus the number of referenced colliders below c."""
    n = 0
    p0 = segi[i, SI_P0]
    p1 = segi[i, SI_P1]
    if refm != 0:
        m = np.int64(0)
        for c in range(C):
            ex = cb[c] - ox
            ey = cb[C + c] - oy
            ez = cb[2 * C + c] - oz
            rr = bnd + cb[3 * C + c]
            m |= np.int64(ex * ex + ey * ey + ez * ez <= rr * rr) << np.int64(c)
        m &= refm
        while m != 0:
            low = m & -m
            below = refm & (low - np.int64(1))
            r = 0
            while below != 0:
                below &= below - np.int64(1)
                r += 1
            cand[n] = p0 + r
            n += 1
            m ^= low
        return n
    for p in range(p0, p1):
        c = pairs[p]
        ex = cb[c] - ox
        ey = cb[C + c] - oy
        ez = cb[2 * C + c] - oz
        rr = bnd + cb[3 * C + c]
        if ex * ex + ey * ey + ez * ez <= rr * rr:
            cand[n] = p
            n += 1
    return n


@njit(inline="always", cache=True)
def _skips(col, coli, c, ox, oy, oz, hx, hy, hz, bmx, bmy, bmz, bnd, rh):
    """Exact: no point of link o-h (inside the ball around its middle b, radius ``bnd``) can
    be within r_h + r of outside sphere or capsule ``c`` — the ball misses the collider's
    bounding sphere or, for a capsule, lies farther than its radius from the axis; for a
    sphere, the link's own closest point to the centre is farther than r + r_h (both with a
    relative margin of 1e-9). Inside shapes and planes are never skipped."""
    shape = coli[c, CI_SHAPE]
    if shape != SHAPE_SPHERE and shape != SHAPE_CAPSULE:
        return False
    ex = col[c, C_BC] - bmx
    ey = col[c, C_BC + 1] - bmy
    ez = col[c, C_BC + 2] - bmz
    rr = bnd + col[c, C_BR]
    if ex * ex + ey * ey + ez * ez > rr * rr:
        return True
    if shape == SHAPE_CAPSULE:
        da, _, _, _ = point_segment(bmx, bmy, bmz, col[c, C_WA], col[c, C_WA + 1], col[c, C_WA + 2],
                                    col[c, C_WB], col[c, C_WB + 1], col[c, C_WB + 2])
        return da > (bnd + col[c, C_WR]) * (1.0 + 1e-9)
    ax, ay, az = col[c, C_WA], col[c, C_WA + 1], col[c, C_WA + 2]
    lx, ly, lz = hx - ox, hy - oy, hz - oz
    ll = lx * lx + ly * ly + lz * lz
    t = 0.0
    if ll > 1e-30:
        t = min(1.0, max(0.0, ((ax - ox) * lx + (ay - oy) * ly + (az - oz) * lz) / ll))
    fx, fy, fz = ox + t * lx - ax, oy + t * ly - ay, oz + t * lz - az
    rs = (col[c, C_WR] + rh) * (1.0 + 1e-9)
    return fx * fx + fy * fy + fz * fz > rs * rs


@njit(inline="always", cache=True)
def _in_reach(col, coli, pairs, cand, n_cand, ox, oy, oz, hx, hy, hz, length, rh):
    """Whether the first pass of :func:`_resolve` on link o-h would run an exact contact
    test at all: some candidate is an inside shape or a plane, or is not ruled out by
    :func:`_skips` (the same tests with the same arithmetic). When not, the projection
    leaves the tail and the velocity as they are, corrects nothing and finds no root inside."""
    bmx, bmy, bmz = 0.5 * (ox + hx), 0.5 * (oy + hy), 0.5 * (oz + hz)
    bnd = (0.5 * length + rh) * (1.0 + 1e-9)
    for q in range(n_cand):
        if not _skips(col, coli, pairs[cand[q]], ox, oy, oz, hx, hy, hz, bmx, bmy, bmz, bnd, rh):
            return True
    return False


@njit(inline="always", cache=True)
def _resolve(col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, vx, vy, vz, length, rh, s, maxit,
             segment_wise, u_min):
    """Contact projection of link o-h against its candidate references (docs/design.md §4.4): up to
    ``maxit`` passes, each turning the link about its root out of every collider it overlaps
    (:func:`rotate_out_q`); after each non-zero correction with unit direction m the inward
    part of the velocity is removed (bounce-free). Outside spheres and capsules that no point
    of the link can reach are skipped without the exact test: the ball around the link's
    middle (radius L/2 + r_h) misses the collider's bounding sphere or, for a capsule, lies
    farther than its radius from the capsule's axis; for a sphere, the link's own closest
    point to the centre is farther than r + r_h (both with a relative margin of 1e-9, so a
    skipped pair is one the exact test would find separated; the tests are redone at every
    new position, so the result is the same as testing all candidates). Returns (h (3), v (3), corrections,
    converged, last m (3), pairs whose root is inside, the total turn as a quaternion (4))."""
    hits = 0
    converged = False
    n_rin = 0
    mx, my, mz = 0.0, 0.0, 0.0
    qx, qy, qz, qw = 0.0, 0.0, 0.0, 1.0
    # the ball around the link's middle (every link point lies in it), moved with the link
    bmx, bmy, bmz = 0.5 * (ox + hx), 0.5 * (oy + hy), 0.5 * (oz + hz)
    bnd = (0.5 * length + rh) * (1.0 + 1e-9)
    for _it in range(maxit):
        moved = False
        for q in range(n_cand):
            p = cand[q]
            c = pairs[p]
            shape = coli[c, CI_SHAPE]
            if _skips(col, coli, c, ox, oy, oz, hx, hy, hz, bmx, bmy, bmz, bnd, rh):
                continue
            cnx, cny, cnz, dep, uu, hit, rin = contact(shape, col, c, ox, oy, oz,
                                                        hx, hy, hz, rh, allow[p] * s, segment_wise)
            if _it == 0 and rin:
                n_rin += 1
            if not hit or dep <= 1e-9 * length:
                # resolved to round-off: no correction, so that the discrete
                # contact decision does not hinge on the last bits
                continue
            nhx, nhy, nhz, rx, ry, rz, rw = rotate_out_q(ox, oy, oz, hx, hy, hz, length, cnx, cny, cnz, dep, uu,
                                                         u_min)
            ddx, ddy, ddz = nhx - hx, nhy - hy, nhz - hz
            dd = math.sqrt(ddx * ddx + ddy * ddy + ddz * ddz)
            if dd <= 0.0:
                continue
            moved = True
            hits += 1
            hx, hy, hz = nhx, nhy, nhz
            bmx, bmy, bmz = 0.5 * (ox + hx), 0.5 * (oy + hy), 0.5 * (oz + hz)
            qx, qy, qz, qw = qmul(rx, ry, rz, rw, qx, qy, qz, qw)
            # bounce-free: remove only the inward part of the rebuilt velocity
            mx, my, mz = ddx / dd, ddy / dd, ddz / dd
            vn = vx * mx + vy * my + vz * mz
            if vn < 0.0:
                vx, vy, vz = vx - vn * mx, vy - vn * my, vz - vn * mz
        if not moved:
            converged = True
            break
    return hx, hy, hz, vx, vy, vz, hits, converged, mx, my, mz, n_rin, qx, qy, qz, qw


@njit(inline="always", cache=True)
def _no_radial(ox, oy, oz, hx, hy, hz, vx, vy, vz):
    """v without its component along the link o-h."""
    dx, dy, dz = hx - ox, hy - oy, hz - oz
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn > EPS:
        dx, dy, dz = dx / dn, dy / dn, dz / dn
        vr = vx * dx + vy * dy + vz * dz
        vx, vy, vz = vx - vr * dx, vy - vr * dy, vz - vr * dz
    return vx, vy, vz


@njit(inline="always", cache=True)
def _residual(col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, rh, s, tol, segment_wise):
    """Candidate references link o-h still overlaps by more than ``tol`` (diagnostics)."""
    n = 0
    for q in range(n_cand):
        p = cand[q]
        c = pairs[p]
        _, _, _, dep, _, hit, _ = contact(coli[c, CI_SHAPE], col, c, ox, oy, oz, hx, hy, hz, rh, allow[p] * s,
                                           segment_wise)
        if hit and dep > tol:
            n += 1
    return n


@njit(inline="always", cache=True)
def _inward(vx, vy, vz, mx, my, mz, length):
    """Velocity after a correction m (a displacement) of a link of ``length``: the part of
    the velocity against m is removed (the bounce-free rule of docs/design.md §4.4; the correction
    itself never becomes velocity). Corrections below 1e-6 of the length remove only that
    fraction of it, so the velocity does not jump with round-off-sized corrections."""
    mn = math.sqrt(mx * mx + my * my + mz * mz)
    if mn > 0.0:
        f = min(1.0, mn / (1e-6 * length)) / mn
        mx, my, mz = mx / mn, my / mn, mz / mn
        vn = vx * mx + vy * my + vz * mz
        if vn < 0.0:
            vn *= f * mn
            vx, vy, vz = vx - vn * mx, vy - vn * my, vz - vn * mz
    return vx, vy, vz
