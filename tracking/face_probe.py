"""Counting faces for the adaptive tracker's probe: MediaPipe's own face detector.

The adaptive face count (:mod:`tracking.adaptive`) tracks with a one-face landmarker and
looks for a second face now and then. It looks with MediaPipe's ``FaceDetector`` (BlazeFace
short range, the model the face landmarker itself detects with), in IMAGE running mode so
each probe is independent of the others and of the landmarkers' tracking state: a probe only
counts faces and never changes what the tracker reports.

The detector model is ``face_detector.tflite`` inside the face landmarker ``.task`` bundle
(a zip file): it is read from there into memory (``BaseOptions(model_asset_buffer=...)``),
never downloaded or written anywhere.

Cost here (2 shared cores, mediapipe 1.2.3): 2.6-2.9 ms per probe at 297×270 to 640×360
(the model's input is 128×128), 2.8-3.5 ms at 1280×720, so ~0.2 ms per frame at one probe
every 15 frames (docs/history/runtime-notes.md, "Adaptive face count").
"""

from __future__ import annotations

import os
import zipfile

from .errors import TrackingError

#: the face detector's member name inside a face landmarker .task bundle
DETECTOR_MEMBER = "face_detector.tflite"


def detector_model_from_bundle(path: str | os.PathLike) -> bytes:
    """The face detector model (tflite bytes) inside the face landmarker bundle at ``path``.

    Raises:
        TrackingError: ``path`` cannot be read, is not a zip file, or holds no
            ``face_detector.tflite`` (the message names the file and the reason).
    """
    try:
        with zipfile.ZipFile(path) as z:
            return z.read(DETECTOR_MEMBER)
    except KeyError:
        raise TrackingError(f"face model {path}: the bundle has no {DETECTOR_MEMBER}") from None
    except zipfile.BadZipFile:
        raise TrackingError(f"face model {path}: not a zip bundle, so no {DETECTOR_MEMBER} to read") from None
    except OSError as exc:
        raise TrackingError(f"face model {path}: cannot read it ({exc})") from None


class FaceCounter:
    """How many faces MediaPipe's face detector finds in a frame; a context manager.

    Args:
        model: the detector's tflite bytes (:func:`detector_model_from_bundle`).
        min_detection_confidence: a detection counts when its score is at least this (0..1;
            the tracker passes its own ``min_detection_confidence``, the threshold the
            landmarker's internal detector uses).
        source: what ``model`` came from, for error messages.

    Raises:
        TrackingError: MediaPipe could not load the model (the message names ``source``).
    """

    def __init__(self, model: bytes, *, min_detection_confidence: float = 0.5, source: str = "face detector") -> None:
        from .mediapipe_import import import_mediapipe

        import_mediapipe()     # without matplotlib and sounddevice (its module doc)
        from mediapipe.tasks.python import BaseOptions, vision

        self.min_detection_confidence = float(min_detection_confidence)
        opts = vision.FaceDetectorOptions(base_options=BaseOptions(model_asset_buffer=model),
                                          running_mode=vision.RunningMode.IMAGE,
                                          min_detection_confidence=self.min_detection_confidence)
        try:
            self._det = vision.FaceDetector.create_from_options(opts)
        except Exception as exc:  # noqa: BLE001 - MediaPipe raises RuntimeError/ValueError variously
            raise TrackingError(f"{source}: MediaPipe could not load the face detector ({exc})") from None
        #: probes run
        self.probes = 0

    def count(self, image) -> int:
        """Faces with a score >= ``min_detection_confidence`` in ``image`` (an ``mp.Image``,
        SRGB), counted independently of any earlier frame."""
        if self._det is None:
            raise TrackingError("FaceCounter is closed")
        result = self._det.detect(image)
        self.probes += 1
        thr = self.min_detection_confidence
        return sum(1 for d in result.detections if d.categories and d.categories[0].score >= thr)

    def close(self) -> None:
        """Release the MediaPipe graph. Idempotent."""
        if self._det is not None:
            self._det.close()
            self._det = None

    def __enter__(self) -> "FaceCounter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["DETECTOR_MEMBER", "FaceCounter", "detector_model_from_bundle"]
