"""Fragment joining: a piece far from the scalp may continue an attached guide (seed articles).

Some hairstyles are many disconnected parts; a fragment whose root is too far from the scalp
may be the continuation of an attached strand. Both directions of the fragment are tested,
and it joins a guide only when its start lies within ``distance`` of that guide's end and
the two directions agree (dot > ``min_dot``; the tangents over ``tangent_span``, or the
chord of a fragment shorter than :data:`SHORT_SPANS` spans, > ``min_dot_short``). A joined
short fragment then points where the strand goes over it and up to two short fragments
before it (a braid's lobes zig-zag: one lobe's chord does not follow the braid). Only validated guides (attached ones, then the
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


#: A joined fragment is ambiguous when another parent (or direction) passes the tests with a
#: gap at most this many times the chosen one.
AMBIGUOUS_RATIO = 1.5
#: Fragments shorter than this many tangent spans use their chord as their direction.
SHORT_SPANS = 3.0


@dataclass(frozen=True)
class JoinOptions:
    """Joining thresholds (metres).

    Attributes:
        distance: largest gap between a parent's end and a fragment's start.
        min_dot: smallest dot product of the two unit tangents.
        min_dot_short: the same for a fragment shorter than :data:`SHORT_SPANS` spans, whose
            chord is its direction (a braid's lobes squashed by the fit's length mapping lie
            almost across the braid: Godette's, 0.26 between a lobe and the two before it).
        tangent_span: arc length over which end tangents are measured.
        max_rounds: joining rounds (each may use guides joined in the previous one).
        max_length: longest joined strand (root to the last fragment's end).
    """

    distance: float = 0.025
    min_dot: float = 0.5
    min_dot_short: float = 0.25
    tangent_span: float = 0.02
    max_rounds: int = 24
    max_length: float = 2.0


@dataclass(frozen=True, eq=False)
class JoinResult:
    """Per guide: ``parent`` (G,) int64 (−1 = none), ``flipped`` (G,) bool (the fragment was
    reversed to continue its parent), ``round`` (G,) int64 (0 = attached directly or not
    joined), ``strand_length`` (G,) root-to-end length of validated guides, and
    ``ambiguous`` (G,) bool: a joined fragment that another parent (or the other direction)
    could have continued almost as well (within :data:`AMBIGUOUS_RATIO` of the chosen gap)."""

    parent: np.ndarray
    flipped: np.ndarray
    round: np.ndarray
    strand_length: np.ndarray
    ambiguous: np.ndarray | None = None

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
    ambiguous = np.zeros(g, bool)
    if g == 0:
        return JoinResult(parent, flipped, rnd, strand, ambiguous)
    starts = np.array([gd.points[0] for gd in guides])
    ends = np.array([gd.points[-1] for gd in guides])
    t_start = np.array([-_direction(gd, 0, o.tangent_span) for gd in guides])   # into the curve at its start
    t_end = np.array([_direction(gd, -1, o.tangent_span) for gd in guides])     # along the curve at its end
    starts_oriented = starts.copy()     # validated guides: start and end as joined (a flipped one reversed)
    for r in range(1, o.max_rounds + 1):
        parents = np.nonzero(valid)[0]
        todo = np.nonzero(~valid)[0]
        if parents.size == 0 or todo.size == 0:
            break
        new = []
        for i in todo:
            best = None
            gaps = []
            for flip in (False, True):
                s = ends[i] if flip else starts[i]
                ts = -t_end[i] if flip else t_start[i]
                d = np.linalg.norm(ends[parents] - s, axis=1)
                dots = t_end[parents] @ ts
                min_dot = o.min_dot_short if guides[i].length < SHORT_SPANS * o.tangent_span else o.min_dot
                ok = (d <= o.distance) & (dots > min_dot) & (strand[parents] + guides[i].length <= o.max_length)
                if ok.any():
                    gaps += list(d[ok])
                    k = int(np.argmin(np.where(ok, d, np.inf)))
                    if best is None or d[k] < best[0]:
                        best = (float(d[k]), int(parents[k]), flip)
            if best is not None:
                new.append((int(i), best[1], best[2]))
                ambiguous[i] = sum(x <= AMBIGUOUS_RATIO * max(best[0], 1e-6) for x in gaps) > 1
        if not new:
            break
        for i, p, flip in new:
            parent[i], flipped[i], rnd[i] = p, flip, r
            strand[i] = strand[p] + guides[i].length
            valid[i] = True
            # a joined fragment's end now points where the strand goes over it and its parent
            # (a braid's lobes zig-zag: each one's own chord does not)
            s_i, e_i = (ends[i], starts[i]) if flip else (starts[i], ends[i])
            short = SHORT_SPANS * o.tangent_span
            if guides[i].length < short:     # over up to two short fragments before it
                begin = s_i
                a = p
                for _ in range(2):
                    if a < 0 or guides[a].length >= short:
                        break
                    begin, a = starts_oriented[a], parent[a]
                d = e_i - begin
                n = float(np.linalg.norm(d))
                if n > 0:
                    t_end[i] = d / n
            elif flip:      # it continues out of its original start
                t_end[i] = _direction(guides[i], 0, o.tangent_span)
            starts_oriented[i] = s_i
            ends[i] = e_i
    return JoinResult(parent, flipped, rnd, strand, ambiguous)
