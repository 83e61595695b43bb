"""Pose tracks as loop input: a recorded ``.jsonl`` track or the built-in head-turn track.

:class:`TrackInput` answers ``sample(t_ns, out)`` from a :class:`tracking.PoseTrack`
(deterministic); :func:`head_turn_track` is the standard head-turn test (DESIGN §4.5,
:mod:`solver.eval.head_turn`) as an avatar-frame track, the ``turn-test`` source.
"""

from __future__ import annotations

import time

from solver.eval.head_turn import DURATION_S as HEAD_TURN_DURATION_S
from solver.eval.head_turn import head_turn_rotation
from tracking.pose_track import PoseSample, PoseTrack, synthetic_track


class TrackInput:
    """A pose track as loop input.

    Offline its own times are the loop times. Played live (``start(clock)``), track time
    ``start_ns`` is mapped to the loop time at which :meth:`start` is called, and
    :attr:`finished` turns True past the track's end.
    """

    def __init__(self, track: PoseTrack):
        self.track = track
        self.start_ns = track.start_ns
        self.end_ns = track.end_ns
        self._offset = 0
        self._clock = None

    def start(self, clock_ns=time.perf_counter_ns) -> "TrackInput":
        self._clock = clock_ns
        self._offset = clock_ns() - self.track.start_ns
        return self

    @property
    def finished(self) -> bool:
        return self._clock is not None and self._clock() - self._offset > self.end_ns

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        return self.track.sample(t_ns, out, offset_ns=self._offset)  # stamped t_ns; allocates nothing

    def recenter(self) -> None:
        """A recorded track is already neutral-relative; nothing to do."""


def head_turn_track(rate_hz: int = 120) -> PoseTrack:
    """The standard head-turn test (DESIGN §4.5) as an avatar-frame pose track sampled at
    ``rate_hz`` (12 s: 4 s of motion, 8 s still)."""
    return synthetic_track(head_turn_rotation, duration_s=HEAD_TURN_DURATION_S, rate_hz=rate_hz,
                           source="synthetic:head_turn")
