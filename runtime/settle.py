"""The settle time of "move then settle" (the head turn then 8 s still: avatars/clips/head_turn.py),
measured live on the hair the session draws, the way the metrics measure it.

``swaycam metrics`` (solver/eval/measure.py) samples the chain tips every 4th 120 Hz substep
(30 Hz) and reports ``settle_mm``: the largest tip movement between consecutive samples in the
last :data:`WINDOW_S` seconds of the 12 s run. The meter samples the running chain set the
same way (when its step count passes a multiple of 4) and reports per cycle of the clip:

- ``last_2s_mm``: the metrics' measure over the cycle's last 2 s (clip time 10..12 s), of the
  last finished cycle;
- ``settle_s``: seconds from the end of the turn (clip time 4 s) to the last sample whose tip
  movement exceeded :data:`SETTLE_STEP_MM` (0 when none did): when the hair came to rest;
  "settling" until :data:`QUIET_S` has passed without such a movement.

Render thread, once per drawn frame (:meth:`SettleMeter.frame`); nothing runs per substep.
"""

from __future__ import annotations

import numpy as np

from avatars.clips.head_turn import DURATION_S, MOTION_S

from .clock import RATE_HZ

#: The clip the meter measures.
CLIP = "move-then-settle"
#: Tip samples per second (the metrics' SAMPLE_HZ) and substeps between two.
SAMPLE_HZ = 30
EVERY = RATE_HZ // SAMPLE_HZ
#: The metrics' settle window, seconds (solver/eval/measure.py SETTLE_WINDOW_S).
WINDOW_S = 2.0
#: A tip moving more than this between two samples (1/30 s) is still moving, mm (0.3 mm/s: at
#: rest to the eye; the default avatar's hair moves 0.57 mm per sample just after the turn).
SETTLE_STEP_MM = 0.01
#: Quiet time after which the hair counts as settled, seconds.
QUIET_S = 1.0


class SettleMeter:
    """Per-cycle settle time of the "move-then-settle" clip (module doc)."""

    def __init__(self):
        self.reset()
        self.last_2s_mm: float | None = None       # of the last finished cycle
        self.last_settle_s: float | None = None

    def reset(self) -> None:
        self._chains = None
        self._steps = -1
        self._tips: np.ndarray | None = None
        self._clip_t = -1.0
        self._last_exceed: float | None = None
        self._window_mm = 0.0
        self.clip_s: float | None = None
        #: this cycle's (clip time s, largest tip movement mm) per sample after the turn
        self.after_turn: list[tuple[float, float]] = []

    def frame(self, rig, t_ns: int) -> None:
        """After a frame's substeps: take the tips when the chain set passed a multiple of
        :data:`EVERY` substeps (``t_ns``: the loop time of the last substep)."""
        m, cs = rig.motion, rig.chains
        if m is None or cs is None or m.a is None or m.playing != CLIP:
            if self.clip_s is not None:
                self.reset()
            return
        if cs is not self._chains:                  # another rig (a solver switch, a hairstyle)
            self.reset()
            self._chains = cs
        steps = int(cs.steps)
        if steps // EVERY == self._steps // EVERY:
            return
        self._steps = steps
        t = m.clip_time(t_ns)
        tips = cs.tails[cs.tips()].copy()
        if t < self._clip_t:                        # a new cycle: close the last one
            self._finish()
        elif self._tips is not None and t >= MOTION_S:
            step_mm = 1e3 * float(np.linalg.norm(tips - self._tips, axis=1).max()) if len(tips) else 0.0
            self.after_turn.append((t, step_mm))
            if step_mm > SETTLE_STEP_MM:
                self._last_exceed = t
            if t > DURATION_S - WINDOW_S - 1e-9:
                self._window_mm = max(self._window_mm, step_mm)
        self._tips, self._clip_t, self.clip_s = tips, t, t

    def _finish(self) -> None:
        self.last_2s_mm = self._window_mm
        self.last_settle_s = 0.0 if self._last_exceed is None else self._last_exceed - MOTION_S
        self._last_exceed, self._window_mm, self._tips = None, 0.0, None
        self.last_after_turn, self.after_turn = self.after_turn, []

    def state(self) -> dict | None:
        """{"clip_s", "phase" ("moving", "settling", "settled"), "settle_s" (this cycle's, once
        settled), "last_settle_s", "last_2s_mm" (the last finished cycle's), "threshold_mm"},
        or None when "move-then-settle" does not play."""
        if self.clip_s is None:
            return None
        t = self.clip_s
        if t < MOTION_S:
            phase, settle = "moving", None
        else:
            since = MOTION_S if self._last_exceed is None else self._last_exceed
            phase = "settled" if t - since >= QUIET_S else "settling"
            settle = (since - MOTION_S) if phase == "settled" else None
        return {"clip_s": round(t, 3), "phase": phase, "settle_s": None if settle is None else round(settle, 3),
                "last_settle_s": self.last_settle_s, "last_2s_mm": self.last_2s_mm, "threshold_mm": SETTLE_STEP_MM}

    def text(self) -> str | None:
        """The HUD's line: "moving 2.1 s", "settling…", "settled in 0.93 s (last 2 s: 0.012 mm)"."""
        st = self.state()
        if st is None:
            return None
        last = f" (last 2 s: {st['last_2s_mm']:.3f} mm)" if st["last_2s_mm"] is not None else ""
        if st["phase"] == "moving":
            return f"moving {st['clip_s']:.1f} s" + last
        if st["phase"] == "settling":
            return "settling…" + last
        return f"settled in {st['settle_s']:.2f} s" + last


__all__ = ["SettleMeter", "SETTLE_STEP_MM"]
