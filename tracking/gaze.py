"""Eye gaze from one face observation: eyeLook* blendshapes and/or iris landmarks.

Angles are the eyes' rotation relative to the head, radians, in VRM lookAt terms
(VRMC_vrm-1.0 lookAt.md, "LookAt space"): yaw > 0 looks to the left, pitch > 0 looks down.
:func:`user_gaze` gives them for the USER (yaw > 0: the user looks to their own left);
:class:`GazeTracker` turns them into avatar terms — mirrored like the head (selfie view:
the user looking to their left makes the avatar look to the screen's left, its own right,
so yaw changes sign) — holds them through blinks and filters them (One Euro).

Two estimates (MediaPipe FaceLandmarker, 478 landmarks with irises, 52 blendshapes):

- blendshapes: ``left = ½(eyeLookOutLeft + eyeLookInRight)`` (ARKit sides are the user's),
  ``right = ½(eyeLookOutRight + eyeLookInLeft)``, ``up``/``down`` the means of the two eyes;
  yaw = (left − right) · :attr:`GazeOptions.blend_yaw_deg`, pitch = (down − up) ·
  :attr:`GazeOptions.blend_pitch_deg`;
- irises: per eye, the iris centre (468 right eye, 473 left eye) against the eye corners
  (33/133 and 362/263), in pixels: ``h`` = the iris offset from the corners' midpoint along
  the corner line, ``v`` across it (image down), both divided by the corner distance; an
  eyeball of radius ~0.4 eye widths turns by ``asin(clamp(f / 0.4))``. The user's left is
  the image's right (the frame is not mirrored), so yaw = mean of the eyes' ``asin(h / 0.4)``.

``both`` (the default) averages the two. Blinks: MediaPipe's eyeLookDown rises and the iris
is hidden while the lids close, so the update is gated by the eyes' openness: with c the
larger eyeBlink value, the new estimate gets weight clamp((blink_hold − c)/blink_ramp, 0, 1)
and the rest stays with the previous gaze (a closed eye holds the gaze: no jerk).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .expressions import BLENDSHAPE_INDEX
from .filters import OneEuroFilter, OneEuroParams

SOURCES = ("both", "blendshapes", "iris")
#: Gaze filter: eyes move fast (saccades) but iris landmarks are noisy.
GAZE_FILTER = OneEuroParams(min_cutoff_hz=2.0, beta=1.5, d_cutoff_hz=1.0)

_IX = BLENDSHAPE_INDEX
# (iris centre, inner corner, outer corner) per eye, MediaPipe face mesh indices
_RIGHT_EYE = (468, 133, 33)     # the user's right eye: outer corner on the image's left
_LEFT_EYE = (473, 362, 263)     # the user's left eye: outer corner on the image's right
#: eyeball radius in eye widths (corner distance ~30 mm, eyeball radius ~12 mm)
EYEBALL_RADIUS = 0.4


@dataclass(frozen=True)
class GazeOptions:
    """Settings of the gaze estimate.

    Attributes:
        source: "both", "blendshapes" or "iris".
        blend_yaw_deg, blend_pitch_deg: degrees of gaze per unit of eyeLook difference.
        iris_pitch_offset: the iris's rest position across the corner line (eye widths,
            image down), subtracted before the vertical angle.
        blink_hold, blink_ramp: the gate on eye closure (module doc).
        max_deg: the estimate is clamped to ±this (degrees).
        filter: One Euro settings (per rad/s for ``beta``).
    """

    source: str = "both"
    blend_yaw_deg: float = 40.0
    blend_pitch_deg: float = 30.0
    iris_pitch_offset: float = 0.0
    blink_hold: float = 0.5
    blink_ramp: float = 0.2
    max_deg: float = 45.0
    filter: OneEuroParams = GAZE_FILTER

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"gaze source {self.source!r} is not one of {', '.join(SOURCES)}")


def blendshape_gaze(bs: np.ndarray, options: GazeOptions = GazeOptions()) -> tuple[float, float]:
    """(yaw, pitch) radians of the user's gaze from (52,) blendshapes (module doc)."""
    g = bs.__getitem__
    left = 0.5 * (g(_IX["eyeLookOutLeft"]) + g(_IX["eyeLookInRight"]))
    right = 0.5 * (g(_IX["eyeLookOutRight"]) + g(_IX["eyeLookInLeft"]))
    up = 0.5 * (g(_IX["eyeLookUpLeft"]) + g(_IX["eyeLookUpRight"]))
    down = 0.5 * (g(_IX["eyeLookDownLeft"]) + g(_IX["eyeLookDownRight"]))
    return (math.radians(float(left - right) * options.blend_yaw_deg),
            math.radians(float(down - up) * options.blend_pitch_deg))


def _eye(lm: np.ndarray, w: float, h: float, eye: tuple[int, int, int]) -> tuple[float, float]:
    """(h, v): the iris offset along / across the corner line, in eye widths (image right /
    image down positive)."""
    iris, a, b = (np.array([lm[i, 0] * w, lm[i, 1] * h]) for i in eye)
    axis = b - a if eye is _LEFT_EYE else a - b       # image-right direction along the eye
    width = float(np.hypot(axis[0], axis[1]))
    if width < 1e-6:
        return 0.0, 0.0
    ux, uy = axis / width
    d = iris - 0.5 * (a + b)
    return (float(d[0] * ux + d[1] * uy) / width, float(-d[0] * uy + d[1] * ux) / width)


def iris_gaze(landmarks: np.ndarray, image_size: tuple[int, int],
              options: GazeOptions = GazeOptions()) -> tuple[float, float] | None:
    """(yaw, pitch) radians of the user's gaze from the iris landmarks (module doc), or None
    when the landmarks have no irises (fewer than 478) or no image size."""
    w, h = image_size
    if landmarks.shape[0] < 478 or not w or not h:
        return None
    hs, vs = zip(_eye(landmarks, w, h, _RIGHT_EYE), _eye(landmarks, w, h, _LEFT_EYE))
    r = EYEBALL_RADIUS
    yaw = math.asin(min(max(0.5 * (hs[0] + hs[1]) / r, -1.0), 1.0))
    pitch = math.asin(min(max((0.5 * (vs[0] + vs[1]) - options.iris_pitch_offset) / r, -1.0), 1.0))
    return yaw, pitch


def user_gaze(blendshapes: np.ndarray, landmarks: np.ndarray | None, image_size: tuple[int, int],
              options: GazeOptions = GazeOptions()) -> tuple[float, float]:
    """The user's gaze (yaw > 0: to their left; pitch > 0: down), radians, clamped to
    ±``max_deg``, from the chosen source(s) (module doc)."""
    est = []
    if options.source in ("both", "blendshapes"):
        est.append(blendshape_gaze(blendshapes, options))
    if options.source in ("both", "iris") and landmarks is not None:
        iris = iris_gaze(landmarks, image_size, options)
        if iris is not None:
            est.append(iris)
    if not est:
        return 0.0, 0.0
    m = math.radians(options.max_deg)
    yaw = sum(e[0] for e in est) / len(est)
    pitch = sum(e[1] for e in est) / len(est)
    return min(max(yaw, -m), m), min(max(pitch, -m), m)


class GazeTracker:
    """Per observation: the user's gaze in avatar terms, held through blinks, One Euro
    filtered (module doc). Not thread-safe (the pose filter calls it under its lock).

    Args:
        options: see :class:`GazeOptions`.
        mirror: selfie view (yaw changes sign); must match the head's mirror.
    """

    def __init__(self, options: GazeOptions = GazeOptions(), *, mirror: bool = True) -> None:
        self.options = options
        self.mirror = mirror
        self._filter = OneEuroFilter(2, options.filter)
        self._held = np.zeros(2)
        self._raw = np.zeros(2)

    def reset(self) -> None:
        """Forget the history (a new face: no filtering across a gap)."""
        self._filter.reset()
        self._held[:] = 0.0

    def openness_weight(self, blendshapes: np.ndarray) -> float:
        """The weight of a new estimate given the eyes' closure (1 open, 0 closed)."""
        o = self.options
        c = max(float(blendshapes[_IX["eyeBlinkLeft"]]), float(blendshapes[_IX["eyeBlinkRight"]]))
        return min(max((o.blink_hold - c) / o.blink_ramp, 0.0), 1.0)

    def update(self, blendshapes: np.ndarray, landmarks: np.ndarray | None, image_size: tuple[int, int],
               t_ns: int, *, restart: bool = False) -> np.ndarray:
        """The filtered avatar-frame gaze (2,) radians after the observation at ``t_ns``
        (a view of the filter state: copy it). ``restart``: the first observation after a
        loss (the filter restarts there)."""
        yaw, pitch = user_gaze(blendshapes, landmarks, image_size, self.options)
        if self.mirror:
            yaw = -yaw
        w = self.openness_weight(blendshapes)
        if restart or not self._filter.initialized:
            self._held[:] = (yaw * w, pitch * w)
            self._filter.reset(self._held, t_ns)
            return self._filter.value
        self._raw[0] = w * yaw + (1.0 - w) * self._held[0]
        self._raw[1] = w * pitch + (1.0 - w) * self._held[1]
        self._held[:] = self._raw
        return self._filter(self._raw, t_ns)
