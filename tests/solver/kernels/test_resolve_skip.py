"""Exactness of the broad-phase and contact-projection shortcuts (solver/kernels/resolve.py).

The broad phase finds a segment's candidate pairs by rank in its reference mask; that must
list exactly what walking the references finds. The contact projection skips a candidate
collider without its exact test when the ball around the link's middle cannot reach the
collider's bounding sphere or a capsule's axis, or when the link's closest point to a sphere
is beyond its reach. The skips must never change a result: here the projection (and the
count of pairs whose root lies inside) is compared, bit for bit, with a
reference that runs the exact test on every candidate, on random configurations of spheres
and capsules around a link, many of them pushed several times in one pass (the ball moves
with the link)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver import layout as L
from solver.kernels.contact import contact, rotate_out_q
from solver.kernels.resolve import _candidates, _resolve

MAXIT = 16
U_MIN = 0.05


@njit(cache=False)
def _kernel_resolve(col, coli, pairs, allow, cand, n_cand, o, h, v, length, rh):
    r = _resolve(col, coli, pairs, allow, cand, n_cand, o[0], o[1], o[2], h[0], h[1], h[2], v[0], v[1], v[2],
                 length, rh, 1.0, MAXIT, True, U_MIN)
    return r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[11]


def _reference(col, shapes, cand, n_cand, pairs, allow, o, h, v, length, rh, near):
    """_resolve without the skips: every candidate gets the exact test in every pass.
    ``near`` (list of one int) counts exact tests that found no hit although the link's
    middle ball reached the collider's bounding sphere (where the finer skips act)."""
    hx, hy, hz = h
    vx, vy, vz = v
    hits, converged, n_rin = 0, False, 0
    for it in range(MAXIT):
        moved = False
        for q in range(n_cand):
            p = cand[q]
            c = pairs[p]
            cnx, cny, cnz, dep, uu, hit, rin = contact(shapes[c], col, c, *o, hx, hy, hz, rh, allow[p], 0.0, True)
            n_rin += it == 0 and rin
            if not hit:
                mid = 0.5 * (np.asarray(o) + (hx, hy, hz))
                near[0] += np.linalg.norm(col[c, L.C_BC:L.C_BC + 3] - mid) <= 0.5 * length + rh + col[c, L.C_BR]
            if not hit or dep <= 1e-9 * length:
                continue
            nhx, nhy, nhz, *_q = rotate_out_q(*o, hx, hy, hz, length, cnx, cny, cnz, dep, uu, U_MIN)
            ddx, ddy, ddz = nhx - hx, nhy - hy, nhz - hz
            dd = math.sqrt(ddx * ddx + ddy * ddy + ddz * ddz)
            if dd <= 0.0:
                continue
            moved = True
            hits += 1
            hx, hy, hz = nhx, nhy, nhz
            mx, my, mz = ddx / dd, ddy / dd, ddz / dd
            vn = vx * mx + vy * my + vz * mz
            if vn < 0.0:
                vx, vy, vz = vx - vn * mx, vy - vn * my, vz - vn * mz
        if not moved:
            converged = True
            break
    return hx, hy, hz, vx, vy, vz, hits, converged, n_rin


def _colliders(rng, n):
    col = np.zeros((n, L.CF))
    coli = np.zeros((n, L.CI), np.int64)
    for c in range(n):
        shape = L.SHAPE_SPHERE if rng.random() < 0.5 else L.SHAPE_CAPSULE
        a = rng.uniform(-0.08, 0.08, 3)
        b = a if shape == L.SHAPE_SPHERE else a + rng.uniform(-0.06, 0.06, 3)
        r = rng.uniform(0.01, 0.04)
        col[c, L.C_WA:L.C_WA + 3] = a
        col[c, L.C_WB:L.C_WB + 3] = b
        col[c, L.C_WR] = r
        col[c, L.C_BC:L.C_BC + 3] = 0.5 * (a + b)
        col[c, L.C_BR] = 0.5 * np.linalg.norm(b - a) + r
        coli[c, L.CI_SHAPE] = shape
    return col, coli


def test_the_skip_never_changes_the_projection():
    rng = np.random.default_rng(7)
    pushed_twice = 0
    near = [0]
    rooted_inside = 0
    for k in range(3000):
        n = int(rng.integers(2, 5))
        col, coli = _colliders(rng, n)
        pairs = np.arange(n, dtype=np.int64)
        # every third configuration allows rest-pose overlaps (as Godette's front strands have)
        allow = rng.uniform(0.0, 0.01, n) if k % 3 == 0 else np.zeros(n)
        cand = np.arange(n + 1, dtype=np.int64)
        o = rng.uniform(-0.1, 0.1, 3)
        d = rng.normal(size=3)
        length = 0.05
        h = o + length * d / np.linalg.norm(d)
        v = rng.normal(size=3)
        rh = 0.005
        # the kernels' (2, P) block: allowances, then cover allowances (none here)
        got = _kernel_resolve(col, coli, pairs, np.stack([allow, np.zeros(n)]), cand, n, o, h, v, length, rh)
        want = _reference(col, coli[:, L.CI_SHAPE], cand, n, pairs, allow, o, h, v, length, rh, near)
        assert got == want
        pushed_twice += got[6] >= 2
        rooted_inside += got[8] > 0
    # the configurations do exercise chained pushes, roots inside, and separated pairs
    # inside the bounding-sphere reach (where the finer skips decide)
    assert pushed_twice > 100
    assert rooted_inside > 100
    assert near[0] > 1000


@njit(cache=False)
def _kernel_candidates(cb, C, refm, o, bnd, segi, pairs, cand):
    return _candidates(cb, C, refm, o[0], o[1], o[2], bnd, segi, 0, pairs, cand)


def test_candidates_by_rank_in_the_mask_equal_the_walk_over_the_references():
    """The broad phase's fast path (pair index = first pair + rank of the collider in the
    segment's reference mask) lists exactly what walking the references finds, in order."""
    rng = np.random.default_rng(11)
    C = 16
    for _ in range(2000):
        refs = np.sort(rng.choice(C, size=int(rng.integers(1, C + 1)), replace=False)).astype(np.int64)
        pairs = np.concatenate([np.zeros(3, np.int64), refs])     # the segment's pairs start at 3
        segi = np.zeros((1, L.SI), np.int64)
        segi[0, L.SI_P0], segi[0, L.SI_P1] = 3, 3 + len(refs)
        cb = np.concatenate([rng.uniform(-0.3, 0.3, 3 * C), rng.uniform(0.02, 0.15, C)])
        o = rng.uniform(-0.3, 0.3, 3)
        refm = int(sum(1 << int(c) for c in refs))
        fast, walk = np.zeros(C + 1, np.int64), np.zeros(C + 1, np.int64)
        n_fast = _kernel_candidates(cb, C, refm, o, 0.05, segi, pairs, fast)
        n_walk = _kernel_candidates(cb, C, 0, o, 0.05, segi, pairs, walk)
        assert n_fast == n_walk
        assert list(fast[:n_fast]) == list(walk[:n_walk])
