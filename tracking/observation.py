"""The tracker's per-frame result: :class:`FaceObservation`.

Kept free of MediaPipe imports so that pose tracks, filters and the runtime can use it
without loading the model runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .expressions import NUM_BLENDSHAPES

NUM_LANDMARKS = 478


def _identity_q() -> np.ndarray:
    return np.array([0.0, 0.0, 0.0, 1.0])


@dataclass
class FaceObservation:
    """One face seen in one frame, or the empty result when no face was found.

    All poses are in MediaPipe's camera frame (x right, y up, z toward the viewer), NOT
    mirrored; :class:`tracking.HeadPoseMapper` converts them to avatar terms.

    Attributes:
        timestamp_ns: capture time of the frame, integer ns.
        found: False for the empty result (then rotation is the identity and every array
            is zero).
        rotation: (4,) quaternion (x, y, z, w) of the face in the camera frame (from the
            facial transformation matrix).
        translation: (3,) metres, the canonical face origin in the camera frame (z < 0:
            in front of the camera).
        blendshapes: (52,) float64 in [0, 1], MediaPipe/ARKit order
            (:data:`tracking.BLENDSHAPE_NAMES`; index 0 is ``_neutral``).
        landmarks: (478, 3) float64; x, y normalised to the image width/height (0..1, y
            down), z MediaPipe's relative depth (same scale as x).
        confidence: 0..1; the fraction of landmarks inside the image (1.0 for a fully
            visible face; MediaPipe has already rejected faces below its presence
            threshold). 0 when not found.
        face_box: (4,) ``(x0, y0, x1, y1)`` normalised image coordinates, the landmarks'
            bounding box.
        image_size: ``(width, height)`` of the frame in pixels.
        transform: (4, 4) MediaPipe's facial transformation matrix (centimetres, camera
            frame), kept for drawing.
        index: the frame index within its source (-1 when unknown).
        arms: the arm pose of the same frame (:mod:`tracking.hands`, (ARM_W,), avatar frame)
            when the tracker tracks hands, else None.
    """

    timestamp_ns: int
    found: bool = False
    rotation: np.ndarray = field(default_factory=_identity_q)
    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))
    blendshapes: np.ndarray = field(default_factory=lambda: np.zeros(NUM_BLENDSHAPES))
    landmarks: np.ndarray = field(default_factory=lambda: np.zeros((NUM_LANDMARKS, 3)))
    confidence: float = 0.0
    face_box: np.ndarray = field(default_factory=lambda: np.zeros(4))
    image_size: tuple[int, int] = (0, 0)
    transform: np.ndarray = field(default_factory=lambda: np.eye(4))
    index: int = -1
    arms: np.ndarray | None = None

    @classmethod
    def empty(cls, timestamp_ns: int, *, image_size: tuple[int, int] = (0, 0), index: int = -1) -> "FaceObservation":
        """The no-face result at ``timestamp_ns`` (``found`` is False)."""
        return cls(timestamp_ns=int(timestamp_ns), image_size=image_size, index=index)

    @property
    def box_area(self) -> float:
        """Face box area as a fraction of the image area."""
        x0, y0, x1, y1 = self.face_box
        return max(0.0, float(x1 - x0)) * max(0.0, float(y1 - y0))

    @property
    def box_center(self) -> np.ndarray:
        """(2,) centre of the face box, normalised image coordinates."""
        x0, y0, x1, y1 = self.face_box
        return np.array([(x0 + x1) * 0.5, (y0 + y1) * 0.5])
