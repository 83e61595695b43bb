"""Adaptive face count: track one face while only one is in view (issue 20).

MediaPipe's face landmarker runs its face detector on every frame while it tracks fewer
faces than ``num_faces`` (VIDEO mode): with ``num_faces = 4`` and one person in view that
is a detector pass per frame on top of the landmark model (~12 ms instead of ~10 ms of CPU
per 640×360 frame here). A single user should pay only MediaPipe's own one-face cost.

:class:`FaceCountPolicy` decides, per frame, which of two landmarkers runs:

- ``ONE`` (``num_faces = 1``, MediaPipe tracks the face between frames) while one face is
  in view; on the first frame and every ``probe_every`` frames the ``MANY`` landmarker (``num_faces`` as asked)
  runs instead, as a probe for a second face;
- ``MANY`` from a probe that saw two faces or more, as long as a second face is near; after
  ``settle_frames`` frames in a row with at most one face, back to ``ONE``;
- when ``ONE`` finds no face (the person left, or its tracking slipped), ``MANY`` runs on the
  same frame, so the adaptive tracker never finds fewer faces than the ``MANY`` one would
  at that frame.

The policy is plain state (no MediaPipe): :class:`tracking.face_tracker.FaceTracker` owns
the two landmarkers and asks it.
"""

from __future__ import annotations

from dataclasses import dataclass

ONE = 1
MANY = 2


@dataclass(frozen=True)
class AdaptiveOptions:
    """Settings of :class:`FaceCountPolicy`.

    Attributes:
        probe_every: frames between probes for a second face while one is tracked (15: twice
            a second at 30 fps; the probe costs a detector pass, ~0.1 ms per frame averaged).
        settle_frames: frames in a row with at most one face before going back to one.
    """

    probe_every: int = 15
    settle_frames: int = 15


class FaceCountPolicy:
    """Which landmarker runs on the next frame (module doc)."""

    def __init__(self, options: AdaptiveOptions = AdaptiveOptions()):
        if options.probe_every < 1 or options.settle_frames < 1:
            raise ValueError(f"{options}: probe_every and settle_frames must be >= 1")
        self.options = options
        self.mode = ONE
        self._since_probe = options.probe_every - 1     # the first frame is a probe: who is there?
        self._alone = 0
        #: frames run by each landmarker (ONE, MANY), and fallbacks (ONE found none, MANY ran)
        self.counts = {ONE: 0, MANY: 0, "fallback": 0}

    def choose(self) -> int:
        """ONE or MANY for the next frame."""
        if self.mode == MANY:
            return MANY
        self._since_probe += 1
        if self._since_probe >= self.options.probe_every:
            self._since_probe = 0
            return MANY
        return ONE

    def fallback(self, ran: int, faces: int) -> bool:
        """Whether MANY should run on the same frame after ``ran`` found ``faces`` faces."""
        return ran == ONE and faces == 0

    def seen(self, ran: int, faces: int, *, fallback: bool = False) -> None:
        """Tell the policy what the frame's landmarker (``ran``) found."""
        self.counts["fallback" if fallback else ran] += 1
        if ran == MANY and faces >= 2:
            self.mode, self._alone = MANY, 0
        elif self.mode == MANY:
            self._alone += 1
            if self._alone >= self.options.settle_frames:
                self.mode, self._alone, self._since_probe = ONE, 0, 0


__all__ = ["MANY", "ONE", "AdaptiveOptions", "FaceCountPolicy"]
