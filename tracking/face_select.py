"""Choosing one face among several, stably: never flicker between people.

Score of a face: the visible part of its box (area as a fraction of the image, clipped to
the image) times its confidence (the fraction of its landmarks inside the image) times a
centrality factor, ``area · confidence · (1 − center_weight · d / d_max)`` with ``d`` the
distance of the box centre from the image centre (normalised coordinates, ``d_max = √0.5``).

The chosen person is followed from frame to frame by box overlap (MediaPipe's face order
is not stable: on the 4-person clip it reorders after a missed detection). The choice
changes only when

- another face scores ``switch_ratio`` times the chosen one for ``switch_hold_s`` in a row
  (hysteresis in score and in time), or
- the chosen face has not been seen for ``memory_s``; until then the selector reports no
  face (the pose filter holds the last pose) instead of jumping to someone else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .observation import FaceObservation


@dataclass(frozen=True)
class FaceSelectOptions:
    """Settings of :class:`FaceSelector` (module doc). Times in seconds."""

    center_weight: float = 0.5
    switch_ratio: float = 1.5
    switch_hold_s: float = 1.0
    memory_s: float = 1.0
    match_iou: float = 0.3


def box_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two ``(x0, y0, x1, y1)`` boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


class FaceSelector:
    """Stateful choice of one face per frame; feed every frame's faces in time order."""

    def __init__(self, options: FaceSelectOptions = FaceSelectOptions()) -> None:
        self.options = options
        self.reset()

    def reset(self) -> None:
        """Forget the chosen person."""
        self._box: np.ndarray | None = None
        self._seen_ns = 0
        self._challenge_ns: int | None = None
        self.switches = 0

    def score(self, face: FaceObservation) -> float:
        x0, y0, x1, y1 = np.clip(face.face_box, 0.0, 1.0)
        area = max(0.0, float(x1 - x0)) * max(0.0, float(y1 - y0))
        d = math.hypot(0.5 * float(x0 + x1) - 0.5, 0.5 * float(y0 + y1) - 0.5) / math.sqrt(0.5)
        return area * face.confidence * max(0.0, 1.0 - self.options.center_weight * min(d, 1.0))

    def select(self, faces: Sequence[FaceObservation], t_ns: int) -> int:
        """Index of the chosen face in ``faces`` (found ones), or -1 for none this frame."""
        o = self.options
        if not faces:
            self._challenge_ns = None
            return -1
        scores = [self.score(f) for f in faces]
        best = int(np.argmax(scores))
        if self._box is not None:
            ious = [box_iou(self._box, f.face_box) for f in faces]
            match = int(np.argmax(ious))
            if ious[match] >= o.match_iou:
                chosen = match
                if best != match and scores[best] > o.switch_ratio * scores[match]:
                    if self._challenge_ns is None:
                        self._challenge_ns = t_ns
                    if (t_ns - self._challenge_ns) * 1e-9 >= o.switch_hold_s:
                        chosen = best
                        self.switches += 1
                        self._challenge_ns = None
                else:
                    self._challenge_ns = None
                return self._keep(faces, chosen, t_ns)
            if (t_ns - self._seen_ns) * 1e-9 < o.memory_s:
                return -1  # the chosen person is briefly missing: do not jump to someone else
            self.switches += 1
        self._challenge_ns = None
        return self._keep(faces, best, t_ns)

    def _keep(self, faces: Sequence[FaceObservation], i: int, t_ns: int) -> int:
        self._box = np.array(faces[i].face_box, dtype=np.float64)
        self._seen_ns = t_ns
        return i
