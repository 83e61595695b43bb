"""Inspection views of a fitted hairstyle: the raw mesh, mesh + guides, guides only, and the
skin weights of one chain as a heat map.

Guides arrive as plain arrays (the try-on's :class:`avatars.tryon.guide_export.GuideSet` is
turned into a :class:`GuideLines` by the runtime; render/ does not import the try-on code)
and are drawn as overlay lines over the avatar, without depth test so they show through the
hair (:mod:`render.overlays`): cyan guides attached to the scalp, green fragments joined to
an attached guide, orange rejected ones (the seed articles' colours), and with "show
suggested roots" a yellow cross at each guide's suggested root. "Guides only" hides the
hair's mesh instance (the head and body stay, so a root is seen on the scalp) and draws the
guides depth-tested against the body (:attr:`GuideLines.depth`): those behind the head are
hidden by it, while over the mesh they show through the hair. "weights" hides the hair mesh
too and marks each hair vertex with a small cross coloured by the weight one chain's joints
have on it (:class:`WeightPoints`: blue 0 -> green -> red 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Inspection modes, in the order a key cycles them.
INSPECT_MODES = ("mesh", "mesh+guides", "guides", "weights")
#: Guide colours by state code (0 attached, 1 joined, 2 rejected), linear RGBA.
STATE_COLORS = ((0.0, 0.85, 1.0, 1.0), (0.35, 1.0, 0.3, 1.0), (1.0, 0.35, 0.0, 1.0))
ATTACHED_COLOR, JOINED_COLOR, REJECTED_COLOR = STATE_COLORS
#: Suggested roots: crosses of this colour.
ROOT_COLOR = (1.0, 0.9, 0.0, 1.0)


def check_mode(mode: str) -> str:
    """``mode`` when it is one of :data:`INSPECT_MODES`. Raises ValueError naming the choices."""
    if mode not in INSPECT_MODES:
        raise ValueError(f"inspection view {mode!r}: expected one of {', '.join(INSPECT_MODES)}")
    return mode


def next_mode(mode: str) -> str:
    """The mode after ``mode`` in :data:`INSPECT_MODES` (cycling)."""
    return INSPECT_MODES[(INSPECT_MODES.index(check_mode(mode)) + 1) % len(INSPECT_MODES)]


@dataclass(frozen=True, eq=False)
class GuideLines:
    """Guide curves to draw (G guides, T points).

    Attributes:
        points: (T, 3) world metres; guide g is ``points[offsets[g]:offsets[g + 1]]``.
        offsets: (G + 1,) int.
        state: (G,) int 0 attached, 1 joined, 2 rejected (:data:`STATE_COLORS`).
        roots: (G, 3) suggested roots (world metres), or None not to draw them.
        root_size: half-size of a root's cross, metres.
        depth: the curves drawn depth-tested against the mesh (the "guides" view), else
            through it; the roots are always drawn through it (they lie on the scalp).
    """

    points: np.ndarray
    offsets: np.ndarray
    state: np.ndarray
    roots: np.ndarray | None = None
    root_size: float = 0.006
    depth: bool = False

    def moved(self, transform: np.ndarray) -> "GuideLines":
        """The guides moved by the (4, 4) world ``transform`` (e.g. the head's motion from rest:
        ``world[head] @ inv(rest_world[head])``)."""
        m = np.asarray(transform, np.float64)
        mv = lambda p: None if p is None else np.asarray(p, np.float64) @ m[:3, :3].T + m[:3, 3]  # noqa: E731
        return GuideLines(mv(self.points), self.offsets, self.state, mv(self.roots), self.root_size, self.depth)


@dataclass(frozen=True, eq=False)
class WeightPoints:
    """Hair vertices coloured by one chain's skin weight.

    Attributes:
        points: (V, 3) world metres.
        weights: (V,) the chain's joints' summed weight on each vertex, 0..1.
        size: half-size of a vertex's cross, metres.
    """

    points: np.ndarray
    weights: np.ndarray
    size: float = 0.0025


def heat(w: np.ndarray) -> np.ndarray:
    """(V, 4) linear RGBA of weights ``w`` (V,) in 0..1: blue (0) -> green (0.5) -> red (1)."""
    w = np.clip(np.asarray(w, np.float64), 0.0, 1.0)
    r = np.clip(2.0 * w - 1.0, 0.0, 1.0)
    b = np.clip(1.0 - 2.0 * w, 0.0, 1.0)
    g = 1.0 - r - b
    return np.stack([r, g, b, np.ones_like(w)], axis=1).astype(np.float32)


def weight_segments(wp: WeightPoints) -> tuple[np.ndarray, np.ndarray]:
    """Segment endpoints (6V, 3) and colours (6V, 4): a 3-axis cross per vertex, coloured by :func:`heat`."""
    p = np.asarray(wp.points, np.float64).reshape(-1, 3)
    c = heat(wp.weights)
    pos = [np.stack([p - d, p + d], axis=1).reshape(-1, 3) for d in np.eye(3) * wp.size]
    col = [np.repeat(c, 2, axis=0)] * 3
    return np.concatenate(pos), np.concatenate(col)


def guide_segments(g: GuideLines) -> tuple[np.ndarray, np.ndarray]:
    """Segment endpoints (P, 3) float64 and colours (P, 4) float32 (P even) of ``g``: each curve's
    consecutive points, coloured by state; a 3-axis cross at each suggested root."""
    pts = np.asarray(g.points, np.float64).reshape(-1, 3)
    off = np.asarray(g.offsets, np.int64)
    state = np.asarray(g.state, np.int64)
    if len(off) != len(state) + 1 or (len(off) and off[-1] != len(pts)):
        raise ValueError(f"guide lines: {len(state)} states, {len(off)} offsets for {len(pts)} points")
    if np.any((state < 0) | (state >= len(STATE_COLORS))):
        raise ValueError("guide lines: a state is not 0 (attached), 1 (joined) or 2 (rejected)")
    guide_of = np.repeat(np.arange(len(state)), np.diff(off))
    seg = np.nonzero(guide_of[:-1] == guide_of[1:])[0] if len(pts) > 1 else np.zeros(0, np.int64)
    pos = [np.stack([pts[seg], pts[seg + 1]], axis=1).reshape(-1, 3)]
    col = [np.repeat(np.asarray(STATE_COLORS, np.float32)[state[guide_of[seg]]], 2, axis=0)]
    if g.roots is not None and len(g.roots):
        r = np.asarray(g.roots, np.float64).reshape(-1, 3)
        for d in np.eye(3) * g.root_size:
            pos.append(np.stack([r - d, r + d], axis=1).reshape(-1, 3))
            col.append(np.tile(np.asarray(ROOT_COLOR, np.float32), (2 * len(r), 1)))
    return np.concatenate(pos), np.concatenate(col)


__all__ = ["ATTACHED_COLOR", "GuideLines", "INSPECT_MODES", "JOINED_COLOR", "REJECTED_COLOR", "ROOT_COLOR",
           "STATE_COLORS", "WeightPoints", "check_mode", "guide_segments", "heat", "next_mode", "weight_segments"]
