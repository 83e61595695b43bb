"""Independent reference geometry for the solver tests (plain numpy, no shared code with
the kernels): distances by convex minimisation rather than the closed-form closest points."""

from __future__ import annotations

import numpy as np


def point_segment_distance(p, a, b) -> float:
    p, a, b = (np.asarray(x, np.float64) for x in (p, a, b))
    e = b - a
    ee = float(e @ e)
    t = 0.0 if ee == 0.0 else min(1.0, max(0.0, float((p - a) @ e) / ee))
    return float(np.linalg.norm(p - (a + t * e)))


def segment_distance(p0, p1, a, b, iters: int = 200) -> tuple[float, float]:
    """(min over u in [0, 1] of the distance from p(u) to segment a-b, argmin u).

    The distance from a point moving on a line to a convex set is convex in u, so a
    golden-section search converges to the minimum.
    """
    p0, p1 = np.asarray(p0, np.float64), np.asarray(p1, np.float64)
    f = lambda u: point_segment_distance(p0 + u * (p1 - p0), a, b)  # noqa: E731
    lo, hi = 0.0, 1.0
    g = (np.sqrt(5.0) - 1.0) / 2.0
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = f(d)
        if hi - lo < 1e-14:
            break
    best = min((f(0.0), 0.0), (f(1.0), 1.0), (f(0.5 * (lo + hi)), 0.5 * (lo + hi)))
    return best
