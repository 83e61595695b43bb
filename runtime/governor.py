"""The quality governor of live runs (issue 32): when frames miss their budget it steps the
run's quality down a ladder ordered by what costs the viewer least, and back up when the
load goes.

The ladder (built by the session from what the run has; :class:`Rung`):

1. ``tracker``: MediaPipe on every other camera frame (:attr:`tracking.live.LiveTracking.stride`);
   the pose filter interpolates across the gap, the frame lock draws two frames per pose;
2. ``detail``: coarser reduced meshes (:data:`COARSE_PIXEL_ERROR` pixels instead of
   :data:`render.detail.PIXEL_ERROR`; only the index buffers change);
3. ``scale``: the render scale of a window (the window scales the smaller framebuffer up);
   only when no output reads pixels (a virtual camera's or a file's size is a promise);
4. ``outlines``: MToon outlines off (where they were on);
5. ``rate``: the window's output rate halved; only when the window is the only output (a
   virtual camera's or a recording's rate is a promise).

Rules (the frame's *work* is its wall time from its start to its hand-over to the outputs,
without the wait for its tick; a dropped output period counts as a missed frame):

- step **down** one rung when :attr:`GovernorOptions.misses` of the last
  :attr:`GovernorOptions.window` frames missed the budget (the frame period);
- step **up** one rung after :attr:`GovernorOptions.calm` frames in a row that met the budget,
  all but one in :data:`CALM_SLACK` of them calm (their work under
  :attr:`GovernorOptions.headroom` of the budget). A step up is a probe: when the same rung
  has to be taken again soon after (within the hold and two windows), the calm stretch that
  rung needs doubles (up to :data:`MAX_BACKOFF` times), so a load that needs the rung costs a
  short burst of misses ever more rarely instead of a flip-flop; a rung that stayed undone
  longer starts again from one stretch. (A cost measured from the frames around a step was
  tried first: under a load that comes and goes, the frames before and after a step do not
  see the same load, and the measured cost held the quality down after the load had gone.)
- after any change, :attr:`GovernorOptions.hold` frames with no decision, not counted (the
  windows start over after them), so one burst gives one step, not several; so do the first
  :attr:`GovernorOptions.warmup` frames of a run (compiling, first uploads, the tracker's
  first frames);
- ``pin`` fixes the level (``"full"``: never step; a rung's name: that rung and every one
  before it, whatever the load); ``"auto"`` lets the governor step.

Every change is logged once (``log.warning`` for a step down, ``log.info`` up), kept in
:attr:`QualityGovernor.steps` and reported by :meth:`QualityGovernor.status` (``GET /status``
under ``quality``, the HUD, the panel). The solver never sees any of it: substeps stay on
their fixed 120 Hz grid of loop time whatever a rung changes (docs/design.md §2).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

log = logging.getLogger(__name__)

#: The rungs in the order they are taken (the module doc).
RUNG_ORDER = ("tracker", "detail", "scale", "outlines", "rate")
#: ``pin`` values besides the rungs' names.
PINS = ("auto", "full")
#: The reduced meshes of the ``detail`` rung: largest surface displacement in output pixels.
COARSE_PIXEL_ERROR = 2.0
#: One frame in this many of a calm stretch may be predicted to miss with the rung undone
#: (one frame's hiccup on a shared machine does not hold the quality down; a miss does).
CALM_SLACK = 20
#: Most times the calm stretch of a rung that failed its probes grows.
MAX_BACKOFF = 8
#: The ``scale`` rung's render scale of a window.
WINDOW_SCALE = 0.75


@dataclass(frozen=True)
class GovernorOptions:
    """Settings of :class:`QualityGovernor` (frames are output frames).

    Attributes:
        pin: "auto", "full" or a rung name (:data:`RUNG_ORDER`; module doc).
        window, misses: step down when ``misses`` of the last ``window`` frames missed.
        calm: calm frames in a row before a step up.
        hold: frames without a decision after any change.
        headroom: share of the budget a calm frame's predicted work stays under (0..1].
        warmup: frames at the start of a run not counted.
        budget_ms: the frame budget, ms (None: the output frame period).
    """

    pin: str = "auto"
    window: int = 30
    misses: int = 10
    calm: int = 60
    hold: int = 20
    headroom: float = 0.85
    warmup: int = 30
    budget_ms: float | None = None

    def __post_init__(self):
        if self.pin not in PINS + RUNG_ORDER:
            raise ValueError(f"quality {self.pin!r}: one of {', '.join(PINS + RUNG_ORDER)}")
        if not 1 <= self.misses <= self.window:
            raise ValueError(f"governor misses {self.misses}: outside 1..window ({self.window})")
        if self.calm < 1 or self.hold < 0 or self.warmup < 0 or not 0.0 < self.headroom <= 1.0:
            raise ValueError(f"governor calm {self.calm} (>= 1), hold {self.hold} (>= 0), "
                             f"headroom {self.headroom} (0..1]")


@dataclass
class Rung:
    """One step of the ladder: ``apply(True)`` takes it, ``apply(False)`` undoes it (render
    thread, between frames). ``what``: the user's words for it (logs, HUD)."""

    name: str
    what: str
    apply: Callable[[bool], None]


@dataclass(frozen=True)
class Step:
    """One change of level: at output ``frame``, from ``level_from`` to ``level_to``, the rung
    ``rung`` taken (``down``) or undone; ``work_ms``: the work's median over the window before."""

    frame: int
    level_from: int
    level_to: int
    rung: str
    down: bool
    work_ms: float

    def as_dict(self) -> dict:
        return {"frame": self.frame, "from": self.level_from, "to": self.level_to, "rung": self.rung,
                "down": self.down, "work_ms": round(self.work_ms, 2)}


class QualityGovernor:
    """Watches each frame's work against ``budget_ms`` and steps through ``rungs`` (module doc).

    Args:
        rungs: the ladder (in :data:`RUNG_ORDER` order; rungs the run cannot take left out).
        budget_ms: the frame budget (the output frame period), ms.
        options: :class:`GovernorOptions`.

    :meth:`frame` is called by the render thread once per output frame; :meth:`status` from
    any thread.

    Raises:
        ValueError: a pin naming a rung this run does not have (the message lists them).
    """

    def __init__(self, rungs: list[Rung], budget_ms: float, options: GovernorOptions = GovernorOptions()):
        self.rungs = list(rungs)
        self.budget_ms = float(budget_ms if options.budget_ms is None else options.budget_ms)
        self.options = options
        self.level = 0
        self.frames = 0
        self.steps: list[Step] = []
        self._lock = threading.Lock()
        self._missed: deque[bool] = deque(maxlen=options.window)
        self._work: deque[float] = deque(maxlen=options.window)
        self._calm: deque[bool] = deque(maxlen=options.calm * MAX_BACKOFF)
        self._hold = options.warmup
        #: per rung: how many calm stretches its step up needs (probes failed), the frame it was last undone
        self.backoff: dict[str, int] = {}
        self._undone_at: dict[str, int] = {}
        if options.pin not in PINS:
            names = [r.name for r in self.rungs]
            if options.pin not in names:
                raise ValueError(f"quality {options.pin!r}: this run has no such step (its steps: "
                                 f"{', '.join(names) or 'none'})")
            for _ in range(names.index(options.pin) + 1):
                self._change(+1, work_ms=0.0)
        self._hold = options.warmup

    @property
    def pinned(self) -> bool:
        return self.options.pin != "auto"

    def frame(self, work_ms: float, *, dropped: int = 0) -> Step | None:
        """One output frame whose work took ``work_ms`` (``dropped`` output periods went without
        a frame before it). Returns the step taken now, or None."""
        self.frames += 1
        o = self.options
        missed = dropped > 0 or work_ms > self.budget_ms
        if self.pinned:
            return None
        if self._hold > 0:                # the frames of the hold count for nothing
            self._hold -= 1
            return None
        self._missed.append(missed)
        self._work.append(float(work_ms))
        if sum(self._missed) >= o.misses and self.level < len(self.rungs):
            recent = list(self._work)[-o.misses:]        # the load that made it step
            return self._change(+1, work_ms=float(np.median(recent)))
        if self.level > 0:
            if missed:
                self._calm.clear()      # a frame that misses now starts the count over
            else:
                self._calm.append(work_ms <= o.headroom * self.budget_ms)
            need = o.calm * self.backoff.get(self.rungs[self.level - 1].name, 1)
            if len(self._calm) >= need:
                last = list(self._calm)[-need:]
                if last.count(False) <= need // CALM_SLACK:
                    return self._change(-1, work_ms=float(np.median(self._work)))
        return None

    def _change(self, direction: int, *, work_ms: float) -> Step:
        with self._lock:
            old = self.level
            rung = self.rungs[old if direction > 0 else old - 1]
            rung.apply(direction > 0)
            self.level = old + direction
            step = Step(self.frames, old, self.level, rung.name, direction > 0, work_ms)
            self.steps.append(step)
        o = self.options
        if direction < 0:
            self._undone_at[rung.name] = self.frames
        elif not self.pinned:
            undone = self._undone_at.get(rung.name)
            failed = undone is not None and self.frames - undone <= o.hold + 2 * o.window
            self.backoff[rung.name] = min(MAX_BACKOFF, 2 * self.backoff.get(rung.name, 1)) if failed else 1
        self._missed.clear()
        self._work.clear()
        self._calm.clear()
        self._hold = self.options.hold
        if self.pinned:
            log.info("quality pinned: %s", rung.what)
        elif direction > 0:
            log.warning("quality down (frame %d: %d of %d frames missed the %.1f ms budget or were dropped, "
                        "median work %.1f ms): %s", self.frames, self.options.misses, self.options.window,
                        self.budget_ms, work_ms, rung.what)
        else:
            log.info("quality up (frame %d, work %.1f ms): %s undone", self.frames, work_ms, rung.what)
        return step

    def retire(self, name: str) -> None:
        """Take the rung ``name`` off the ladder (no-op if it is not on it): undone first when
        taken, with every rung above it (each logged as a step up); the others stay."""
        names = [r.name for r in self.rungs]
        if name not in names:
            return
        k = names.index(name)
        while self.level > k:
            self._change(-1, work_ms=float(np.median(self._work)) if self._work else 0.0)
        with self._lock:
            del self.rungs[k]
        log.info("quality step %r retired (an output now needs it)", name)

    def active(self) -> list[str]:
        """Names of the rungs taken now, in order."""
        return [r.name for r in self.rungs[: self.level]]

    def text(self) -> str:
        """The HUD's line: ``full`` or the rungs taken (``tracker 1/2, detail``)."""
        names = self.active()
        return "full" if not names else ", ".join(names) + (" (pinned)" if self.pinned else "")

    def status(self) -> dict:
        """``GET /status``'s ``quality``: level, rungs taken and available, pin, budget, steps."""
        with self._lock:
            return {"level": self.level, "active": self.active(), "available": [r.name for r in self.rungs],
                    "backoff": {k: v for k, v in self.backoff.items() if v > 1},
                    "pin": self.options.pin, "budget_ms": round(self.budget_ms, 2),
                    "steps": [s.as_dict() for s in self.steps[-20:]], "step_count": len(self.steps)}


__all__ = ["CALM_SLACK", "COARSE_PIXEL_ERROR", "GovernorOptions", "MAX_BACKOFF", "PINS", "QualityGovernor", "RUNG_ORDER", "Rung", "Step",
           "WINDOW_SCALE"]
