"""Triggered expressions (panel buttons, hotkeys, ``POST /expression``) on top of the tracked
ones, with fades.

A triggered expression ramps linearly from its current weight to its target over ``fade_ms``
(fade in, and fade out when released with weight 0). While any triggered expression has
weight w > 0 it overrides the tracked emotion: the tracked emotions (happy, angry, sad,
relaxed, surprised) and the tracked value of the triggered expression itself are scaled by
(1 − w), and the triggered expression's weight is w. Blink, gaze and mouth keep coming from
tracking; the VRM override rules (``overrideBlink`` / ``overrideLookAt`` / ``overrideMouth``
"block" or "blend") are then applied by the renderer to the combined weights
(:func:`render.expressions.effective_values`), so a "happy" whose overrideBlink is "block"
stops the tracked blink for as long as it shows.

Thread use: :meth:`ExpressionOverlay.trigger` from any thread (a lock), :meth:`apply` on the
render thread with the clock's wall time.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from ..errors import SettingsError

#: Tracked expressions a triggered one overrides (docs/design.md §5's emotion presets).
EMOTIONS = ("happy", "angry", "sad", "relaxed", "surprised")
#: Fade used when a request does not give one, milliseconds.
DEFAULT_FADE_MS = 150.0
#: Longest fade accepted, milliseconds.
MAX_FADE_MS = 10_000.0


@dataclass
class _Ramp:
    start: float
    target: float
    t0_ns: int
    fade_ns: int

    def value(self, t_ns: int) -> float:
        if self.fade_ns <= 0 or t_ns >= self.t0_ns + self.fade_ns:
            return self.target
        u = max(0.0, (t_ns - self.t0_ns) / self.fade_ns)
        return self.start + (self.target - self.start) * u


class ExpressionOverlay:
    """Triggered expression weights over time (module doc).

    Args:
        clock_ns: the wall clock (integer ns) ramps are timed with.
    """

    def __init__(self, clock_ns):
        self.clock_ns = clock_ns
        self._ramps: dict[str, _Ramp] = {}
        self._lock = threading.Lock()

    def trigger(self, name: str, weight: float = 1.0, fade_ms: float = DEFAULT_FADE_MS) -> None:
        """Ramp ``name`` to ``weight`` (0..1; 0 releases it) over ``fade_ms`` from its current
        weight. Raises SettingsError for a weight or fade out of range (nothing changes)."""
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) \
                or not 0.0 <= weight <= 1.0:
            raise SettingsError(f"'weight' {weight!r} must be a number in 0..1")
        if isinstance(fade_ms, bool) or not isinstance(fade_ms, (int, float)) or not math.isfinite(fade_ms) \
                or not 0.0 <= fade_ms <= MAX_FADE_MS:
            raise SettingsError(f"'fade_ms' {fade_ms!r} must be a number in 0..{MAX_FADE_MS:g}")
        now = self.clock_ns()
        with self._lock:
            r = self._ramps.get(name)
            start = r.value(now) if r is not None else 0.0
            self._ramps[name] = _Ramp(start, float(weight), now, int(fade_ms * 1e6))

    def release_all(self, fade_ms: float = DEFAULT_FADE_MS) -> None:
        """Fade every triggered expression out."""
        for name in list(self._ramps):
            self.trigger(name, 0.0, fade_ms)

    def weights(self, t_ns: int | None = None) -> dict[str, float]:
        """{name: weight} of the triggered expressions at ``t_ns`` (default now), zeros left out."""
        t = self.clock_ns() if t_ns is None else t_ns
        with self._lock:
            out = {}
            for name, r in list(self._ramps.items()):
                v = r.value(t)
                if v > 0.0:
                    out[name] = v
                elif r.target == 0.0 and t >= r.t0_ns + r.fade_ns:
                    del self._ramps[name]       # faded out: forget it
            return out

    def targets(self) -> dict[str, float]:
        """{name: target weight} of every expression triggered and not released."""
        with self._lock:
            return {n: r.target for n, r in self._ramps.items() if r.target > 0.0}

    def apply(self, tracked: dict | None, t_ns: int | None = None) -> dict | None:
        """The tracked weights with the triggered ones on top (module doc); ``tracked``
        itself (the same object) when nothing is triggered."""
        if not self._ramps:
            return tracked
        trig = self.weights(t_ns)
        if not trig:
            return tracked
        out = dict(tracked or {})
        keep = 1.0 - max(trig.values())
        for name in EMOTIONS:
            if name in out:
                out[name] *= keep
        for name, w in trig.items():
            out[name] = w if name in EMOTIONS else w + (1.0 - w) * out.get(name, 0.0)
        return out
