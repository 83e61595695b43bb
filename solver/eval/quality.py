"""Hair quality measures of the seed articles (docs/design.md §4.5), on plain arrays.

These are measurement code, kept independent of the solver's own contact code so that the
metrics check the solver rather than repeat it:

- edge stretch: ρ_e(t) = |z_a(t) − z_b(t)| / ℓ⁰_e; m_e = max_t ρ_e(t); reported as
  100·(Q0.99({m_e}) − 1) and the worst edge 100·(max_e m_e − 1), in percent;
- settling: the largest tip movement between consecutive samples in a window (metres);
- penetration: links (segments) and points inside collider proxies, count and depth;
- segment–capsule distance: closest points between p(u) and q(v), u, v ∈ [0, 1]
  (Ericson, *Real-Time Collision Detection*, §5.1.9), vectorized.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class StretchMeter:
    """Running per-edge maximum of ρ_e over sampled frames.

    Args:
        edges: (E, 2) vertex positions into the sampled point array.
        rest_lengths: (E,) metres.
    """

    def __init__(self, edges: np.ndarray, rest_lengths: np.ndarray):
        self.edges = np.asarray(edges, np.int64)
        self.rest = np.asarray(rest_lengths, np.float64)
        self.max_ratio = np.full(len(self.rest), -np.inf)

    def update(self, points: np.ndarray) -> None:
        """Add one sampled frame: ``points`` (V, 3) world positions."""
        if len(self.rest) == 0:
            return
        d = np.linalg.norm(points[self.edges[:, 0]] - points[self.edges[:, 1]], axis=1) / self.rest
        np.maximum(self.max_ratio, d, out=self.max_ratio)


def stretch_percent(max_ratios: np.ndarray) -> tuple[float, float]:
    """(p99 stretch %, worst edge %) from per-edge maxima m_e: 100·(Q0.99 − 1), 100·(max − 1)."""
    m = np.asarray(max_ratios, np.float64)
    if m.size == 0:
        return 0.0, 0.0
    return float(100.0 * (np.quantile(m, 0.99) - 1.0)), float(100.0 * (m.max() - 1.0))


def max_step_movement(samples: np.ndarray) -> float:
    """Largest movement (metres) of any point between consecutive samples; ``samples`` (F, P, 3)."""
    s = np.asarray(samples, np.float64)
    if len(s) < 2:
        return 0.0
    return float(np.linalg.norm(np.diff(s, axis=0), axis=2).max())


def closest_segment_segment(p0, p1, q0, q1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closest points between segments p0–p1 and q0–q1, broadcast over leading axes (..., 3).

    Returns (distance (...,), u (...,), v (...,)) with the points p0 + u (p1 − p0) and
    q0 + v (q1 − q0), u, v ∈ [0, 1]. Degenerate segments (points) are handled.
    """
    p0, p1, q0, q1 = (np.asarray(x, np.float64) for x in (p0, p1, q0, q1))
    d1 = p1 - p0
    d2 = q1 - q0
    r = p0 - q0
    a = np.sum(d1 * d1, -1)
    e = np.sum(d2 * d2, -1)
    f = np.sum(d2 * r, -1)
    c = np.sum(d1 * r, -1)
    b = np.sum(d1 * d2, -1)
    eps = 1e-18
    a_ok, e_ok = a > eps, e > eps
    safe_a = np.where(a_ok, a, 1.0)
    safe_e = np.where(e_ok, e, 1.0)
    denom = a * e - b * b
    # general case: u from the unclamped solution (parallel segments: u = 0), then v
    u = np.where(denom > eps, np.clip((b * f - c * e) / np.where(denom > eps, denom, 1.0), 0, 1), 0.0)
    v = (b * u + f) / safe_e
    # v outside [0, 1]: clamp it and recompute u for that end of q
    v_lo, v_hi = v < 0, v > 1
    v = np.clip(v, 0, 1)
    u = np.where(v_lo, np.clip(-c / safe_a, 0, 1), u)
    u = np.where(v_hi, np.clip((b - c) / safe_a, 0, 1), u)
    # degenerate segments: q a point -> closest point of p to it; p a point -> of q to it
    u = np.where(~e_ok, np.clip(-c / safe_a, 0, 1), u)
    v = np.where(~e_ok, 0.0, v)
    u = np.where(~a_ok, 0.0, u)
    v = np.where(~a_ok, np.where(e_ok, np.clip(f / safe_e, 0, 1), 0.0), v)
    cp = p0 + u[..., None] * d1
    cq = q0 + v[..., None] * d2
    return np.linalg.norm(cp - cq, axis=-1), u, v


@dataclass(frozen=True, eq=False)
class WorldCollider:
    """A collider in world space: ``kind`` sphere/capsule/inside_sphere/inside_capsule/plane,
    ``head``/``tail`` (3,) metres (equal for spheres), ``radius`` metres, ``normal`` for planes."""

    kind: str
    head: np.ndarray
    tail: np.ndarray
    radius: float
    normal: np.ndarray | None = None


def segment_depths(a: np.ndarray, b: np.ndarray, radii: np.ndarray, col: WorldCollider) -> np.ndarray:
    """Penetration depth (metres, > 0 means inside) of segments a–b (S, 3) with hair radii (S,)."""
    if col.kind == "plane":
        da = (a - col.head) @ col.normal
        db = (b - col.head) @ col.normal
        return radii - np.minimum(da, db)
    if col.kind.startswith("inside_"):
        # a joint must stay inside: depth is how far the farther end pokes out
        d_a, _, _ = closest_segment_segment(a, a, col.head, col.tail)
        d_b, _, _ = closest_segment_segment(b, b, col.head, col.tail)
        return np.maximum(d_a, d_b) + radii - col.radius
    d, _, _ = closest_segment_segment(a, b, col.head, col.tail)
    return col.radius + radii - d


def point_depths(points: np.ndarray, col: WorldCollider) -> np.ndarray:
    """Depth (metres, > 0 inside) of points (P, 3) in a collider proxy (no hair radius)."""
    return segment_depths(points, points, np.zeros(len(points)), col)
