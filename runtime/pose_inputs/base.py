"""The pose-input protocol: what the loop and the session ask of every head pose input.

One explicit protocol (docs/design.md §7), implemented in full by :class:`~.track.TrackInput`,
:class:`~.offline.OfflineTracking`, :class:`~.live.LiveInput` and the kiosk wrapper
:class:`~.idle.IdlePose`; nobody probes an input for optional capabilities.

Lifetime: open (construct) -> ``start(clock)`` once, when the run's clock starts ->
``pump`` / ``sample`` per frame and substep -> ``close()`` (or leave the ``with`` block).
All times are loop times (integer ns of the run's :class:`runtime.clock.Clock`); each
input maps them to its own time base at ``start``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tracking.pose_track import PoseSample

if TYPE_CHECKING:  # pragma: no cover
    from ..clock import Clock


@dataclass(frozen=True)
class InputStatus:
    """A snapshot of a pose input, for the session (pacing, kiosk recenter, the summary).

    Attributes:
        live: frames must be paced in real time (a webcam, a file or a track played with
            ``--realtime``); False: an offline input, rendered frame by frame as fast as possible.
        finished: a played source reached its end (or tracking failed: see ``error``).
        error: the exception that stopped the tracking thread, or None.
        face_found: a face is in the newest input (the newest observation for trackers; the
            pose sampled last for pose tracks).
        new_faces: how many times a face arrived after a loss so far (an event counter: the
            kiosk recenters when it grows; 0 for inputs that do not watch for it).
        newest_capture_ns: wall-clock capture time of the newest tracked camera frame (for
            the capture -> output latency), or None (no camera frame yet, or no camera).
        frames_tracked: frames run through the face tracker so far, or None for inputs that
            track nothing (pose tracks).
        faces: of those, frames with a face found.
        start_ns: the input's own time of its first pose (media time of the first frame, or
            the track's first time; 0 for live inputs); an offline run's frame schedule starts there.
        body: the input may carry a whole-body pose (a VMC performer, or a track recorded from
            one): the rig then drives every humanoid bone (:class:`runtime.rig.AvatarRig` ``body``).
    """

    live: bool
    finished: bool = False
    error: BaseException | None = None
    face_found: bool = False
    new_faces: int = 0
    newest_capture_ns: int | None = None
    frames_tracked: int | None = None
    faces: int = 0
    start_ns: int = 0
    body: bool = False


class PoseInput(Protocol):
    """A head pose source for the loop (avatar frame, neutral-relative).

    Implementations subclass this protocol explicitly, which gives them the context-manager
    methods below; ``close`` is idempotent.

    Attributes:
        arrivals: a live tracked input's :class:`runtime.pose_lock.PoseArrivals` (its frames
            may follow the poses), else None.
    """

    arrivals = None

    def start(self, clock: Clock) -> None:
        """Begin: loop time ``clock.now_ns()`` is the input's start (threads and playback
        start here, not at construction). Called once, before the first ``pump``."""
        ...

    def pump(self, t_ns: int) -> None:
        """Let the input take in what is due by loop time ``t_ns`` (an offline tracker tracks
        the frames up to it); called once per frame before the substeps. Inputs fed by their
        own thread, or recorded, do nothing."""
        ...

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        """The head pose at loop time ``t_ns`` (filled into ``out`` when given, and returned):
        ``rotation`` (4,) xyzw relative to neutral, ``translation`` (3,) metres, avatar frame,
        ``blendshapes`` (52,), ``found``. Called at every substep time t_n and the draw time."""
        ...

    def status(self) -> InputStatus:
        """A snapshot (thread-safe enough to call between frames)."""
        ...

    def recenter(self) -> None:
        """Take the current head pose as neutral (no-op for recorded tracks)."""
        ...

    def close(self) -> None:
        """Stop threads and release sources, trackers and recordings. Idempotent."""
        ...

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
