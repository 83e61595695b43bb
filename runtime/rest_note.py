"""Compare mode's "both at rest" note: once the head stops moving, both solvers bring the hair
to the same still pose and the two halves look identical; the HUD says why instead of leaving
the viewer to wonder whether compare mode works (issue 34, finding 9).

:class:`RestWatch` takes the chain tips of the rig and its companion once per drawn frame
(render thread; nothing runs per substep) and reports :data:`NOTE` when every tip of both has
moved slower than :data:`REST_SPEED_MM_S` for :data:`QUIET_S` seconds. The speed bound is the
settle meter's (runtime/settle.py: ``SETTLE_STEP_MM`` per 1/30 s sample = 0.3 mm/s), so "at
rest" here and "settled" there mean the same.
"""

from __future__ import annotations

import numpy as np

from .settle import QUIET_S, SAMPLE_HZ, SETTLE_STEP_MM

#: Tips slower than this are at rest, mm/s (the settle meter's bound, 0.01 mm per 1/30 s).
REST_SPEED_MM_S = SETTLE_STEP_MM * SAMPLE_HZ
#: The HUD's note while both are at rest.
NOTE = "both at rest: the solvers agree on a still pose"


def tips_of(rig) -> np.ndarray | None:
    """World positions of ``rig``'s chain tips, (N, 3) metres, or None without hair."""
    cs = getattr(rig, "chains", None)
    if cs is None:
        return None
    return np.array(cs.tails[cs.tips()], dtype=np.float64)


def max_speed_mm_s(before: np.ndarray, after: np.ndarray, dt_s: float) -> float:
    """Largest tip speed between two samples ``dt_s`` seconds apart, mm/s ((N, 3) metres each;
    0 with no tip). Raises ValueError when ``dt_s`` <= 0 or the shapes differ."""
    if not dt_s > 0:
        raise ValueError(f"rest note: dt_s must be > 0 (got {dt_s})")
    if before.shape != after.shape:
        raise ValueError(f"rest note: tips changed shape {before.shape} -> {after.shape}")
    if not len(after):
        return 0.0
    return 1e3 * float(np.linalg.norm(after - before, axis=1).max()) / dt_s


class RestWatch:
    """Whether both sides of compare mode have been at rest for :data:`QUIET_S` (module doc)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self._chains: tuple | None = None
        self._tips: tuple | None = None
        self._t: float | None = None
        self._still_since: float | None = None
        self._now: float | None = None

    def frame(self, rig, companion, t_s: float) -> None:
        """After a drawn frame at loop time ``t_s`` (seconds): take both rigs' tips. Without a
        companion (compare mode off) or hair the watch resets."""
        if companion is None or getattr(rig, "chains", None) is None or getattr(companion, "chains", None) is None:
            self.reset()
            return
        chains = (rig.chains, companion.chains)
        if self._chains is None or any(a is not b for a, b in zip(chains, self._chains)):
            self.reset()                                 # another rig: a solver switch, a hairstyle
            self._chains = chains
        tips = (tips_of(rig), tips_of(companion))
        if self._tips is not None and t_s > self._t:
            speed = max(max_speed_mm_s(a, b, t_s - self._t) for a, b in zip(self._tips, tips))
            if speed > REST_SPEED_MM_S:
                self._still_since = None
            elif self._still_since is None:
                self._still_since = self._t
        if self._tips is None or t_s > self._t:
            self._tips, self._t = tips, t_s
        self._now = t_s

    def at_rest(self) -> bool:
        """True when both sides' tips have been slower than :data:`REST_SPEED_MM_S` for
        :data:`QUIET_S` seconds up to the last frame."""
        return self._still_since is not None and self._now - self._still_since >= QUIET_S

    def text(self) -> str | None:
        """:data:`NOTE` while :meth:`at_rest`, else None."""
        return NOTE if self.at_rest() else None


__all__ = ["RestWatch", "NOTE", "REST_SPEED_MM_S", "max_speed_mm_s"]
