"""How far neighbouring chains of a sheet swing out of phase (issue 29's linked-sheet measure).

For every pair of neighbouring chains (the pairs a linked-sheet build joins,
:func:`solver.sheets.build_links`, whether or not the run solves the links) take the
linked tails nearest the chains' tips, segments (a, b), and their deviations from the rest
arc, u_a(t) = x_a(t) − x̂_a(t) and u_b(t) (metres, world; x̂ the rest arc carried by the
chain's anchor, :meth:`solver.chains.ChainSet.rest_arc_tails`), sampled during the motion.
With their means over the samples removed (ū),

    ρ = Σ_t ū_a · ū_b / sqrt(Σ_t |ū_a|² Σ_t |ū_b|²),   phase = arccos ρ  (degrees),

the normalised cross-correlation at lag 0: for two equal sinusoidal swings along one
direction, exactly their phase difference (0° in phase, 180° opposed); a swing that is
partly sideways to the other's adds to it. Pairs with no motion (Σ|ū|² = 0) are left out.
Also the relative swing, sqrt(mean_t |ū_a − ū_b|²) in mm: what skinning has to shear
between the two chains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PhaseResult:
    """Per measured pair: ``phase_deg`` (P,) degrees, ``shear_mm`` (P,) mm; ``pairs`` (P, 2)
    the segments measured. ``median_deg``/``max_deg``/``shear_median_mm``: over the pairs
    (nan without pairs)."""

    phase_deg: np.ndarray
    shear_mm: np.ndarray
    pairs: np.ndarray

    @property
    def median_deg(self) -> float | None:
        return float(np.median(self.phase_deg)) if self.phase_deg.size else None

    @property
    def max_deg(self) -> float | None:
        return float(self.phase_deg.max()) if self.phase_deg.size else None

    @property
    def shear_median_mm(self) -> float | None:
        return float(np.median(self.shear_mm)) if self.shear_mm.size else None


def tip_pairs(a: np.ndarray, b: np.ndarray, segment_chain: np.ndarray) -> np.ndarray:
    """(P, 2) one link per pair of chains: of the links (segments ``a``, ``b`` (L,)) between
    two chains, the one whose tails lie deepest in their chains (largest a + b index)."""
    best: dict[tuple[int, int], tuple[int, int]] = {}
    for sa, sb in zip(a.tolist(), b.tolist()):
        key = (int(segment_chain[sa]), int(segment_chain[sb]))
        if key not in best or sa + sb > sum(best[key]):
            best[key] = (sa, sb)
    return np.array(sorted(best.values()), np.int64).reshape(-1, 2)


class PhaseMeter:
    """Accumulates the deviations of the pairs' tails (module doc); :meth:`update` per sample,
    :meth:`result` at the end. Pairs (P, 2) segment indices."""

    def __init__(self, pairs: np.ndarray):
        self.pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
        self._u: list[np.ndarray] = []

    def update(self, tails: np.ndarray, arc: np.ndarray) -> None:
        """``tails``, ``arc``: (S, 3) current tails and rest-arc tails, metres."""
        if self.pairs.size:
            d = tails - arc
            self._u.append(np.stack([d[self.pairs[:, 0]], d[self.pairs[:, 1]]], axis=1))   # (P, 2, 3)

    def result(self) -> PhaseResult:
        if not self._u or not self.pairs.size:
            return PhaseResult(np.zeros(0), np.zeros(0), self.pairs)
        u = np.array(self._u)                     # (T, P, 2, 3)
        u = u - u.mean(axis=0)
        ua, ub = u[:, :, 0], u[:, :, 1]
        num = np.einsum("tpi,tpi->p", ua, ub)
        den = np.sqrt(np.einsum("tpi,tpi->p", ua, ua) * np.einsum("tpi,tpi->p", ub, ub))
        ok = den > 0.0
        rho = np.clip(num[ok] / den[ok], -1.0, 1.0)
        shear = 1e3 * np.sqrt(np.mean(np.sum((ua - ub) ** 2, axis=2), axis=0))
        return PhaseResult(np.degrees(np.arccos(rho)), shear[ok], self.pairs[ok])
