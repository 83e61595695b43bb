"""Which strands of a fitted hair carry spring chains (docs/history/tryon-notes.md, the seed articles).

- *Strands*: an attached guide, continued by the fragments joined to it (the longest line of
  descent): :func:`strands`, :func:`strand_curve`; or, for a piece that leaves the head as a
  sheet, its flow lines (:mod:`avatars.tryon.flow`).
- *Choice* (:func:`choose`): at most ``max_chains`` strands. First every loose piece of the
  mesh (a card, a lock, a sheet; the largest first) gets the chain of its longest strand, so
  hair pieces are owned by a chain of their own. Then strands are added where they add the
  most (loose length × distance to the chains in the same piece), never closer than
  ``separation`` to a chain running through the same piece: two chains moving differently
  inside one bundle would tear it, while separate pieces may move apart.
- *Short hair* (:func:`short_chains`): a style with no strand long enough for the main choice
  gets chains on its strands whose loose part is at least ``short_loose`` (a crop's fringe,
  short02's locks; chosen like the main ones; on a style with long hair, chains on its short
  pieces — such as ponytail01's hair tie — swung them into the long hair: p99 3.3 → 4.4 %); a
  large piece (:data:`SWAY_PIECE` of the hair) still without one, and a style with no chain
  at all, gets one on the end of its longest strand, made loose if nothing leaves the band:
  a style whose pieces are all short still sways (the articles kept short crops rigid).

A candidate strand is a :class:`Strand`. Lengths in metres; the options are
:class:`avatars.tryon.autorig.RigOptions` (head heights).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .guides import Guide
from .join import JoinResult

#: A piece without a chain holding at least this share of the hair gets one on the end of its
#: longest strand even when it lies within the attachment band (it sways).
SWAY_PIECE = 0.1


@dataclass(frozen=True, eq=False)
class Strand:
    """A candidate for a chain.

    Attributes:
        guide: its attached guide (the piece, the attachment it falls back to).
        line: guide indices of the strand (the guide, then joined fragments).
        curve: (P, 3) the strand's polyline, root first, metres.
        s: (P,) arc length along ``curve``.
        exit_i: index of the point where it leaves the attachment band.
        loose: arc length from there to its end.
        path: graph nodes of its surface path, root first.
        pieces: graph pieces it runs through.
        flow: traced along the flow of its sheet (:mod:`avatars.tryon.flow`), not a guide.
    """

    guide: int
    line: tuple[int, ...]
    curve: np.ndarray
    s: np.ndarray
    exit_i: int
    loose: float
    path: np.ndarray
    pieces: frozenset
    flow: bool = False

    def swayed(self, length: float) -> "Strand":
        """This strand with its last ``length`` metres (at most half of it) made loose when it
        never leaves the band."""
        if self.loose >= length:
            return self
        from dataclasses import replace

        exit_i = int(np.clip(np.searchsorted(self.s, self.s[-1] - min(length, 0.5 * self.s[-1])), 0, len(self.s) - 2))
        return replace(self, exit_i=exit_i, loose=float(self.s[-1] - self.s[exit_i]))


def strands(guides: list[Guide], attached: np.ndarray, join: JoinResult) -> dict[int, list[int]]:
    """For every attached guide, the guide indices of its strand: itself, then the longest
    line of joined fragments below it."""
    children: dict[int, list[int]] = {}
    for i, p in enumerate(join.parent):
        if p >= 0:
            children.setdefault(int(p), []).append(i)

    def longest(i: int) -> list[int]:
        best: list[int] = []
        for c in children.get(i, []):
            line = longest(c)
            if sum(guides[k].length for k in line) > sum(guides[k].length for k in best):
                best = line
        return [i] + best

    return {int(i): longest(int(i)) for i in np.nonzero(attached)[0]}


def strand_curve(guides: list[Guide], line: list[int], join: JoinResult) -> np.ndarray:
    """(P, 3) polyline of a strand (fragments oriented to continue their parent)."""
    parts = []
    for k in line:
        p = guides[k].points
        parts.append(p[::-1] if join.flipped[k] else p)
    return np.concatenate(parts)


def _arc(p: np.ndarray) -> np.ndarray:
    return np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]



def _at(p: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.stack([np.interp(t, s, p[:, k]) for k in range(3)], axis=1)



def arc(p: np.ndarray) -> np.ndarray:
    """(P,) arc length along a polyline (P, 3)."""
    return np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]


def at(p: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """(T, 3) points of polyline ``p`` with arc lengths ``s`` at arc lengths ``t``."""
    return np.stack([np.interp(t, s, p[:, k]) for k in range(3)], axis=1)


def loose_samples(c: Strand, n: int = 9) -> np.ndarray:
    """(n, 3) points at equal arc steps along a strand's loose part (its exit to its end)."""
    return at(c.curve, c.s, c.s[c.exit_i] + (c.s[-1] - c.s[c.exit_i]) * np.linspace(0.0, 1.0, n))


def choose(cands: list[Strand], limit: int, sep: float, notes: list[str]) -> list[Strand]:
    """Pick chains (module doc): first the longest strand of every loose piece of the mesh
    (largest pieces first), then more strands where they add the most, never closer than
    ``sep`` to a chosen chain that runs through the same piece."""
    samples = [loose_samples(c) for c in cands]
    pieces = [c.pieces for c in cands]
    size: dict[int, float] = {}
    for c, ps in zip(cands, pieces):
        for q in ps:
            size[q] = max(size.get(q, 0.0), c.loose)
    chosen: list[int] = []
    covered: set[int] = set()
    for q in sorted(size, key=lambda q: -size[q]):
        if len(chosen) >= limit:
            break
        if q in covered:
            continue
        best = max((i for i in range(len(cands)) if q in pieces[i] and i not in chosen), key=lambda i: cands[i].loose)
        chosen.append(best)
        covered |= pieces[best]
    uncovered = [q for q in size if q not in covered]
    if uncovered:
        notes.append(f"{len(uncovered)} loose pieces have no chain of their own (limit {limit}); they follow the nearest chains")

    ramp = np.maximum(np.linspace(0.0, 1.0, len(samples[0]) if samples else 1), 0.25)

    def gap(i: int) -> float:  # noqa: E306
        # closeness matters toward the tips (near their roots chains move alike)
        same = [j for j in chosen if pieces[j] & pieces[i]]
        if not same:
            return np.inf
        return min(float((np.linalg.norm(samples[i][:, None] - samples[j][None], axis=2).min(axis=1) / ramp).min())
                   for j in same)

    rest = [i for i in range(len(cands)) if i not in chosen]
    while rest and len(chosen) < limit:
        gaps = {i: gap(i) for i in rest}
        rest = [i for i in rest if gaps[i] >= sep]
        if not rest:
            break
        k = max(rest, key=lambda i: cands[i].loose * min(gaps[i], 1e3 * sep))
        rest.remove(k)
        chosen.append(k)
    follow = len(cands) - len(chosen) - len(rest)
    if rest:
        notes.append(f"{len(rest)} more strands could carry a chain (limit {limit})")
    if follow:
        notes.append(f"{follow} strands run within {sep:.3f} m of a chain in their piece and follow it")
    return [cands[i] for i in chosen]


def short_chains(short: list[Strand], chosen: list[Strand], o, H: float, notes: list[str],
                 piece_size: dict[int, int]) -> list[Strand]:
    """Chains for short hair (module doc, *Short hair*): when no strand is long enough for the
    main choice, the strands whose loose part is at least ``short_loose`` (chosen as the main
    ones); then a piece still without a chain that holds at least :data:`SWAY_PIECE` of the
    hair's nodes gets a chain on its longest strand's end (it sways), and a style with no
    chain at all gets one on its longest strand. ``o``: the rig options."""
    covered = {q for c in chosen for q in c.pieces}
    free = [c for c in short if not (c.pieces & covered)]
    budget = o.max_chains - len(chosen)
    # only a style with no long strand at all (a crop, short02): chains on the short pieces of a
    # style that has long ones (ponytail01's hair tie) swing them into the long hair
    out = choose([c for c in free if c.loose >= o.short_loose * H], budget, o.separation * H, []) \
        if budget > 0 and not chosen else []
    if out:
        notes.append(f"{len(out)} chains on short pieces (loose part {o.short_loose:g}-{o.min_loose:g} head heights)")
    covered |= {q for c in out for q in c.pieces}
    total = max(sum(piece_size.values()), 1)
    best: dict[int, Strand] = {}
    for c in free:
        q = min(c.pieces)
        if not (c.pieces & covered) and (q not in best or c.s[-1] > best[q].s[-1]):
            best[q] = c
    sway = [q for q in best if piece_size.get(q, 0) >= SWAY_PIECE * total or not (chosen or out)]
    sway = sorted(sway, key=lambda q: -piece_size.get(q, 0))[:max(budget - len(out), 0)]
    if not (chosen or out or sway) and best and budget > 0:
        sway = [max(best, key=lambda q: best[q].s[-1])]
    out += [best[q].swayed(o.short_loose * H) for q in sway]
    if sway:
        notes.append(f"{len(sway)} pieces lie within the attachment band: the end of their longest strand got a "
                     "chain (they sway)")
    return out
