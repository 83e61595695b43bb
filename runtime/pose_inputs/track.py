"""Pose tracks as loop input: a recorded ``.jsonl`` track or the built-in head-turn track.

:class:`TrackInput` answers ``sample(t_ns, out)`` from a :class:`tracking.PoseTrack`
(deterministic); :func:`head_turn_track` is the standard head-turn test (docs/design.md §4.5,
:mod:`avatars.clips.head_turn`) as an avatar-frame track, the ``turn-test`` source.
"""

from __future__ import annotations

from avatars.clips.head_turn import DURATION_S as HEAD_TURN_DURATION_S
from avatars.clips.head_turn import head_turn_rotation
from solver.params import RATE_HZ
from tracking.pose_track import PoseSample, PoseTrack, synthetic_track

from ..clock import Clock
from .base import InputStatus, PoseInput


class TrackInput(PoseInput):
    """A pose track as loop input (see :class:`PoseInput` for the protocol).

    Track time ``start_ns`` is mapped to the loop time at which :meth:`start` is called
    (without :meth:`start`, loop time is track time, as physics-only replays use it). The
    pose before the first and after the last sample is held. :attr:`InputStatus.finished`
    turns True once the started clock's loop time is past the track's end, so a pause of
    the clock pauses the playback.

    Args:
        track: the poses (avatar frame).
        live: played in real time (``--realtime``) rather than rendered frame by frame.
    """

    def __init__(self, track: PoseTrack, *, live: bool = False):
        self.track = track
        self.live = bool(live)
        self.start_ns = track.start_ns
        self.end_ns = track.end_ns
        self._offset = 0
        self._clock: Clock | None = None
        self._found = False

    def start(self, clock: Clock) -> None:
        self._clock = clock
        self._offset = clock.now_ns() - self.track.start_ns

    def pump(self, t_ns: int) -> None:
        """Nothing to take in: every pose is already there."""

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        out = self.track.sample(t_ns, out, offset_ns=self._offset)  # stamped t_ns; allocates nothing
        self._found = out.found
        return out

    def view_at(self, t_ns: int):
        """(5,) the view recorded with the pose at loop time ``t_ns`` (tracking/pose_track.py
        :meth:`PoseTrack.view_at`), or None: the track has none."""
        return self.track.view_at(t_ns, offset_ns=self._offset)

    def status(self) -> InputStatus:
        finished = self._clock is not None and self._clock.now_ns() - self._offset > self.end_ns
        return InputStatus(live=self.live, finished=finished, face_found=self._found, start_ns=self.start_ns,
                           body=self.track.body is not None)

    def recenter(self) -> None:
        """A recorded track is already neutral-relative; nothing to do."""

    def close(self) -> None:
        """Nothing to release."""


#: The ``--source`` name of the built-in standard head-turn track.
TURN_TEST = "turn-test"


def head_turn_track(rate_hz: int = RATE_HZ) -> PoseTrack:
    """The standard head-turn test (docs/design.md §4.5) as an avatar-frame pose track sampled at
    ``rate_hz`` (12 s: 4 s of motion, 8 s still)."""
    return synthetic_track(head_turn_rotation, duration_s=HEAD_TURN_DURATION_S, rate_hz=rate_hz,
                           source="synthetic:head_turn")
