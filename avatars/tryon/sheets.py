"""Which try-on chains carry one connected hair sheet, which are neighbours, and how far a
joint may bend: the data the solver's linked sheets will need (issue 29: sideways links
between neighbouring chains, solved with contact and length; root-bend limits).

- *Sheets* (:func:`sheet_links`): a connected piece of the welded hair graph (:mod:`.graph`)
  through whose loose part (beyond the attachment band) two or more chains run; each such
  piece gets a sheet index, each of its chains that index (``Spring.sheet``).
- *Neighbours*: two chains of one sheet whose hair meets: each graph node of the sheet
  belongs to the chain that carries most of its weight (:mod:`.weights`, the dense node
  weights), and a mesh edge joining nodes of chains a and b makes them neighbours (``shared``
  counts those edges). Their link pairs every joint of a past the root (roots are fixed to
  the scalp) with the nearest joint of b past its root, with the rest distance of each pair,
  metres (:class:`avatars.model.SpringLink`).
- *Bend limits* (:func:`bend_limits`): per joint a cone limit, the largest angle between its
  segment and its rest direction, ramping from :data:`ROOT_BEND_DEG` at the root (fitted
  hair leaves the scalp stiffly; the spring contact and the stiffer root spring already
  keep it there) to :data:`TIP_BEND_DEG` at the last segment; the tip joint has no segment
  and no limit (``SpringJoint.max_bend``).

Exported in the VRM's ``extras`` (:mod:`avatars.springs` documents the keys); nothing
enforces them yet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .autorig import Chain
from .graph import HairGraph

#: Cone limit of a chain's root joint, degrees.
ROOT_BEND_DEG = 30.0
#: Cone limit of its last segment, degrees.
TIP_BEND_DEG = 75.0


@dataclass(frozen=True, eq=False)
class Sheets:
    """The sheet of each chain (C,) int (−1: its piece carries no other chain) and the
    neighbour links [(chain a, chain b, ((i, i), ...), rest (K,) metres, shared edges)]."""

    sheet: np.ndarray
    links: tuple[tuple[int, int, tuple[tuple[int, int], ...], tuple[float, ...], int], ...]

    @property
    def count(self) -> int:
        """Number of sheets."""
        return int(self.sheet.max(initial=-1)) + 1


def bend_limits(n: int) -> tuple[float | None, ...]:
    """Per joint of an ``n``-joint chain its cone limit, radians (module doc); None for the tip."""
    if n < 2:
        return (None,) * n
    ramp = np.linspace(ROOT_BEND_DEG, TIP_BEND_DEG, n - 1)
    return tuple(float(np.radians(a)) for a in ramp) + (None,)


def sheet_links(graph: HairGraph, chains: list[Chain], dense: np.ndarray, skin_nodes: list[int],
                loose: np.ndarray) -> Sheets:
    """The :class:`Sheets` of a rig (module doc).

    Args:
        dense: (N, J) node weights over ``skin_nodes`` (the head, the chains' joints, ...).
        loose: (N,) bool, nodes beyond the attachment band.
    """
    if not chains:
        return Sheets(np.zeros(0, np.int64), ())
    col = {int(n): j for j, n in enumerate(skin_nodes)}
    share = np.stack([dense[:, [col[int(x)] for x in c.nodes]].sum(axis=1) for c in chains], axis=1)
    owner = np.argmax(share, axis=1)
    owner[share.max(axis=1) <= 1e-6] = -1
    comp = graph.component
    by_piece: dict[int, set[int]] = {}
    for k, c in enumerate(chains):
        for q in np.unique(comp[c.path[loose[c.path]]]) if c.path.size else ():
            by_piece.setdefault(int(q), set()).add(k)
    sheet = np.full(len(chains), -1, np.int64)
    for s, q in enumerate(sorted(q for q, ks in by_piece.items() if len(ks) >= 2)):
        sheet[sorted(by_piece[q])] = s
    e = graph.edges
    a, b = owner[e[:, 0]], owner[e[:, 1]]
    sa = np.where(a >= 0, sheet[np.maximum(a, 0)], -1)
    sb = np.where(b >= 0, sheet[np.maximum(b, 0)], -1)
    ok = (a != b) & (sa >= 0) & (sa == sb)
    if not ok.any():
        return Sheets(sheet, ())
    pairs, counts = np.unique(np.sort(np.stack([a[ok], b[ok]], axis=1), axis=1), axis=0, return_counts=True)
    links = []
    for (i, j), n_edges in zip(pairs, counts):
        ci, cj = chains[int(i)], chains[int(j)]
        d = np.linalg.norm(ci.joints[1:, None] - cj.joints[None, 1:], axis=2)     # past the roots
        jp = tuple(sorted({(k + 1, int(np.argmin(d[k])) + 1) for k in range(len(d))}))
        rest = tuple(float(d[p - 1, q - 1]) for p, q in jp)
        links.append((int(i), int(j), jp, rest, int(n_edges)))
    return Sheets(sheet, tuple(links))
