"""Rest-shape chain relaxation after a contact (numba): :func:`_relax` and its subtree
turns. The contact projection turns one link about its root and kinks its neighbours; the
relaxation spreads the push over the chain (bend limit, then lengths and contact again), see
docs/history/solver-notes.md "Chain relaxation after contact". Called by :func:`solver.kernels.step.step_kernel`.
"""

from __future__ import annotations

import math

from numba import njit

from avatars.math_kernels import arc_quat, vec

from .resolve import _candidates, _in_reach, _inward, _no_radial, _residual, _resolve
from ..layout import (
    SI_AUTH, SI_FAST, SI_NEEDW, SI_P0, SI_P1, SI_REFMASK, SI_SPAR, S_B, S_HIT, S_LEN, S_NCONV, S_O, S_UNR, S_V, S_X,
)


@njit(inline="always", cache=True)
def _chord(qx, qy, qz, qw, rx, ry, rz):
    """Half the displacement of r turned by the unit quaternion q, w (u x r) + u x (u x r),
    from cross products only (its direction stays exact however small the turn)."""
    cx, cy, cz = qy * rz - qz * ry, qz * rx - qx * rz, qx * ry - qy * rx
    return (qw * cx + qy * cz - qz * cy, qw * cy + qz * cx - qx * cz, qw * cz + qx * cy - qy * cx)


@njit(inline="always", cache=True)
def _unit(x, y, z):
    n = math.sqrt(x * x + y * y + z * z)
    if n < 1e-300:
        return 0.0, 0.0, 0.0, 0.0
    return x / n, y / n, z / n, n


@njit(inline="always", cache=True)
def _below(segi, j, i, s0):
    """Segment j lies in the subtree of segment i (j == i counts)."""
    while j >= s0:
        if j == i:
            return True
        j = segi[j, SI_SPAR]
    return False


@njit(inline="always", cache=True)
def _qrot(qx, qy, qz, qw, x, y, z):
    """Vector turned by the unit quaternion q."""
    tx, ty, tz = 2.0 * (qy * z - qz * y), 2.0 * (qz * x - qx * z), 2.0 * (qx * y - qy * x)
    return (x + qw * tx + qy * tz - qz * ty, y + qw * ty + qz * tx - qx * tz, z + qw * tz + qx * ty - qy * tx)


@njit(inline="always", cache=True)
def _turn_subtree(st, scr, segi, i, s0, s1, strict, ox, oy, oz, qx, qy, qz, qw):
    """Turn the tails of segment i's subtree (without i itself when ``strict``) by q about o;
    velocities follow the bounce-free rule along each tail's displacement."""
    for j in range(i + 1 if strict else i, s1):
        if j != i and not _below(segi, j, i, s0):
            continue
        rx, ry, rz = st[j, S_X] - ox, st[j, S_X + 1] - oy, st[j, S_X + 2] - oz
        cx, cy, cz = _chord(qx, qy, qz, qw, rx, ry, rz)
        vx, vy, vz = _inward(st[j, S_V], st[j, S_V + 1], st[j, S_V + 2], cx, cy, cz, 0.5 * scr[j, S_LEN])
        st[j, S_X], st[j, S_X + 1], st[j, S_X + 2] = ox + rx + 2.0 * cx, oy + ry + 2.0 * cy, oz + rz + 2.0 * cz
        st[j, S_V], st[j, S_V + 1], st[j, S_V + 2] = vx, vy, vz


@njit(inline="always", cache=True)
def _shift_subtree(st, scr, segi, i, s0, s1, dx, dy, dz):
    """Move the tails strictly below segment i by d (bounce-free rule along d)."""
    for j in range(i + 1, s1):
        if not _below(segi, j, i, s0):
            continue
        vx, vy, vz = _inward(st[j, S_V], st[j, S_V + 1], st[j, S_V + 2], dx, dy, dz, scr[j, S_LEN])
        st[j, S_X], st[j, S_X + 1], st[j, S_X + 2] = st[j, S_X] + dx, st[j, S_X + 1] + dy, st[j, S_X + 2] + dz
        st[j, S_V], st[j, S_V + 1], st[j, S_V + 2] = vx, vy, vz


@njit(inline="always", cache=True)
def _root_of(st, scr, segi, i):
    sp = segi[i, SI_SPAR]
    if sp >= 0:
        return st[sp, S_X], st[sp, S_X + 1], st[sp, S_X + 2]
    return scr[i, S_O], scr[i, S_O + 1], scr[i, S_O + 2]


@njit(cache=True, _nrt=False)
def _relax(st, par, rst, scr, segi, col, coli, cb, C, pairs, allow, cand, ma, s0, s1, s, passes, bend_max, bend_cos,
           wp, maxit, u_min, tol):
    """Rest-shape chain relaxation after a contact (one chain, segments [s0, s1)).

    The contact projection turns a link about its root and leaves its neighbours on their
    own rest directions: a sharp kink at both ends of the pushed link, which linear-blend
    skinning turns into mesh stretch. Each pass

    1. limits, tail -> root, the bend of every link off its parent's rest continuation (the
       rest arc's relative turn carried by the parent's current direction) to ``bend_max``:
       the child's subtree turns toward the parent by (1 - ``wp``) of the excess, the parent
       turns toward the child by ``wp`` of it with the links below keeping their directions,
       so the excess moves on up the chain within the pass and a push spreads over the
       chain (chain roots are held by their rest-shape springs alone, not limited);
    2. re-projects, root -> tail from the first link that moved, every link onto its length
       and through the contact projection; a link turned out of a collider turns the links
       below it with it (no new kink under the push). Contact has the last word.

    Every tail correction keeps the bounce-free velocity rule (only the part of the velocity
    against the correction is removed). Chain roots never move. Stops early when a pass has
    nothing to bend and every link's contact passes converged. Returns the contact
    corrections; the links' residual overlaps are left in the S_UNR scratch column."""
    n_fast = 0
    for i in range(s0, s1):
        sp = segi[i, SI_SPAR]
        if segi[i, SI_AUTH] != 0 or segi[i, SI_NEEDW] != 0 or (sp >= 0 and segi[i, SI_FAST] == 0):
            return 0      # roots carried by solved frames (branches, authored joints): not relaxed
        n_fast += segi[i, SI_FAST]
    if n_fast == 0:
        return 0          # no joint between two links
    hits_total = 0
    for _pass in range(passes):
        # ---- (1) bend limit, tail -> root
        first = s1
        for i in range(s1 - 1, s0 - 1, -1):
            sp = segi[i, SI_SPAR]
            if sp < 0:
                continue        # a chain root: its rest-shape spring alone holds it to the rest arc
            ox, oy, oz = st[sp, S_X], st[sp, S_X + 1], st[sp, S_X + 2]
            dix, diy, diz, li = _unit(st[i, S_X] - ox, st[i, S_X + 1] - oy, st[i, S_X + 2] - oz)
            gx, gy, gz = _root_of(st, scr, segi, sp)
            dpx, dpy, dpz, lp = _unit(ox - gx, oy - gy, oz - gz)
            bix, biy, biz = vec(ma, rst[i, S_B], rst[i, S_B + 1], rst[i, S_B + 2])
            bix, biy, biz, nb = _unit(bix, biy, biz)
            bpx, bpy, bpz = vec(ma, rst[sp, S_B], rst[sp, S_B + 1], rst[sp, S_B + 2])
            bpx, bpy, bpz, nb2 = _unit(bpx, bpy, bpz)
            if li == 0.0 or lp == 0.0 or nb == 0.0 or nb2 == 0.0:
                continue
            # the child's rest direction carried by the parent's current direction
            q = arc_quat(bpx, bpy, bpz, dpx, dpy, dpz)
            ex, ey, ez = _qrot(q[0], q[1], q[2], q[3], bix, biy, biz)
            cb_ = ex * dix + ey * diy + ez * diz
            if cb_ >= bend_cos:
                continue
            excess = math.acos(max(-1.0, cb_)) - bend_max
            if excess <= 1e-9:
                # at the limit to round-off (as a previous pass left it): no correction, so
                # that which links are relaxed does not hinge on the last bits
                continue
            kx, ky, kz, kn = _unit(ey * diz - ez * diy, ez * dix - ex * diz, ex * diy - ey * dix)
            if kn < 1e-12:
                continue
            a = -(1.0 - wp) * excess
            sa = math.sin(0.5 * a)
            _turn_subtree(st, scr, segi, i, s0, s1, False, ox, oy, oz, kx * sa, ky * sa, kz * sa, math.cos(0.5 * a))
            first = i
            if wp > 0.0:
                # the parent turns toward the child; the links below keep their directions
                sa = math.sin(0.5 * wp * excess)
                lp = scr[sp, S_LEN]
                cx, cy, cz = _chord(kx * sa, ky * sa, kz * sa, math.cos(0.5 * wp * excess),
                                    lp * dpx, lp * dpy, lp * dpz)
                vx, vy, vz = _inward(st[sp, S_V], st[sp, S_V + 1], st[sp, S_V + 2], cx, cy, cz, 0.5 * lp)
                st[sp, S_X], st[sp, S_X + 1], st[sp, S_X + 2] = (gx + lp * dpx + 2.0 * cx, gy + lp * dpy + 2.0 * cy,
                                                                    gz + lp * dpz + 2.0 * cz)
                st[sp, S_V], st[sp, S_V + 1], st[sp, S_V + 2] = vx, vy, vz
                _shift_subtree(st, scr, segi, sp, s0, s1, 2.0 * cx, 2.0 * cy, 2.0 * cz)
                first = sp
        for i in range(s0, first):
            if scr[i, S_NCONV] != 0.0:
                first = i       # its contact passes did not converge: give it more
                break
        if first == s1:
            break
        # ---- (2) lengths and contact, root -> tail, from the first link that moved
        for i in range(first, s1):
            ox, oy, oz = _root_of(st, scr, segi, i)
            length = scr[i, S_LEN]
            xx, xy, xz = st[i, S_X], st[i, S_X + 1], st[i, S_X + 2]
            dx, dy, dz, dn = _unit(xx - ox, xy - oy, xz - oz)
            if dn == 0.0:
                continue
            hx, hy, hz = ox + length * dx, oy + length * dy, oz + length * dz
            vx, vy, vz = st[i, S_V], st[i, S_V + 1], st[i, S_V + 2]
            rh = par[i, S_HIT] * s
            n_cand = 0
            if segi[i, SI_P1] > segi[i, SI_P0]:
                n_cand = _candidates(cb, C, segi[i, SI_REFMASK], ox, oy, oz, length + rh, segi, i, pairs, cand)
            hits = 0
            scr[i, S_UNR] = 0.0
            scr[i, S_NCONV] = 0.0
            qx, qy, qz, qw = 0.0, 0.0, 0.0, 1.0
            if n_cand > 0 and _in_reach(col, coli, pairs, cand, n_cand, ox, oy, oz, hx, hy, hz, length, rh):
                hx, hy, hz, vx, vy, vz, hits, converged, _, _, _, _, qx, qy, qz, qw = _resolve(
                    col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, vx, vy, vz, length, rh, s,
                    maxit, True, u_min)
                hits_total += hits
                if hits > 0 and not converged:
                    scr[i, S_NCONV] = 1.0
                    scr[i, S_UNR] = _residual(col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, rh, s,
                                              tol, True)
            if hits > 0:
                vx, vy, vz = _no_radial(ox, oy, oz, hx, hy, hz, vx, vy, vz)
                # the links below turn with the pushed link (no new kink under the push)
                _turn_subtree(st, scr, segi, i, s0, s1, True, ox, oy, oz, qx, qy, qz, qw)
            st[i, S_X], st[i, S_X + 1], st[i, S_X + 2] = hx, hy, hz
            st[i, S_V], st[i, S_V + 1], st[i, S_V + 2] = vx, vy, vz
    return hits_total
