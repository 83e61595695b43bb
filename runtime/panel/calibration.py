"""Guided neutral-face calibration: look straight and relax, then blink, then open the mouth
wide; the blendshapes seen in each phase set the user's blink and mouth ranges
(:class:`tracking.ExpressionCalibration`), saved as the config's ``[calibration]`` table.

    phase "neutral"  eyes open, mouth closed:  lo = median of the phase
    phase "blink"    blink a few times:        hi(eyeBlinkLeft/Right) = 95th percentile
    phase "mouth"    open the mouth wide:      hi(jawOpen) = 95th percentile

``hi`` is at least ``lo + MIN_SPAN``. The collector is fed the blendshapes of every drawn
frame (render thread) while a phase runs; phases are started from any thread.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ConflictError, SettingsError

PHASES = ("neutral", "blink", "mouth")
#: Channels each phase measures the top of its range on.
PHASE_CHANNELS = {"blink": ("eyeBlinkLeft", "eyeBlinkRight"), "mouth": ("jawOpen",)}
#: Smallest range accepted (a user who barely blinks still gets a usable ramp).
MIN_SPAN = 0.2
#: A phase's channel must rise at least this far above the neutral face to count as measured.
MIN_RISE = 0.02
#: Frames a phase needs before it can be used.
MIN_FRAMES = 5


class CalibrationError(ConflictError, ValueError):
    """The phases collected so far give no ranges (one has too few frames with a face)."""


class CalibrationCollector:
    """Blendshape samples per phase, and the ranges they give."""

    def __init__(self):
        self._lock = threading.Lock()
        self.phase: str | None = None
        self.samples: dict[str, list[np.ndarray]] = {p: [] for p in PHASES}

    def start(self, phase: str) -> None:
        """Collect ``phase`` from now on (its earlier samples are dropped). Raises SettingsError
        for an unknown phase."""
        if phase not in PHASES:
            raise SettingsError(f"phase {phase!r} is not one of {', '.join(PHASES)}")
        with self._lock:
            self.phase = phase
            self.samples[phase] = []

    def stop(self) -> None:
        with self._lock:
            self.phase = None

    def feed(self, blendshapes: np.ndarray, found: bool) -> None:
        """One frame's (52,) blendshapes (render thread); ignored without a face or a phase."""
        if self.phase is None or not found:
            return
        with self._lock:
            if self.phase is not None:
                self.samples[self.phase].append(np.array(blendshapes, np.float64))

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {p: len(v) for p, v in self.samples.items()}

    def ranges(self) -> dict[str, list[float]]:
        """{blendshape: [lo, hi]} from the phases collected.

        Raises:
            CalibrationError: a phase has fewer than :data:`MIN_FRAMES` frames with a face
                (naming it), or its frames carry no face data (every blendshape 0: a pose
                track or an input without expressions), or a phase's own channels never rose
                :data:`MIN_RISE` above the neutral's (nothing was measured: every range would
                be the :data:`MIN_SPAN` default).
        """
        from tracking.expressions import BLENDSHAPE_INDEX

        with self._lock:
            data = {p: np.array(v) for p, v in self.samples.items()}
        for p in PHASES:
            if len(data[p]) < MIN_FRAMES:
                raise CalibrationError(f"calibration phase {p!r} has {len(data[p])} frames with a face "
                                 f"(needs {MIN_FRAMES}): run it again")
        for p in PHASES:
            if not data[p].any():
                raise CalibrationError(f"calibration phase {p!r} has no face data (every blendshape is 0): "
                                       "calibrate with a camera or a clip that tracks expressions")
        out = {}
        for phase, names in PHASE_CHANNELS.items():
            measured = False
            for name in names:
                i = BLENDSHAPE_INDEX[name]
                lo = float(np.median(data["neutral"][:, i]))
                top = float(np.percentile(data[phase][:, i], 95))
                measured |= top > lo + MIN_RISE
                hi = max(top, lo + MIN_SPAN)
                out[name] = [round(lo, 4), round(hi, 4)]
            if not measured:
                raise CalibrationError(f"calibration phase {phase!r}: {', '.join(names)} never rose above the "
                                       "neutral face: run it again")
        return out


# ---------------------------------------------------------------------------- from a stream (swaycam calibrate)

#: The guided schedule of ``swaycam calibrate``: seconds to get ready before each phase.
GET_READY_S = 1.5
#: What the user is told at the start of each phase.
PROMPTS = {"neutral": "look straight at the camera and relax (eyes open, mouth closed)",
           "blink": "blink a few times", "mouth": "open your mouth wide, a few times"}


def guided_windows(seconds: float, ready_s: float = GET_READY_S) -> dict[str, tuple[float, float]]:
    """{phase: (start, end) seconds from the first frame}: the phases one after the other,
    each ``ready_s`` to get ready, then ``seconds`` collected."""
    out, t = {}, 0.0
    for p in PHASES:
        t += ready_s
        out[p] = (round(t, 6), round(t + seconds, 6))
        t += seconds
    return out


def collect(samples, windows: dict[str, tuple[float, float]], *, on_phase=None) -> CalibrationCollector:
    """A collector filled from ``samples``, an iterable of (t seconds from the first frame,
    (52,) blendshapes, face found): each sample goes to every phase whose window
    [start, end) holds t. Stops after the last window ends. ``on_phase(phase)`` is called
    once when the first sample at or after a phase's start minus ``GET_READY_S`` arrives
    (the cue for a live user)."""
    c = CalibrationCollector()
    end = max(e for _, e in windows.values())
    cued: set[str] = set()
    for t, bs, found in samples:
        if on_phase is not None:
            for p in PHASES:
                if p in windows and p not in cued and t >= windows[p][0] - GET_READY_S:
                    cued.add(p)
                    on_phase(p)
        if t >= end:
            break
        if not found:
            continue
        for p, (a, b) in windows.items():
            if a <= t < b:
                c.samples[p].append(np.array(bs, np.float64))
    return c
