"""The realtime loop (docs/design.md §2): fixed 120 Hz substeps, then one render with interpolation.

Per frame at loop time t (from the run's clock, which stands still while paused):

1. ``pose_input.pump(t)`` lets an offline source take in the observations due by t (live
   sources are fed by their own tracking thread and do nothing);
2. the fixed-step driver runs every substep t_n <= t (at most ``max_substeps``; the older
   debt is dropped and counted) - each samples the pose at t_n and steps the hair of the
   rig and of its companions (the compare mode's second solver);
3. the frame is drawn at the interpolated time between the last two substeps, with the
   body pose sampled there and the hair interpolated by alpha, then handed to the outputs.

The solver never sees the frame time, so the hair states at every substep are identical
whatever the render rate, frame-time jitter, drops or pauses (the frame-rate consistency
rule). A paused clock gives the same t frame after frame: no substep runs, the grid keeps
its t0 and its index, and the draw reuses the pose sampled for that draw time, so a live
avatar freezes too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np

from tracking.pose_track import PoseSample

from .clock import DEFAULT_MAX_SUBSTEPS, RATE_HZ, Clock, FixedStepDriver, MonotonicClock
from .pose_inputs.base import PoseInput
from .rig import AvatarRig
from .rig.errors import RigError
from .telemetry import Telemetry

log = logging.getLogger(__name__)


@dataclass
class FrameInfo:
    """What one :meth:`Loop.frame` did.

    Attributes:
        t_ns: loop time of the frame, ns.
        substeps: substeps run by this frame.
        dropped: substeps dropped by the cap in this frame.
        alpha: hair interpolation between the last two substeps, in [0, 1].
        draw_t_ns: the time the body pose was sampled for drawing (between the last two
            substep times), ns.
        world: (N, 4, 4) float64 world matrices of the rig's nodes for drawing (an internal
            buffer of the rig, valid until the next frame); None without a draw callback.
        expressions: VRM expression weights {name: weight} for drawing.
        companion_worlds: the same as ``world`` for each companion rig, in order.
        time_s: seconds from the run's first substep to ``draw_t_ns`` (the clock of MToon UV
            animation: replayed runs animate identically at any frame rate).
        wall_start_ns: the clock's wall time when the frame began (latency by stage).
        latency_from_ns: the capture time given to :meth:`Loop.frame`, or None.
    """

    t_ns: int
    substeps: int
    dropped: int
    alpha: float
    draw_t_ns: int
    world: np.ndarray | None = None
    expressions: dict | None = None
    companion_worlds: tuple[np.ndarray, ...] = ()
    time_s: float = 0.0
    wall_start_ns: int = 0
    latency_from_ns: int | None = None


def check_rate(rig: AvatarRig, driver: FixedStepDriver) -> None:
    """Refuse a rig whose chain set steps another h than the driver's 1/rate.

    Raises:
        RigError (a ValueError): naming both steps.
    """
    chains = rig.chains
    if chains is not None and chains.h != driver.h:
        raise RigError(f"the rig's hair steps h = {chains.h!r} s but the loop runs {driver.rate_hz} substeps per "
                         f"second (h = {driver.h!r} s): build the chain set with the substep 1/{driver.rate_hz} "
                         "(runtime.clock.RATE_HZ)")


class Loop:
    """Fixed-step simulation and interpolated rendering of one :class:`AvatarRig`.

    Args:
        rig: the avatar state.
        pose_input: head pose source sampled at every substep time and at the draw time.
        max_substeps: cap per frame (docs/design.md §2); excess debt is dropped and counted.
        metrics: live metrics to update (a new one when None).
        clock: the run's clock; its wall time stamps the metrics and the capture -> output
            latency (a :class:`MonotonicClock` when None). Frame times come from the caller.
        on_substep: called as ``on_substep(n, t_n, rig)`` after every substep (state dumps).
        draw: called as ``draw(info)`` once per frame with the draw pose (rendering and
            outputs); None for physics-only replays.

    Raises:
        RigError: the rig's chain set steps another h than 1/:data:`RATE_HZ`.
    """

    def __init__(self, rig: AvatarRig, pose_input: PoseInput, *, max_substeps: int = DEFAULT_MAX_SUBSTEPS,
                 metrics: Telemetry | None = None, clock: Clock | None = None,
                 on_substep: Callable[[int, int, AvatarRig], None] | None = None,
                 draw: Callable[[FrameInfo], None] | None = None):
        self.pose_input = pose_input
        self.metrics = metrics or Telemetry()
        self.clock = clock or MonotonicClock()
        self.on_substep = on_substep
        self.draw = draw
        self.driver = FixedStepDriver(self._substep, rate_hz=RATE_HZ, max_substeps=max_substeps)
        check_rate(rig, self.driver)
        self.rig = rig
        #: extra rigs stepped with the same poses (side-by-side solver comparison); set with set_rig
        self.companions: tuple[AvatarRig, ...] = ()
        self._sample = PoseSample()
        self._draw_sample = PoseSample()
        self._draw_sample_t: int | None = None
        self.resets = 0

    @property
    def draw_sample(self) -> PoseSample:
        """The pose input sampled for the last drawn frame (an internal buffer)."""
        return self._draw_sample

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
        for r in (self.rig, *self.companions):
            r.reset(self._sample)
        self.driver.start(t0_ns)
        if self.on_substep is not None:
            self.on_substep(0, t0_ns, self.rig)

    def set_rig(self, rig: AvatarRig, companions: tuple[AvatarRig, ...] = (), *, reset: bool = True) -> None:
        """Simulate ``rig`` (and ``companions``) from now on; the substep grid goes on (a
        running loop), or starts with the first frame. With ``reset`` their hair starts at
        rest under the pose at the newest substep time; without, it goes on from the state
        the rigs carry (a solver switch that took over the old hair's motion).

        Raises:
            RigError: a chain set that steps another h (nothing is changed then).
        """
        for r in (rig, *companions):
            check_rate(r, self.driver)
        self.rig, self.companions = rig, tuple(companions)
        if self.driver.started and reset:
            self.pose_input.sample(self.driver.last_time_ns, out=self._sample)
            for r in (rig, *companions):
                r.reset(self._sample)

    def frame(self, t_ns: int, *, latency_from_ns: int | None = None) -> FrameInfo:
        """Advance to loop time ``t_ns`` and draw one frame.

        Args:
            t_ns: loop time (the clock's ``now_ns``), ns; a time before the newest substep
                runs nothing.
            latency_from_ns: wall-clock capture time of the newest camera frame used (for the
                capture -> output latency metric), or None.
        """
        wall_start = self.clock.wall_ns()
        if not self.driver.started:
            self.start(t_ns)
        self.pose_input.pump(t_ns)
        adv = self.driver.advance(t_ns)
        if adv.dropped:
            self.metrics.drop(substeps=adv.dropped)
        n = self.driver.substep_index
        t_last = self.driver.substep_time_ns(n)
        t_prev = self.driver.substep_time_ns(n - 1) if n > 0 else t_last
        draw_t = t_prev + int(round(adv.alpha * (t_last - t_prev)))
        info = FrameInfo(t_ns=t_ns, substeps=adv.substeps, dropped=adv.dropped, alpha=adv.alpha, draw_t_ns=draw_t,
                         time_s=(draw_t - self.driver.substep_time_ns(0)) * 1e-9, wall_start_ns=wall_start,
                         latency_from_ns=latency_from_ns)
        if self.draw is not None:
            if draw_t != self._draw_sample_t:   # the same draw time (a paused clock): the same pose
                self.pose_input.sample(draw_t, out=self._draw_sample)
                self._draw_sample_t = draw_t
            info.world = self.rig.draw_pose(self._draw_sample, adv.alpha)
            info.expressions = self.rig.expression_values(self._draw_sample)
            info.companion_worlds = tuple(c.draw_pose(self._draw_sample, adv.alpha) for c in self.companions)
            self.draw(info)
        wall = self.clock.wall_ns()
        latency = None if latency_from_ns is None else wall - latency_from_ns
        self.metrics.frame(wall, substeps=adv.substeps, latency_ns=latency)
        return info
