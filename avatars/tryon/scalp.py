"""Scalp attachment: a guide root on a skinned scalp triangle (docs/design.md §9, seed articles).

A root is matched to the closest scalp triangle (:attr:`HeadModel.scalp`); when that is
farther than the limit, the attachment is rejected rather than stretched to the head. An
accepted attachment stores the triangle's vertex indices in its mesh primitive and the
barycentric weights of the closest point: the weights stay fixed while the triangle's
vertices move with the skin, so the root follows the skinned scalp exactly,

    x_root(t) = Σ_k b_k · z_k(t),   z_k(t) the skinned positions of the triangle's corners.

Because scalp triangles are skinned to the head bone alone (no morph target moves them),
x_root(t) = M_head(t) · IBM_head · Σ_k b_k v_k: a joint parented to the head at that point
reproduces it to rounding (the auto-rig does that; :mod:`solver.eval.tryon_quality` measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import TriangleIndex, barycentric
from .head import HeadModel


@dataclass(frozen=True, eq=False)
class ScalpAttachment:
    """A point on a scalp triangle.

    Attributes:
        face: index into ``HeadModel.faces``.
        source: (5,) int64 mesh instance, primitive and the triangle's three vertex indices.
        bary: (3,) float64 barycentric weights (sum 1).
        point: (3,) the point at rest, world metres (Σ b_k · rest corner k).
        distance: how far the matched curve point was from it, metres.
    """

    face: int
    source: np.ndarray
    bary: np.ndarray
    point: np.ndarray
    distance: float


class Scalp:
    """Closest-point matching on the scalp triangles of ``head``."""

    def __init__(self, head: HeadModel):
        self.head = head
        self.faces = head.faces[head.scalp]
        self.index = TriangleIndex(head.vertices, self.faces) if len(self.faces) else None

    def distance(self, points: np.ndarray) -> np.ndarray:
        """(P,) distance of points (P, 3) to the scalp (inf without scalp triangles)."""
        if self.index is None:
            return np.full(len(points), np.inf)
        return self.index.query(points)[1]

    def attach(self, points: np.ndarray, max_distance: float) -> list[ScalpAttachment | None]:
        """Attachments of ``points`` (P, 3); None where the scalp is farther than ``max_distance``."""
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        if self.index is None or len(pts) == 0:
            return [None] * len(pts)
        cp, dist, f = self.index.query(pts)
        tri = self.head.vertices[self.faces[f]]
        bary = barycentric(tri, cp)
        out: list[ScalpAttachment | None] = []
        for i in range(len(pts)):
            if dist[i] > max_distance:
                out.append(None)
                continue
            face = int(self.head.scalp[f[i]])
            out.append(ScalpAttachment(face=face, source=self.head.face_source[face].copy(), bary=bary[i],
                                       point=bary[i] @ tri[i], distance=float(dist[i])))
        return out
