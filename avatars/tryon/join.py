"""Fragment joining: a piece far from the scalp may continue an attached guide (seed articles).

Some hairstyles are many disconnected parts; a fragment whose root is too far from the scalp
may be the continuation of an attached strand. Both directions of the fragment are tested,
and it joins a guide only when its start lies within ``distance`` of that guide's end and
the two directions agree (dot > ``min_dot``; the tangents over ``tangent_span``, or the
chord of a fragment shorter than :data:`SHORT_SPANS` spans). Only validated guides (attached ones, then the
ones joined in earlier rounds) can be parents, so no cycle can form; the joined length, the
number of rounds (24: a braid of lobes needs a round per lobe) and the candidates per round
are capped. The articles' thresholds (25 mm,
dot > 0.5) are prototype choices at their scene's scale; the pipeline scales the distance
with the head.

Joining is a proposal, not a proof: geometry being close does not show two parts are one
strand; the report counts what was joined so it can be reviewed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .guides import Guide


#: Fragments shorter than this many tangent spans use their chord as their direction.
SHORT_SPANS = 3.0


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
    max_rounds: int = 24
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


def _direction(g: Guide, end: int, span: float) -> np.ndarray:
    """The direction of a guide at an end (as :meth:`Guide.tangent`); for a fragment shorter
    than :data:`SHORT_SPANS` spans its chord (a short piece, e.g. a braid's lobe, has a
    surface path that curls around it at its ends: its direction is where it goes as a whole)."""
    if g.length >= SHORT_SPANS * span:
        return g.tangent(end, span)
    d = g.points[-1] - g.points[0]
    n = float(np.linalg.norm(d))
    d = d / n if n > 0 else np.array([0.0, -1.0, 0.0])
    return d if end == -1 else -d


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
    t_start = np.array([-_direction(gd, 0, o.tangent_span) for gd in guides])   # into the curve at its start
    t_end = np.array([_direction(gd, -1, o.tangent_span) for gd in guides])     # along the curve at its end
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
