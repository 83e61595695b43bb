"""Geometry for the try-on: closest points on triangles, inside tests, the radial head envelope.

- :class:`TriangleIndex`: exact closest points of query points on a triangle mesh (a k-d tree
  over triangle centroids finds candidates, :func:`trimesh.triangles.closest_point` measures
  them; a candidate set is provably complete when the best distance is below the k-th
  centroid distance minus the largest centroid-to-corner radius, otherwise a ball query
  widens it). trimesh's own ``closest_point`` needs ``rtree``, which swaycam does not use.
- :func:`winding_numbers`: generalized winding number of points w.r.t. a (possibly open)
  triangle mesh (Jacobson et al., "Robust Inside-Outside Segmentation using Generalized
  Winding Numbers", SIGGRAPH 2013): Σ solid angles / 4π, > 0.5 inside. Van Oosterom &
  Strackee (1983) give the solid angle of one triangle.
- :class:`RadialEnvelope`: a star-shaped approximation of a head around its centre, the
  largest surface radius per direction on an (azimuth, elevation) grid, dilated by one cell
  so the envelope contains the surface. ``radius(dirs)`` interpolates it; "inside the
  envelope" is |p − c| < radius(p − c). This is the "approximate head envelope" of the seed
  articles' fitter: cheap, smooth, and conservative for push-out.

Shapes: points (P, 3), vertices (V, 3), faces (F, 3) int; metres.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree
from trimesh.triangles import closest_point as _tri_closest

from .errors import FitError


class TriangleIndex:
    """Closest-point queries on a fixed triangle mesh (see module doc).

    Args:
        vertices: (V, 3) float64.
        faces: (F, 3) int64; F ≥ 1.

    Raises:
        FitError: ``faces`` is empty.
    """

    def __init__(self, vertices: np.ndarray, faces: np.ndarray):
        self.vertices = np.asarray(vertices, np.float64)
        self.faces = np.asarray(faces, np.int64)
        if len(self.faces) == 0:
            raise FitError("TriangleIndex needs at least one triangle")
        self.triangles = self.vertices[self.faces]
        self.centroids = self.triangles.mean(axis=1)
        self.rmax = float(np.linalg.norm(self.triangles - self.centroids[:, None], axis=2).max())
        self.tree = cKDTree(self.centroids)

    def query(self, points: np.ndarray, k: int = 12, max_distance: float = np.inf
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(closest (P, 3), distance (P,), face (P,)) for ``points`` (P, 3).

        Points provably farther than ``max_distance`` from every triangle get distance inf,
        face −1 and their own position as the closest point (not searched further)."""
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        n = len(pts)
        if n == 0:
            return np.zeros((0, 3)), np.zeros(0), np.zeros(0, np.int64)
        k = int(min(k, len(self.faces)))
        cd, ci = self.tree.query(pts, k=k)
        cd = cd.reshape(n, k)
        ci = ci.reshape(n, k)
        far = cd[:, 0] - self.rmax > max_distance
        best_p, best_d, best_f = pts.copy(), np.full(n, np.inf), np.full(n, -1, np.int64)
        near = np.nonzero(~far)[0]
        if near.size:
            cp = _tri_closest(self.triangles[ci[near].reshape(-1)], np.repeat(pts[near], k, axis=0)).reshape(-1, k, 3)
            d = np.linalg.norm(cp - pts[near, None], axis=2)
            j = np.argmin(d, axis=1)
            rows = np.arange(near.size)
            best_p[near], best_d[near], best_f[near] = cp[rows, j], d[rows, j], ci[near, j]
        if k < len(self.faces):
            unsure = near[(best_d[near] > cd[near, -1] - self.rmax) & (best_d[near] - self.rmax <= max_distance)]
        else:
            unsure = np.zeros(0, np.int64)
        if unsure.size:
            lists = self.tree.query_ball_point(pts[unsure], best_d[unsure] + self.rmax)
            owner = np.concatenate([np.full(len(c), i, np.int64) for i, c in zip(unsure, lists)])
            cand = np.concatenate([np.asarray(c, np.int64) for c in lists])
            if cand.size:
                q = _tri_closest(self.triangles[cand], pts[owner])
                dd = np.linalg.norm(q - pts[owner], axis=1)
                order = np.lexsort((dd, owner))
                first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
                better = dd[first] < best_d[owner[first]]
                o = owner[first][better]
                best_p[o], best_d[o], best_f[o] = q[first][better], dd[first][better], cand[first][better]
        return best_p, best_d, best_f


def barycentric(triangles: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(P, 3) barycentric weights of ``points`` (P, 3) on ``triangles`` (P, 3, 3) (the
    points' projections onto the triangles' planes; clipped to the triangle and renormalised)."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    v0, v1, v2 = b - a, c - a, points - a
    d00 = np.sum(v0 * v0, 1)
    d01 = np.sum(v0 * v1, 1)
    d11 = np.sum(v1 * v1, 1)
    d20 = np.sum(v2 * v0, 1)
    d21 = np.sum(v2 * v1, 1)
    den = d00 * d11 - d01 * d01
    den = np.where(np.abs(den) > 1e-300, den, 1e-300)
    v = (d11 * d20 - d01 * d21) / den
    w = (d00 * d21 - d01 * d20) / den
    bary = np.clip(np.stack([1.0 - v - w, v, w], axis=1), 0.0, 1.0)
    return bary / bary.sum(axis=1, keepdims=True)


def winding_numbers(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray, chunk: int = 2_000_000) -> np.ndarray:
    """(P,) generalized winding numbers of ``points`` (see module doc); faces oriented
    counter-clockwise seen from outside give +1 inside a closed mesh."""
    tri = np.asarray(vertices, np.float64)[np.asarray(faces, np.int64)]
    pts = np.asarray(points, np.float64).reshape(-1, 3)
    out = np.zeros(len(pts))
    step = max(1, chunk // max(len(tri), 1))
    for s in range(0, len(pts), step):
        p = pts[s:s + step]
        a = tri[None, :, 0] - p[:, None]
        b = tri[None, :, 1] - p[:, None]
        c = tri[None, :, 2] - p[:, None]
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        det = np.einsum("pfi,pfi->pf", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("pfi,pfi->pf", a, b) * lc + np.einsum("pfi,pfi->pf", b, c) * la
               + np.einsum("pfi,pfi->pf", c, a) * lb)
        out[s:s + step] = np.arctan2(det, den).sum(axis=1) / (2.0 * np.pi)
    return out


def sample_triangles(vertices: np.ndarray, faces: np.ndarray, spacing: float) -> np.ndarray:
    """Points (M, 3) covering every triangle with about ``spacing`` metres between them
    (corners, plus a barycentric grid on triangles larger than the spacing)."""
    v = np.asarray(vertices, np.float64)
    tri = v[np.asarray(faces, np.int64)]
    edge = np.max(np.linalg.norm(tri - np.roll(tri, 1, axis=1), axis=2), axis=1)
    n = np.clip(np.ceil(edge / max(spacing, 1e-9)).astype(int), 1, 64)
    out = [v[np.unique(faces)]]
    for m in np.unique(n[n > 1]):
        sel = tri[n == m]
        i, j = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
        keep = (i + j) <= m
        w = np.stack([m - i[keep] - j[keep], i[keep], j[keep]], axis=1) / m
        out.append(np.einsum("kb,tbi->tki", w, sel).reshape(-1, 3))
    return np.concatenate(out)


class RadialEnvelope:
    """Star-shaped envelope of a surface around ``center`` (see module doc).

    Args:
        center: (3,) metres.
        points: (M, 3) samples of the surface (dense enough for the grid).
        n_azimuth, n_elevation: grid cells (azimuth about +Y from +Z, elevation from -90°
            to +90°).
        dilate: cells of max-dilation (makes the envelope contain the sampled surface
            between grid nodes).
    """

    def __init__(self, center: np.ndarray, points: np.ndarray, n_azimuth: int = 72, n_elevation: int = 36,
                 dilate: int = 1):
        self.center = np.asarray(center, np.float64)
        self.na, self.ne = int(n_azimuth), int(n_elevation)
        d = np.asarray(points, np.float64) - self.center
        r = np.linalg.norm(d, axis=1)
        ia, ie = self._cells(d)
        grid = np.zeros((self.ne, self.na))
        np.maximum.at(grid, (ie, ia), r)
        for _ in range(int(dilate)):
            g = grid.copy()
            for de in (-1, 0, 1):
                for da in (-1, 0, 1):
                    sh = np.roll(grid, da, axis=1)
                    if de:
                        sh = np.roll(sh, de, axis=0)
                        sh[0 if de > 0 else -1] = grid[0 if de > 0 else -1]
                    g = np.maximum(g, sh)
            grid = g
        # empty cells (no surface in that direction, e.g. an open neck): nearest filled cell in
        # the same azimuth column, else the column's mean
        for a in range(self.na):
            col = grid[:, a]
            filled = np.nonzero(col > 0)[0]
            if filled.size and filled.size < self.ne:
                empty = np.nonzero(col <= 0)[0]
                col[empty] = col[filled[np.abs(empty[:, None] - filled[None]).argmin(axis=1)]]
        grid[grid <= 0] = grid[grid > 0].mean() if (grid > 0).any() else 0.0
        self.grid = grid

    def _cells(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        az = np.arctan2(d[:, 0], d[:, 2])
        el = np.arctan2(d[:, 1], np.hypot(d[:, 0], d[:, 2]))
        ia = np.floor((az + np.pi) / (2 * np.pi) * self.na).astype(int) % self.na
        ie = np.clip(np.floor((el + np.pi / 2) / np.pi * self.ne).astype(int), 0, self.ne - 1)
        return ia, ie

    def radius(self, dirs: np.ndarray) -> np.ndarray:
        """(P,) envelope radius along directions ``dirs`` (P, 3) (any length), bilinear in
        (azimuth, elevation) between cell centres."""
        d = np.asarray(dirs, np.float64).reshape(-1, 3)
        az = np.arctan2(d[:, 0], d[:, 2])
        el = np.arctan2(d[:, 1], np.hypot(d[:, 0], d[:, 2]))
        fa = (az + np.pi) / (2 * np.pi) * self.na - 0.5
        fe = np.clip((el + np.pi / 2) / np.pi * self.ne - 0.5, 0.0, self.ne - 1.0)
        a0 = np.floor(fa).astype(int)
        e0 = np.minimum(np.floor(fe).astype(int), self.ne - 2) if self.ne > 1 else np.zeros(len(d), int)
        ta, te = fa - a0, fe - e0
        a0 %= self.na
        a1 = (a0 + 1) % self.na
        e1 = np.minimum(e0 + 1, self.ne - 1)
        g = self.grid
        return ((1 - te) * ((1 - ta) * g[e0, a0] + ta * g[e0, a1]) + te * ((1 - ta) * g[e1, a0] + ta * g[e1, a1]))

    def floored(self, points: np.ndarray, margin: float) -> "RadialEnvelope":
        """A copy whose radius in every cell is at most that of ``points`` (P, 3) lying there
        (or in a neighbouring cell, so the bilinear lookup stays below them) less ``margin``
        metres: an envelope that holds none of ``points`` (a kept hair that hugs the head
        closer than the envelope does)."""
        d = np.asarray(points, np.float64).reshape(-1, 3) - self.center
        r = np.linalg.norm(d, axis=1) - margin
        ia, ie = self._cells(d)
        low = np.full_like(self.grid, np.inf)
        np.minimum.at(low, (ie, ia), r)
        g = low.copy()
        for de in (-1, 0, 1):
            for da in (-1, 0, 1):
                sh = np.roll(low, da, axis=1)
                if de:
                    sh = np.roll(sh, de, axis=0)
                    sh[0 if de > 0 else -1] = low[0 if de > 0 else -1]
                g = np.minimum(g, sh)
        out = object.__new__(RadialEnvelope)
        out.center, out.na, out.ne = self.center, self.na, self.ne
        out.grid = np.maximum(np.minimum(self.grid, g), 0.0)
        return out

    def depth(self, points: np.ndarray) -> np.ndarray:
        """(P,) how far points lie inside the envelope along their ray from the centre
        (metres, > 0 inside)."""
        d = np.asarray(points, np.float64).reshape(-1, 3) - self.center
        return self.radius(d) - np.linalg.norm(d, axis=1)
