"""The realtime loop (DESIGN §2): fixed 120 Hz substeps, then one render with interpolation.

Per frame at loop time t (from the clock):

1. ``pose_input.pump(t)`` lets an offline source feed the observations due by t (live
   sources are fed by their own tracking thread and ignore it);
2. the fixed-step driver runs every substep t_n <= t (at most ``max_substeps``; the older
   debt is dropped and counted) - each samples the pose at t_n and steps the hair;
3. the frame is drawn at the interpolated time between the last two substeps, with the
   body pose sampled there and the hair interpolated by alpha, then handed to the outputs.

The solver never sees the frame time, so the hair states at every substep are identical
whatever the render rate, frame-time jitter or drops (the frame-rate consistency rule).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from tracking.pose_track import PoseSample

from .clock import RATE_HZ, FixedStepDriver
from .telemetry import Telemetry
from .rig import AvatarRig

log = logging.getLogger(__name__)



class PoseInput(Protocol):
    """Anything that gives the avatar-frame head pose at a time (PoseTrack, PoseFilter...)."""

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample: ...


@dataclass
class FrameInfo:
    """What one :meth:`Loop.frame` did."""

    t_ns: int
    substeps: int
    dropped: int
    alpha: float
    draw_t_ns: int
    world: np.ndarray | None = None
    expressions: dict | None = None


class Loop:
    """Fixed-step simulation and interpolated rendering of one :class:`AvatarRig`.

    Args:
        rig: the avatar state.
        pose_input: head pose source sampled at every substep time and at the draw time.
        max_substeps: cap per frame (DESIGN §2); excess debt is dropped and counted.
        metrics: live metrics to update (a new one when None).
        on_substep: called as ``on_substep(n, t_n, rig)`` after every substep (state dumps).
        draw: called as ``draw(info)`` once per frame with the draw pose (rendering and
            outputs); None for physics-only replays.
    """

    def __init__(self, rig: AvatarRig, pose_input: PoseInput, *, max_substeps: int = 8,
                 metrics: Telemetry | None = None,
                 on_substep: Callable[[int, int, AvatarRig], None] | None = None,
                 draw: Callable[[FrameInfo], None] | None = None):
        self.rig = rig
        self.pose_input = pose_input
        self.metrics = metrics or Telemetry()
        self.on_substep = on_substep
        self.draw = draw
        self.driver = FixedStepDriver(self._substep, rate_hz=RATE_HZ, max_substeps=max_substeps)
        self._sample = PoseSample()
        self._draw_sample = PoseSample()
        self.paused = False
        self.resets = 0
        #: extra rigs stepped with the same poses (side-by-side solver comparison)
        self.companions: list[AvatarRig] = []

    def _substep(self, t_n: int) -> None:
        self.pose_input.sample(t_n, out=self._sample)
        if self.rig.substep(self._sample):
            self.resets += 1
        for c in self.companions:
            c.substep(self._sample)
        if self.on_substep is not None:
            self.on_substep(self.driver.substep_index, t_n, self.rig)

    def start(self, t0_ns: int) -> None:
        """Start the substep grid at ``t0_ns`` with the hair at rest under the pose there."""
        self.pose_input.sample(t0_ns, out=self._sample)
        self.rig.reset(self._sample)
        self.driver.start(t0_ns)
        if self.on_substep is not None:
            self.on_substep(0, t0_ns, self.rig)

    def set_rig(self, rig: AvatarRig, t_ns: int) -> None:
        """Swap the avatar (a reload): the new hair starts at rest under the current pose."""
        self.rig = rig
        self.pose_input.sample(t_ns, out=self._sample)
        rig.reset(self._sample)

    def frame(self, t_ns: int, *, latency_from_ns: int | None = None) -> FrameInfo:
        """Advance to loop time ``t_ns`` and draw one frame.

        Args:
            latency_from_ns: capture time of the newest camera frame used (for the
                capture -> output latency metric), or None.
        """
        if not self.driver.started:
            self.start(t_ns)
        pump = getattr(self.pose_input, "pump", None)
        if pump is not None:
            pump(t_ns)
        if self.paused:
            # time stands still for the hair: restart the grid here so no debt accumulates
            self.driver.reset(t_ns)
            adv_n, alpha, dropped = 0, 1.0, 0
        else:
            adv = self.driver.advance(t_ns)
            adv_n, alpha, dropped = adv.substeps, adv.alpha, adv.dropped
        if dropped:
            self.metrics.drop(substeps=dropped)
        n = self.driver.substep_index
        t_last = self.driver.substep_time_ns(n)
        t_prev = self.driver.substep_time_ns(n - 1) if n > 0 else t_last
        draw_t = t_prev + int(round(alpha * (t_last - t_prev)))
        info = FrameInfo(t_ns=t_ns, substeps=adv_n, dropped=dropped, alpha=alpha, draw_t_ns=draw_t)
        if self.draw is not None:
            self.pose_input.sample(draw_t, out=self._draw_sample)
            info.world = self.rig.draw_pose(self._draw_sample, alpha)
            info.expressions = self.rig.expression_values(self._draw_sample)
            self.draw(info)
        latency = None
        if latency_from_ns is not None:
            latency = time.perf_counter_ns() - latency_from_ns
        self.metrics.frame(t_ns, substeps=adv_n, latency_ns=latency)
        return info
