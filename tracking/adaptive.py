"""Adaptive face count: track one face while only one is in view (issue 20).

MediaPipe's face landmarker runs its face detector on every frame while it tracks fewer
faces than ``num_faces`` (VIDEO mode): with ``num_faces = 4`` and one person in view that
is a detector pass per frame on top of the landmark model (~2 ms more CPU per 640×360 frame
here). A single user should pay only MediaPipe's own one-face cost.

:class:`FaceCountPolicy` decides, per frame, what runs:

- ``ONE`` (a ``num_faces = 1`` landmarker; MediaPipe tracks the face between frames) while
  one face is in view. Its pose, blendshapes and landmarks are the frame's output on every
  such frame, so a single user gets exactly what a plain one-face landmarker gives;
- ``PROBE`` on the first frame and then every ``probe_every`` frames while in ``ONE``: a
  count of the faces in view (:class:`tracking.face_probe.FaceCounter`, MediaPipe's face
  detector in IMAGE mode) *before* the landmarker runs. :meth:`FaceCountPolicy.probed`
  turns the count into the landmarker of that same frame: ``MANY`` from two faces on, else
  ``ONE``, so the probe never replaces ``ONE``'s output with another landmarker's;
- ``MANY`` (the landmarker with ``num_faces`` as asked; a
  :class:`~tracking.face_select.FaceSelector` picks one face stably) while a second face is
  near; after ``settle_frames`` frames in a row with at most one face, back to ``ONE``;
- when ``ONE`` finds no face (the person left, or its tracking slipped), ``MANY`` runs on
  the same frame (a fallback), so the adaptive tracker never finds fewer faces than the
  ``MANY`` one would at that frame.

Without a detector model (a ``.task`` bundle without ``face_detector.tflite``) the tracker
answers ``PROBE`` by running ``MANY`` and telling :meth:`FaceCountPolicy.seen` what it found
(the first version's probe; its output then replaces ``ONE``'s on probe frames, a ~1-2°
step of the head rotation on a still image, because the two landmarkers' landmarks differ).

The policy is plain state (no MediaPipe): :class:`tracking.face_tracker.FaceTracker` owns
the landmarkers and the face counter and asks it.
"""

from __future__ import annotations

from dataclasses import dataclass

ONE = 1
MANY = 2
PROBE = 3


@dataclass(frozen=True)
class AdaptiveOptions:
    """Settings of :class:`FaceCountPolicy`.

    Attributes:
        probe_every: frames between probes for a second face while one is tracked (15: twice
            a second at 30 fps; a probe is one face detector pass, ~2.7 ms here, so ~0.2 ms
            per frame averaged). A second face is seen at most ``probe_every - 1`` frames late.
        settle_frames: frames in a row with at most one face before going back to one.
    """

    probe_every: int = 15
    settle_frames: int = 15


class FaceCountPolicy:
    """What runs on the next frame (module doc).

    Per frame: :meth:`choose`; on ``PROBE``, :meth:`probed` with the face count; the chosen
    landmarker runs; :meth:`fallback` says whether ``MANY`` must run on the same frame;
    :meth:`seen` with what the landmarker that gave the output found.

    Raises:
        ValueError: ``probe_every`` or ``settle_frames`` below 1.
    """

    def __init__(self, options: AdaptiveOptions = AdaptiveOptions()):
        if options.probe_every < 1 or options.settle_frames < 1:
            raise ValueError(f"{options}: probe_every and settle_frames must be >= 1")
        self.options = options
        self.mode = ONE
        self._since_probe = options.probe_every - 1     # the first frame is a probe: who is there?
        self._alone = 0
        #: frames whose output came from ONE / MANY (MANY chosen, not as a fallback), fallback
        #: frames (ONE found none, MANY ran too), and probes (face counts asked for)
        self.counts = {ONE: 0, MANY: 0, "fallback": 0, "probe": 0}

    def choose(self) -> int:
        """ONE, MANY or PROBE (count the faces, then :meth:`probed`) for the next frame."""
        if self.mode == MANY:
            return MANY
        self._since_probe += 1
        if self._since_probe >= self.options.probe_every:
            self._since_probe = 0
            self.counts["probe"] += 1
            return PROBE
        return ONE

    def probed(self, faces: int) -> int:
        """The landmarker (ONE or MANY) for a probe frame where ``faces`` faces were counted."""
        if faces >= 2:
            self.mode, self._alone = MANY, 0
            return MANY
        return ONE

    def fallback(self, ran: int, faces: int) -> bool:
        """Whether MANY should run on the same frame after ``ran`` found ``faces`` faces."""
        return ran == ONE and faces == 0

    def seen(self, ran: int, faces: int, *, fallback: bool = False) -> None:
        """Tell the policy what the frame's output landmarker (``ran``) found."""
        self.counts["fallback" if fallback else ran] += 1
        if ran == MANY and faces >= 2:
            self.mode, self._alone = MANY, 0
        elif self.mode == MANY:
            self._alone += 1
            if self._alone >= self.options.settle_frames:
                self.mode, self._alone, self._since_probe = ONE, 0, 0


__all__ = ["MANY", "ONE", "PROBE", "AdaptiveOptions", "FaceCountPolicy"]
