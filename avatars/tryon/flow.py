"""The flow of a fitted hair over its surface: root to tip, along the hair, not across it.

A hair leaves the head where it stops lying on it. The *root band* is the set of graph nodes
within the attachment band of the head envelope (``band`` head heights; :mod:`.weights` uses
the same band); the *flow distance* of a node is the length of the shortest surface path from
the root band to it (multi-source Dijkstra over the welded graph, :mod:`.graph`), and its
predecessors lead back to the band: a *flow line*. Shortest paths from a band never cross,
so the flow lines of a sheet hang side by side, down a curtain, around a bob, along a tail.

Uses:

- :func:`flow_strands`: chain candidates traced along the flow of each piece, from the far
  tips of its loose part (local maxima of the flow distance, and far-rim boundary leaves
  ≥ ``spacing`` apart) back to the band — a sheet's chains then hang where its hair hangs
  instead of along the diagonal surface paths from the piece's highest node, which run
  across a wide sheet to its lower corners;
- :func:`flow_alignment`: whether a guide follows the flow (1: straight from root to tip; 0:
  across; < 0: reversed, tip to root), for the guide report (:mod:`.pipeline`).

Units: metres; frames: the fitted rest pose.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse.csgraph import dijkstra

from .graph import HairGraph
from .guides import boundary_nodes, resample, smooth_polyline


@dataclass(frozen=True, eq=False)
class Flow:
    """Flow distance (N,) metres from the root band (inf where a piece has no band),
    predecessor (N,) toward it (−1 at band nodes and unreachable ones), band (N,) bool."""

    dist: np.ndarray
    pred: np.ndarray
    band: np.ndarray

    def line(self, tip: int) -> np.ndarray:
        """Graph nodes of the flow line from the band to ``tip`` (band node first)."""
        out = [int(tip)]
        while self.pred[out[-1]] >= 0:
            out.append(int(self.pred[out[-1]]))
        return np.array(out[::-1], np.int64)


def flow_field(graph: HairGraph, out_dist: np.ndarray, band: float) -> Flow:
    """The :class:`Flow` of a hair graph whose nodes lie ``out_dist`` (N,) metres outside the
    head envelope (negative inside), with a root band ``band`` metres wide."""
    on = out_dist <= band
    n = graph.node_count
    if not on.any():
        return Flow(np.full(n, np.inf), np.full(n, -1, np.int64), on)
    d, pred, _ = dijkstra(graph.matrix, directed=False, indices=np.nonzero(on)[0], min_only=True,
                          return_predecessors=True)
    pred = np.where(on, -1, pred).astype(np.int64)
    pred[pred < 0] = -1
    return Flow(d, pred, on)


def flow_tips(graph: HairGraph, flow: Flow, piece: int, spacing: float, min_length: float,
              max_tips: int = 64) -> np.ndarray:
    """Far tips of a piece's loose part, farthest first, at least ``spacing`` apart: local
    maxima of the flow distance and boundary leaves of the flow tree in its far part (≥ 60 %
    of the farthest), beyond ``min_length``."""
    members = np.nonzero(graph.component == piece)[0]
    d = flow.dist
    if members.size == 0 or not np.isfinite(d[members]).any():
        return np.zeros(0, np.int64)
    dm = np.where(np.isfinite(d), d, -1.0)
    e = graph.edges[graph.component[graph.edges[:, 0]] == piece]
    is_max = np.zeros(graph.node_count, bool)
    is_max[members] = True
    is_max[e[:, 0][dm[e[:, 0]] < dm[e[:, 1]]]] = False
    is_max[e[:, 1][dm[e[:, 1]] < dm[e[:, 0]]]] = False
    leaf = np.ones(graph.node_count, bool)
    leaf[flow.pred[members][flow.pred[members] >= 0]] = False
    far = dm[members].max()
    rim = boundary_nodes(graph)[members] & leaf[members] & (dm[members] >= 0.6 * far)
    cand = members[(is_max[members] | rim) & (dm[members] >= min_length)]
    cand = cand[np.argsort(-dm[cand], kind="stable")]
    chosen: list[int] = []
    for i in cand:
        if len(chosen) >= max_tips:
            break
        if chosen and np.min(np.linalg.norm(graph.points[chosen] - graph.points[i], axis=1)) < spacing:
            continue
        chosen.append(int(i))
    return np.array(chosen, np.int64)


def flow_curve(graph: HairGraph, line: np.ndarray, step: float, max_points: int, smooth_passes: int
               ) -> tuple[np.ndarray, float]:
    """(points, arc length) of a flow line: smoothed (ends fixed) and resampled like a guide."""
    curve = smooth_polyline(graph.points[line], smooth_passes)
    return resample(curve, step, max_points, np.inf)


def flow_alignment(flow: Flow, graph: HairGraph, path: np.ndarray) -> float:
    """How a guide (graph ``path``, root first) follows the flow over its loose part: (flow
    distance gained from its first loose node to its end) / (its surface length there); 1
    along the flow, about 0 across it, negative reversed. 1 for a guide with no loose part
    (nothing to check)."""
    d = flow.dist[path]
    loose = np.nonzero(np.isfinite(d) & (d > 0))[0]
    if loose.size < 2:
        return 1.0
    a, b = loose[0], loose[-1]
    seg = float(np.sum(np.linalg.norm(np.diff(graph.points[path[a:b + 1]], axis=0), axis=1)))
    return float((d[b] - d[a]) / seg) if seg > 1e-9 else 1.0
