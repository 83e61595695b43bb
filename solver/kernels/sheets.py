"""Linked sheets in the substep (numba): :func:`sheet_pass`, the sideways links between the
tails of neighbouring chains (solver/sheets.py builds them), solved in the relaxation of
lengths and contact. Called by :func:`solver.kernels.step.step_kernel` after every chain has
been stepped (and relaxed), rest-shape solver only.

A link l joins the tails x_a, x_b of two segments of different chains. Its rest shape is
the offset o = M_A0⁻¹ (x̂_b − x̂_a) of the rest tails in the rest frame of chain a's anchor
(``LF_OFF``), carried by the anchor: t = M_A o (M_A the anchor's world 3x3 of this substep,
scale included), and the rest distance d0 = |x̂_b − x̂_a| (times the chain scale s). Each pass

1. walks the links in order (Gauss-Seidel): the error vector e = (x_b − x_a) − t keeps
   e^(−r h) of itself (the soft sheet: an error decays at the sheet rate r, 1/s, with no
   overshoot) — its sideways part too, so neighbours that swing out of phase are pulled back
   into the sheet's shape, not only to their distance (a distance alone lets two strands
   pass around each other; measured on the layered avatar's Jog: phase 19.6° linked by
   distance 21.5°, by offset 13.9°) — then the distance into the caps
   [d_min, d_max] = [(1 − squish) d0, (1 + stretch) d0] along the new direction (a hard
   limit, counted when it binds); both tails move half the correction c.
   Bounce-free like contact (docs/design.md §4.4): a correction never becomes velocity; of
   the two tails' relative velocity along c only the part against the correction is
   removed, the share 1 − e^(−r h) (at a cap too: removing all of it there makes a link held
   at its cap against a collider chatter between two states, measured: 0.05 mm every
   substep on the layered avatar after Roll), split equally, so the sheet's common motion
   keeps its momentum;
2. re-projects, root -> tail from the first segment a link moved, every link of the chains
   it moved onto its length and through the contact projection, as the chain relaxation
   does (:func:`solver.kernels.relax._relax`); contact has the last word.

With angle limits, :func:`sheet_limits` applies them again to the chains a link moved.
Chains with an authored joint, or a joint off the fast path (a branch root carried by a
solved frame), are left out of the pass in that substep (their links do nothing).
Allocation-free: the scratch is the ``sheet_chain_ints`` section.
"""

from __future__ import annotations

import math

from numba import njit

from .limits import apply_limits
from .resolve import _candidates, _in_reach, _no_radial, _residual, _resolve
from ..layout import (
    H_L, H_N_CAP_TOTAL, H_N_SQUISH_CAP, H_N_STRETCH_CAP, H_OF_LINK, H_OI_LINK, H_OI_SHK, H_SHEET_PASSES, KI_SEG0,
    KI_SEG1, KL, KL_MOVED, KL_OK, KL_TOUCHED, K_AMPREV, K_S, LF, LF_KEEP, LF_KEEPS, LF_OFF, LF_MAXR, LF_MINR,
    LF_REST, LI, LI_A, LI_B, SI_AUTH, SI_CHAIN, SI_FAST, SI_NEEDW, SI_P0, SI_P1, SI_REFMASK, SI_SPAR, S_HIT, S_LEN,
    S_NCONV, S_O, S_UNR, S_V, S_X,
)


@njit(inline="always", cache=True)
def _root(st, scr, segi, i):
    sp = segi[i, SI_SPAR]
    if sp >= 0:
        return st[sp, S_X], st[sp, S_X + 1], st[sp, S_X + 2]
    return scr[i, S_O], scr[i, S_O + 1], scr[i, S_O + 2]


@njit(inline="always", cache=True)
def _link(st, lf, l, a, b, s, m0, m1, m2, m4, m5, m6, m8, m9, m10):
    """Solve link l (tails of segments a and b, chain scale s; m0..m10 the 3x3 of the first
    chain's anchor matrix of this substep, row-major in a 3x4) once (module doc); returns
    (moved, cap) with cap 1 at the stretch cap, −1 at the squish cap, 0 otherwise."""
    ox, oy, oz = lf[l, LF_OFF], lf[l, LF_OFF + 1], lf[l, LF_OFF + 2]
    tx = m0 * ox + m1 * oy + m2 * oz
    ty = m4 * ox + m5 * oy + m6 * oz
    tz = m8 * ox + m9 * oy + m10 * oz
    dx = st[b, S_X] - st[a, S_X]
    dy = st[b, S_X + 1] - st[a, S_X + 1]
    dz = st[b, S_X + 2] - st[a, S_X + 2]
    share = 1.0 - lf[l, LF_KEEP]
    # the soft sheet: the error vector e = d − t keeps e^(−r h) of itself
    ex, ey, ez = dx - tx, dy - ty, dz - tz
    # along the rest offset the sheet rate, across it the shear rate:
    # c = r_s' e + (r' − r_s') (e·t / t·t) t  (r' = 1 − e^(−r h), r_s' = 1 − e^(−r_s h))
    sp = 1.0 - lf[l, LF_KEEPS]
    cx, cy, cz = sp * ex, sp * ey, sp * ez
    tt = tx * tx + ty * ty + tz * tz
    if tt > 0.0:
        w = (share - sp) * (ex * tx + ey * ty + ez * tz) / tt
        cx, cy, cz = cx + w * tx, cy + w * ty, cz + w * tz
    ndx, ndy, ndz = dx - cx, dy - cy, dz - cz
    nd2 = ndx * ndx + ndy * ndy + ndz * ndz
    rest = lf[l, LF_REST] * s
    cap = 0
    if nd2 > 1e-24 and rest > 0.0:
        hi = lf[l, LF_MAXR] * rest
        lo = lf[l, LF_MINR] * rest
        # the caps: on the distance, direction kept (a square root only when one binds)
        if nd2 > hi * hi:
            f = hi / math.sqrt(nd2)
            ndx, ndy, ndz = ndx * f, ndy * f, ndz * f
            cap = 1
        elif nd2 < lo * lo:
            f = lo / math.sqrt(nd2)
            ndx, ndy, ndz = ndx * f, ndy * f, ndz * f
            cap = -1
    cx, cy, cz = dx - ndx, dy - ndy, dz - ndz           # the whole correction of d, half to each tail
    cc = cx * cx + cy * cy + cz * cz
    if cc == 0.0:
        return False, cap
    st[a, S_X], st[a, S_X + 1], st[a, S_X + 2] = st[a, S_X] + 0.5 * cx, st[a, S_X + 1] + 0.5 * cy, st[a, S_X + 2] + 0.5 * cz
    st[b, S_X], st[b, S_X + 1], st[b, S_X + 2] = st[b, S_X] - 0.5 * cx, st[b, S_X + 1] - 0.5 * cy, st[b, S_X + 2] - 0.5 * cz
    vc = ((st[b, S_V] - st[a, S_V]) * cx + (st[b, S_V + 1] - st[a, S_V + 1]) * cy
          + (st[b, S_V + 2] - st[a, S_V + 2]) * cz)
    if vc > 0.0:
        # the relative velocity against the correction c: its share 1 − e^(−r h) goes (below 1e-6
        # of the rest distance only that fraction: round-off corrections make no velocity jump)
        cn = math.sqrt(cc)
        g = 0.5 * share * (vc / cc) * min(1.0, cn / (1e-6 * max(rest, 1e-9)))
        st[a, S_V], st[a, S_V + 1], st[a, S_V + 2] = st[a, S_V] + g * cx, st[a, S_V + 1] + g * cy, st[a, S_V + 2] + g * cz
        st[b, S_V], st[b, S_V + 1], st[b, S_V + 2] = st[b, S_V] - g * cx, st[b, S_V + 1] - g * cy, st[b, S_V + 2] - g * cz
    return True, cap


@njit(inline="always", cache=True)
def _chain_ok(segi, s0, s1):
    for i in range(s0, s1):
        if segi[i, SI_AUTH] != 0 or segi[i, SI_NEEDW] != 0 or (segi[i, SI_SPAR] >= 0 and segi[i, SI_FAST] == 0):
            return 0
    return 1


@njit(cache=True, _nrt=False)
def sheet_pass(F, I, st, par, scr, segi, ch, chi, col, coli, cb, C, pairs, allow, cand, maxit, u_min, tol):  # noqa: E741
    """The sheet passes of one substep (module doc), after every chain was stepped.

    Returns (contact corrections, change of the unresolved-overlap count) of the chains it
    re-projected; sets the cap counters of the header (H_N_STRETCH_CAP, H_N_SQUISH_CAP:
    links held at a cap in the last pass; H_N_CAP_TOTAL: every binding, per pass)."""
    nl = I[H_L]
    K = chi.shape[0]
    lf = F[I[H_OF_LINK]:I[H_OF_LINK] + nl * LF].reshape((nl, LF))
    li = I[I[H_OI_LINK]:I[H_OI_LINK] + nl * LI].reshape((nl, LI))
    kl = I[I[H_OI_SHK]:I[H_OI_SHK] + K * KL].reshape((K, KL))
    for k in range(K):
        kl[k, KL_OK] = _chain_ok(segi, chi[k, KI_SEG0], chi[k, KI_SEG1])
        kl[k, KL_TOUCHED] = 0
    hits_total = 0
    d_unres = 0
    n_stretch = 0
    n_squish = 0
    for _pass in range(I[H_SHEET_PASSES]):
        for k in range(K):
            kl[k, KL_MOVED] = chi[k, KI_SEG1]
        n_stretch = 0
        n_squish = 0
        any_moved = False
        k_m = -1
        m0 = m1 = m2 = m4 = m5 = m6 = m8 = m9 = m10 = s_m = 0.0
        for l in range(nl):
            a = li[l, LI_A]
            b = li[l, LI_B]
            ka = segi[a, SI_CHAIN]
            kb = segi[b, SI_CHAIN]
            if kl[ka, KL_OK] == 0 or kl[kb, KL_OK] == 0:
                continue
            if ka != k_m:
                # chain a's anchor matrix of this substep (the step wrote it); links come
                # grouped by chain pair, so it is read once per pair
                k_m = ka
                m0, m1, m2 = ch[ka, K_AMPREV], ch[ka, K_AMPREV + 1], ch[ka, K_AMPREV + 2]
                m4, m5, m6 = ch[ka, K_AMPREV + 4], ch[ka, K_AMPREV + 5], ch[ka, K_AMPREV + 6]
                m8, m9, m10 = ch[ka, K_AMPREV + 8], ch[ka, K_AMPREV + 9], ch[ka, K_AMPREV + 10]
                s_m = ch[ka, K_S]
            moved, cap = _link(st, lf, l, a, b, s_m, m0, m1, m2, m4, m5, m6, m8, m9, m10)
            if cap > 0:
                n_stretch += 1
            elif cap < 0:
                n_squish += 1
            if moved:
                any_moved = True
                if a < kl[ka, KL_MOVED]:
                    kl[ka, KL_MOVED] = a
                if b < kl[kb, KL_MOVED]:
                    kl[kb, KL_MOVED] = b
        I[H_N_CAP_TOTAL] += n_stretch + n_squish
        if not any_moved:
            break
        # ---- lengths and contact, root -> tail, from the first segment a link moved
        for k in range(K):
            s1 = chi[k, KI_SEG1]
            first = kl[k, KL_MOVED]
            if first >= s1:
                continue
            kl[k, KL_TOUCHED] = 1
            s = ch[k, K_S]
            for i in range(first, s1):
                ox, oy, oz = _root(st, scr, segi, i)
                length = scr[i, S_LEN]
                xx, xy, xz = st[i, S_X], st[i, S_X + 1], st[i, S_X + 2]
                dx, dy, dz = xx - ox, xy - oy, xz - oz
                dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                if dn == 0.0:
                    continue
                hx, hy, hz = ox + length * (dx / dn), oy + length * (dy / dn), oz + length * (dz / dn)
                vx, vy, vz = st[i, S_V], st[i, S_V + 1], st[i, S_V + 2]
                rh = par[i, S_HIT] * s
                n_cand = 0
                if segi[i, SI_P1] > segi[i, SI_P0]:
                    n_cand = _candidates(cb, C, segi[i, SI_REFMASK], ox, oy, oz, length + rh, segi, i, pairs, cand)
                hits = 0
                d_unres -= int(scr[i, S_UNR])
                scr[i, S_UNR] = 0.0
                scr[i, S_NCONV] = 0.0
                if n_cand > 0 and _in_reach(col, coli, pairs, cand, n_cand, ox, oy, oz, hx, hy, hz, length, rh):
                    hx, hy, hz, vx, vy, vz, hits, converged, _, _, _, _, _, _, _, _ = _resolve(
                        col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, vx, vy, vz, length, rh, s,
                        maxit, True, u_min)
                    hits_total += hits
                    if hits > 0 and not converged:
                        scr[i, S_NCONV] = 1.0
                        scr[i, S_UNR] = _residual(col, coli, pairs, allow, cand, n_cand, ox, oy, oz, hx, hy, hz, rh,
                                                  s, tol, True)
                        d_unres += int(scr[i, S_UNR])
                if hits > 0:
                    vx, vy, vz = _no_radial(ox, oy, oz, hx, hy, hz, vx, vy, vz)
                st[i, S_X], st[i, S_X + 1], st[i, S_X + 2] = hx, hy, hz
                st[i, S_V], st[i, S_V + 1], st[i, S_V + 2] = vx, vy, vz
    I[H_N_STRETCH_CAP] = n_stretch
    I[H_N_SQUISH_CAP] = n_squish
    return hits_total, d_unres


@njit(cache=True, _nrt=False)
def sheet_limits(world, I, st, rst, scr, segi, chi, ext, mode, h):  # noqa: E741
    """The angle limits (:func:`solver.kernels.limits.apply_limits`) again on every chain a
    link moved in this substep's sheet pass, so that no joint ends the substep beyond its
    limit (the limits have the last word, as after contact)."""
    K = chi.shape[0]
    kl = I[I[H_OI_SHK]:I[H_OI_SHK] + K * KL].reshape((K, KL))
    n = 0
    for k in range(K):
        if kl[k, KL_TOUCHED] != 0:
            n += apply_limits(world, st, rst, scr, segi, ext, chi[k, KI_SEG0], chi[k, KI_SEG1], mode, h)
    return n
