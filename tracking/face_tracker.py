"""MediaPipe FaceLandmarker -> :class:`~tracking.observation.FaceObservation`.

docs/design.md §5: the Tasks ``FaceLandmarker`` with blendshapes and the facial transformation
matrix on; head pose comes from that matrix (centimetres, camera frame: x right, y up,
z toward the viewer), no hand-written PnP. VIDEO mode (MediaPipe tracks the face between
frames and needs strictly increasing millisecond timestamps: equal ones are bumped by
1 ms) or IMAGE mode (every frame independent). MediaPipe is imported when a tracker is
created, not when the package is imported.

When several faces are found, a :class:`~tracking.face_select.FaceSelector` picks one
stably; all faces of the last frame stay available in :attr:`FaceTracker.last_faces`.

Adaptive face count (VIDEO mode, ``num_faces`` > 1, on by default): a one-face landmarker
tracks while one face is in view and gives every output then; MediaPipe's face detector
counts the faces every ``probe_every`` frames, and the ``num_faces`` landmarker runs while a
second face is near or when the one-face one finds none (:mod:`tracking.adaptive`,
:mod:`tracking.face_probe`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

import numpy as np

from avatars.math3d import quat_from_mat

from .adaptive import MANY, ONE, PROBE, AdaptiveOptions, FaceCountPolicy
from .errors import TrackingError
from .expressions import NUM_BLENDSHAPES
from .face_probe import FaceCounter, detector_model_from_bundle
from .face_select import FaceSelectOptions, FaceSelector
from .observation import NUM_LANDMARKS, FaceObservation
from .frame_sources import Frame

log = logging.getLogger(__name__)

CM = 0.01


@dataclass(frozen=True)
class FaceTrackerOptions:
    """Settings of :class:`FaceTracker`.

    Attributes:
        model_path: face_landmarker.task; None -> :func:`tracking.face_model.ensure_face_model`.
        running_mode: ``"video"`` (tracking between frames; the default) or ``"image"``.
        num_faces: most faces MediaPipe reports (the selector chooses one). 1 is ~25 %
            faster with one person in view, but then MediaPipe alone decides who is tracked.
        min_detection_confidence, min_presence_confidence, min_tracking_confidence:
            MediaPipe's thresholds, 0..1.
        select: :class:`~tracking.face_select.FaceSelectOptions`.
        adaptive: with ``num_faces`` > 1 in VIDEO mode (the default), track with a one-face
            landmarker while only one face is in view and with ``num_faces`` only while a
            second one is near (:mod:`tracking.adaptive`). A single user then gets exactly a
            plain ``num_faces=1`` landmarker's output (pose, blendshapes, landmarks) at its
            cost plus a face detector probe every ``adaptive_options.probe_every`` frames
            (~0.2 ms per frame averaged); the probe only counts faces. False: always
            ``num_faces`` (MediaPipe then runs its detector on every frame with one person in
            view, ~2 ms more per frame, and its landmarks come from a fresh detection each
            frame: a repeated still image gives the same output every frame, where one-face
            tracking settles over the first ~10 frames).
        adaptive_options: :class:`~tracking.adaptive.AdaptiveOptions`.
        hands: also run the pose and hand landmarkers on every frame (:mod:`tracking.hands`);
            each observation then carries ``arms``.
        hand_options: :class:`tracking.hands.HandTrackerOptions` (None: its defaults).
    """

    model_path: str | os.PathLike | None = None
    running_mode: str = "video"
    num_faces: int = 4
    min_detection_confidence: float = 0.5
    min_presence_confidence: float = 0.5
    min_tracking_confidence: float = 0.5
    select: FaceSelectOptions = field(default_factory=FaceSelectOptions)
    adaptive: bool = True
    adaptive_options: AdaptiveOptions = field(default_factory=AdaptiveOptions)
    hands: bool = False
    hand_options: object | None = None


def face_from_result(result, i: int, t_ns: int, image_size: tuple[int, int], index: int) -> FaceObservation:
    """Face ``i`` of a MediaPipe ``FaceLandmarkerResult`` as a FaceObservation."""
    lms = np.array([(p.x, p.y, p.z) for p in result.face_landmarks[i]], dtype=np.float64)
    if lms.shape != (NUM_LANDMARKS, 3):
        raise TrackingError(f"MediaPipe returned {lms.shape[0]} landmarks, expected {NUM_LANDMARKS} "
                            "(is the model a face_landmarker.task with attention/iris?)")  # fmt: skip
    bs = np.zeros(NUM_BLENDSHAPES)
    if result.face_blendshapes:
        for c in result.face_blendshapes[i]:
            if 0 <= c.index < NUM_BLENDSHAPES:
                bs[c.index] = c.score
    if result.facial_transformation_matrixes:
        m = np.asarray(result.facial_transformation_matrixes[i], dtype=np.float64).reshape(4, 4)
    else:
        m = np.eye(4)
    xy = lms[:, :2]
    inside = float(np.mean(np.all((xy >= 0.0) & (xy <= 1.0), axis=1)))
    box = np.array([xy[:, 0].min(), xy[:, 1].min(), xy[:, 0].max(), xy[:, 1].max()])
    return FaceObservation(
        timestamp_ns=int(t_ns), found=True, rotation=quat_from_mat(m, project=True), translation=m[:3, 3] * CM,
        blendshapes=bs, landmarks=lms, confidence=inside, face_box=box, image_size=image_size,
        transform=m, index=index,
    )  # fmt: skip


class FaceTracker:
    """MediaPipe face landmarker; a context manager (closes the graph deterministically).

    Args:
        options: :class:`FaceTrackerOptions`.

    Raises:
        FaceModelError: no model file could be found or fetched.
        TrackingError: MediaPipe could not load the model (the message names the file).
    """

    def __init__(self, options: FaceTrackerOptions = FaceTrackerOptions()) -> None:
        from .mediapipe_import import import_mediapipe

        import_mediapipe()     # without matplotlib and sounddevice (its module doc)
        from mediapipe.tasks.python import BaseOptions, vision

        from .face_model import ensure_face_model  # not at import: `python -m tracking.face_model` stays clean

        self.options = options
        self.model_path = ensure_face_model(options.model_path)
        modes = {"video": vision.RunningMode.VIDEO, "image": vision.RunningMode.IMAGE}
        if options.running_mode not in modes:
            raise ValueError(f"running_mode must be one of {sorted(modes)}, got {options.running_mode!r}")
        def landmarker(num_faces: int):
            mp_opts = vision.FaceLandmarkerOptions(
                base_options=BaseOptions(model_asset_path=str(self.model_path)),
                running_mode=modes[options.running_mode],
                num_faces=num_faces,
                min_face_detection_confidence=options.min_detection_confidence,
                min_face_presence_confidence=options.min_presence_confidence,
                min_tracking_confidence=options.min_tracking_confidence,
                output_face_blendshapes=True,
                output_facial_transformation_matrixes=True,
            )
            try:
                return vision.FaceLandmarker.create_from_options(mp_opts)
            except Exception as exc:  # noqa: BLE001 - MediaPipe raises RuntimeError/ValueError variously
                raise TrackingError(f"face model {self.model_path}: MediaPipe could not load it ({exc})") from None

        self._video = options.running_mode == "video"
        self._lm = landmarker(options.num_faces)
        #: adaptive face count (tracking/adaptive.py): a one-face landmarker, the probe's face
        #: counter and the policy, or None; :attr:`probe` says how it probes
        self._one = None
        self._counter: FaceCounter | None = None
        self.policy: FaceCountPolicy | None = None
        #: "detector" (MediaPipe's face detector counts), "landmarker" (the num_faces landmarker
        #: probes: no detector in the bundle), or None (not adaptive)
        self.probe: str | None = None
        if options.adaptive and options.num_faces > 1 and self._video:
            try:
                self._one = landmarker(1)
                self._counter = self._face_counter()
            except BaseException:
                self.close()
                raise
            self.probe = "detector" if self._counter is not None else "landmarker"
            self.policy = FaceCountPolicy(options.adaptive_options)
        self._last_ms = -1
        self.selector = FaceSelector(options.select)
        self.hands = None
        if options.hands:
            from .hands import HandTracker, HandTrackerOptions

            self.hands = HandTracker(options.hand_options or HandTrackerOptions())
        self.last_faces: list[FaceObservation] = []
        self.frames = 0

    def detect(self, image: np.ndarray, t_ns: int, *, index: int = -1) -> list[FaceObservation]:
        """All faces in ``image`` ((H, W, 3) uint8 RGB) captured at ``t_ns``."""
        import mediapipe as mp

        if self._lm is None:
            raise TrackingError("FaceTracker is closed")
        img = np.ascontiguousarray(image)
        if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
            raise TrackingError(f"frame {index}: expected (H, W, 3) uint8 RGB, got {img.shape} {img.dtype}")
        mp_image = mp.Image(image_format=mp.ImageFormat.SRGB, data=img)
        if self.policy is not None:
            ran = self.policy.choose()
            if ran == PROBE:        # count the faces first; the count picks this frame's landmarker
                ran = self.policy.probed(self._counter.count(mp_image)) if self._counter is not None else MANY
            result = self._detect_video(self._one if ran == ONE else self._lm, mp_image, t_ns)
            n = len(result.face_landmarks)
            fallback = self.policy.fallback(ran, n)
            if fallback:            # the one-face landmarker lost it: the full one looks at this frame
                ran = MANY
                result = self._detect_video(self._lm, mp_image, t_ns)
                n = len(result.face_landmarks)
            self.policy.seen(ran, n, fallback=fallback)
        elif self._video:
            result = self._detect_video(self._lm, mp_image, t_ns)
        else:
            result = self._lm.detect(mp_image)
        size = (int(img.shape[1]), int(img.shape[0]))
        self.frames += 1
        self.last_faces = [face_from_result(result, i, t_ns, size, index) for i in range(len(result.face_landmarks))]
        return self.last_faces

    def _face_counter(self) -> FaceCounter | None:
        """The probe's face detector from the model bundle, or None (logged) when the bundle
        has none or MediaPipe cannot load it: then the ``num_faces`` landmarker probes."""
        try:
            model = detector_model_from_bundle(self.model_path)
            return FaceCounter(model, min_detection_confidence=self.options.min_detection_confidence,
                               source=f"face model {self.model_path}")
        except TrackingError as exc:
            log.warning("adaptive face count: %s; probing with the %d-face landmarker instead (its output "
                        "replaces the one-face landmarker's on probe frames)", exc, self.options.num_faces)
            return None

    def _detect_video(self, lm, mp_image, t_ns: int):
        """VIDEO mode: strictly increasing ms timestamps over every landmarker of this tracker."""
        ms = max(int(t_ns) // 1_000_000, self._last_ms + 1)
        self._last_ms = ms
        return lm.detect_for_video(mp_image, ms)

    def process(self, image: np.ndarray, t_ns: int, *, index: int = -1) -> FaceObservation:
        """The chosen face in ``image`` at ``t_ns``, or ``FaceObservation.empty(t_ns)``."""
        faces = self.detect(image, t_ns, index=index)
        i = self.selector.select(faces, int(t_ns))
        if i < 0:
            obs = FaceObservation.empty(t_ns, image_size=(int(image.shape[1]), int(image.shape[0])), index=index)
        else:
            obs = faces[i]
        if self.hands is not None:
            obs.arms = self.hands.process(image, t_ns)
        return obs

    def process_frame(self, frame: Frame) -> FaceObservation:
        """:meth:`process` for a :class:`~tracking.frame_sources.Frame`."""
        return self.process(frame.image, frame.timestamp_ns, index=frame.index)

    def close(self) -> None:
        """Release the MediaPipe graphs. Idempotent."""
        if getattr(self, "hands", None) is not None:
            self.hands.close()
            self.hands = None
        if getattr(self, "_counter", None) is not None:
            self._counter.close()
            self._counter = None
        if self._one is not None:
            self._one.close()
            self._one = None
        if self._lm is not None:
            self._lm.close()
            self._lm = None

    def __enter__(self) -> "FaceTracker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - safety net; use the context manager
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass
