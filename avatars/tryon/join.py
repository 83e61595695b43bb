"""Fragment joining: a piece far from the scalp may continue an attached guide (seed articles).

Some hairstyles are many disconnected parts; a fragment whose root is too far from the scalp
may be the continuation of an attached strand. Both directions of the fragment are tested,
and it joins a guide only when its start lies within ``distance`` of that guide's end and
the two tangents agree (dot > ``min_dot``). Only validated guides (attached ones, then the
ones joined in earlier rounds) can be parents, so no cycle can form; the joined length, the
number of rounds and the candidates per round are capped. The articles' thresholds (25 mm,
dot > 0.5) are prototype choices at their scene's scale; the pipeline scales the distance
with the head.

Joining is a proposal, not a proof: geometry being close does not show two parts are one
strand; the report counts what was joined so it can be reviewed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .guides import Guide


@dataclass(frozen=True)
class JoinOptions:
    """Joining thresholds (metres).

    Attributes:
        distance: largest gap between a parent's end and a fragment's start.
        min_dot: smallest dot product of the two unit tangents.
        tangent_span: arc length over which end tangents are measured.
        max_rounds: joining rounds (each may use guides joined in the previous one).
        max_length: longest joined strand (root to the last fragment's end).
    """

    distance: float = 0.025
    min_dot: float = 0.5
    tangent_span: float = 0.02
    max_rounds: int = 4
    max_length: float = 2.0


@dataclass(frozen=True, eq=False)
class JoinResult:
    """Per guide: ``parent`` (G,) int64 (−1 = none), ``flipped`` (G,) bool (the fragment was
    reversed to continue its parent), ``round`` (G,) int64 (0 = attached directly or not
    joined), and ``strand_length`` (G,) root-to-end length of validated guides."""

    parent: np.ndarray
    flipped: np.ndarray
    round: np.ndarray
    strand_length: np.ndarray

    @property
    def joined(self) -> np.ndarray:
        return self.parent >= 0


def join_fragments(guides: list[Guide], attached: np.ndarray, options: JoinOptions = JoinOptions()) -> JoinResult:
    """Join unattached fragments to validated guides (module doc).

    Args:
        guides: all candidate guides (oriented root first).
        attached: (G,) bool, the guides attached to the scalp directly.
    """
    o = options
    g = len(guides)
    parent = np.full(g, -1, np.int64)
    flipped = np.zeros(g, bool)
    rnd = np.zeros(g, np.int64)
    strand = np.array([gd.length if attached[i] else 0.0 for i, gd in enumerate(guides)])
    valid = np.asarray(attached, bool).copy()
    if g == 0:
        return JoinResult(parent, flipped, rnd, strand)
    starts = np.array([gd.points[0] for gd in guides])
    ends = np.array([gd.points[-1] for gd in guides])
    t_start = np.array([-gd.tangent(0, o.tangent_span) for gd in guides])   # into the curve at its start
    t_end = np.array([gd.tangent(-1, o.tangent_span) for gd in guides])     # along the curve at its end
    for r in range(1, o.max_rounds + 1):
        parents = np.nonzero(valid)[0]
        todo = np.nonzero(~valid)[0]
        if parents.size == 0 or todo.size == 0:
            break
        new = []
        for i in todo:
            best = None
            for flip in (False, True):
                s = ends[i] if flip else starts[i]
                ts = -t_end[i] if flip else t_start[i]
                d = np.linalg.norm(ends[parents] - s, axis=1)
                dots = t_end[parents] @ ts
                ok = (d <= o.distance) & (dots > o.min_dot) & (strand[parents] + guides[i].length <= o.max_length)
                if ok.any():
                    k = int(np.argmin(np.where(ok, d, np.inf)))
                    if best is None or d[k] < best[0]:
                        best = (float(d[k]), int(parents[k]), flip)
            if best is not None:
                new.append((int(i), best[1], best[2]))
        if not new:
            break
        for i, p, flip in new:
            parent[i], flipped[i], rnd[i] = p, flip, r
            strand[i] = strand[p] + guides[i].length
            valid[i] = True
    return JoinResult(parent, flipped, rnd, strand)
