"""Candidate guide curves from the hair's surface graph (docs/design.md §9, the seed articles).

Per connected piece of the welded graph (:mod:`avatars.tryon.graph`): from a root candidate
(the piece's highest node), Dijkstra's shortest surface paths reach every node; the
*distant endpoints* are the nodes farther along the surface than all their neighbours
(local maxima of the path length) and the boundary nodes where shortest paths end (leaves
of the path tree) in the far part of the piece (at least 60 % of the longest path: a wide
sheet's lower rim has maxima only at its corners, while paths end all along it), taken
longest first and at least ``spacing`` apart; the
path to each is smoothed (Laplacian, ends fixed) and resampled by arc length. A curve is
then flipped when its end lies closer to the scalp than its start: the high root was only a
suggestion. Pieces shorter than ``min_length`` give no guide: their nodes are *missed*.

These are candidate guide curves, not recovered hair fibres: a path may cross the intended
flow of a hair sheet (the articles say the same).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.sparse.csgraph import dijkstra

from .graph import HairGraph


@dataclass(frozen=True)
class GuideOptions:
    """Guide extraction settings (metres; scaled with the head by the pipeline).

    Attributes:
        spacing: smallest distance between two endpoints of one piece.
        min_length: shortest guide.
        step: resampling step along the curve.
        max_points: most points per curve (the step grows for long curves).
        max_per_piece: most guides per connected piece.
        max_length: longest curve (longer paths are cut).
        smooth_passes: Laplacian smoothing passes (λ = 0.5, ends fixed).
    """

    spacing: float = 0.03
    min_length: float = 0.02
    step: float = 0.005
    max_points: int = 96
    max_per_piece: int = 64
    max_length: float = 2.0
    smooth_passes: int = 8


@dataclass(frozen=True, eq=False)
class Guide:
    """One candidate guide.

    Attributes:
        points: (P, 3) resampled curve, metres, root first.
        path: (K,) graph nodes of the shortest path, root first.
        piece: connected-component label of the graph.
        length: arc length of ``points``, metres.
    """

    points: np.ndarray
    path: np.ndarray
    piece: int
    length: float

    def reversed(self) -> "Guide":
        return Guide(self.points[::-1].copy(), self.path[::-1].copy(), self.piece, self.length)

    def tangent(self, end: int, span: float) -> np.ndarray:
        """Unit direction of the curve at its start (``end`` = 0, pointing into the curve
        reversed: outward) or its end (``end`` = -1, pointing along the curve), measured over
        ``span`` metres."""
        p = self.points if end == -1 else self.points[::-1]
        s = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]
        k = int(np.searchsorted(s, s[-1] - span))
        k = min(max(k, 0), len(p) - 2)
        d = p[-1] - p[k]
        n = np.linalg.norm(d)
        return d / n if n > 0 else np.array([0.0, -1.0, 0.0])


def smooth_polyline(p: np.ndarray, passes: int) -> np.ndarray:
    """Laplacian smoothing (λ = 0.5) of a polyline (P, 3) with its ends fixed."""
    q = np.array(p, np.float64)
    for _ in range(passes):
        if len(q) < 3:
            break
        q[1:-1] = 0.5 * q[1:-1] + 0.25 * (q[:-2] + q[2:])
    return q


def resample(p: np.ndarray, step: float, max_points: int, max_length: float) -> tuple[np.ndarray, float]:
    """(points, arc length): ``p`` (P, 3) resampled at equal arc-length steps of about
    ``step`` (at most ``max_points`` points), cut at ``max_length``."""
    seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
    s = np.r_[0.0, np.cumsum(seg)]
    total = float(min(s[-1], max_length))
    if total <= 0:
        return p[:1].copy(), 0.0
    n = int(np.clip(np.ceil(total / step) + 1, 2, max_points))
    t = np.linspace(0.0, total, n)
    out = np.stack([np.interp(t, s, p[:, k]) for k in range(3)], axis=1)
    return out, total


def boundary_nodes(graph: HairGraph) -> np.ndarray:
    """(N,) bool: nodes on an edge used by a single triangle of the welded mesh."""
    tri = graph.triangles
    e = np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]]), axis=1)
    e = e[e[:, 0] != e[:, 1]]
    uniq, count = np.unique(e, axis=0, return_counts=True)
    out = np.zeros(graph.node_count, bool)
    out[uniq[count == 1].reshape(-1)] = True
    return out


def extract_guides(graph: HairGraph, scalp_distance: Callable[[np.ndarray], np.ndarray],
                   options: GuideOptions = GuideOptions(), *, pieces: np.ndarray | None = None,
                   roots: dict[int, int] | None = None) -> tuple[list[Guide], np.ndarray]:
    """Candidate guides of every piece (module doc).

    Args:
        graph: the welded surface graph.
        scalp_distance: (P, 3) points -> (P,) distance to the scalp, metres (for flipping).
        pieces: the pieces to trace (default all).
        roots: {piece: node} root candidates replacing the highest node (the pipeline gives a
            piece none of whose guides reached the scalp its node nearest the scalp: a bun
            at the side of the head touches it on its inner side, not at its top or bottom).

    Returns:
        (guides, missed): ``missed`` (N,) bool marks nodes of pieces that gave no guide.
    """
    o = options
    pts = graph.points
    missed = np.zeros(graph.node_count, bool)
    guides: list[Guide] = []
    e = graph.edges
    boundary = boundary_nodes(graph)
    roots = roots or {}
    for c in (range(graph.component_count) if pieces is None else pieces):
        members = np.nonzero(graph.component == c)[0]
        if len(members) < 3:
            missed[members] = True
            continue
        root = int(roots.get(c, members[np.argmax(pts[members, 1])]))
        dist, pred = dijkstra(graph.matrix, directed=False, indices=root, return_predecessors=True)
        d = np.where(np.isfinite(dist), dist, -1.0)
        is_max = np.zeros(graph.node_count, bool)
        is_max[members] = True
        in_c = graph.component[e[:, 0]] == c
        ea, eb = e[in_c, 0], e[in_c, 1]
        is_max[ea[d[ea] < d[eb]]] = False
        is_max[eb[d[eb] < d[ea]]] = False
        # distant endpoints: local maxima of the path length, and the far part of the piece's
        # boundary (a wide sheet's lower rim has maxima only at its corners)
        leaf = np.ones(graph.node_count, bool)       # ends of the shortest-path tree
        leaf[pred[members][pred[members] >= 0]] = False
        far_rim = boundary[members] & leaf[members] & (d[members] >= 0.6 * d[members].max())
        cand = members[(is_max[members] | far_rim) & (d[members] >= o.min_length)]
        if cand.size == 0:
            far = members[np.argmax(d[members])]
            if d[far] >= o.min_length:
                cand = np.array([far])
            else:
                missed[members] = True
                continue
        cand = cand[np.argsort(-d[cand], kind="stable")]
        chosen: list[int] = []
        for i in cand:
            if len(chosen) >= o.max_per_piece:
                break
            if chosen and np.min(np.linalg.norm(pts[chosen] - pts[i], axis=1)) < o.spacing:
                continue
            chosen.append(int(i))
        for end in chosen:
            path = [end]
            while path[-1] != root:
                path.append(int(pred[path[-1]]))
            path = np.array(path[::-1], np.int64)
            curve = smooth_polyline(pts[path], o.smooth_passes)
            curve, length = resample(curve, o.step, o.max_points, o.max_length)
            g = Guide(curve, path, c, length)
            ds = scalp_distance(curve[[0, -1]])
            if ds[1] < ds[0]:
                g = g.reversed()
            guides.append(g)
    return guides, missed
