"""Blendshapes -> VRM expression presets, per-user calibration, ARKit "perfect sync".

MediaPipe's 52 blendshapes follow ARKit's names plus ``_neutral`` at index 0 (no
``tongueOut``). Their ``Left``/``Right`` are the SUBJECT's anatomical sides (measured on
the selfie clip: ``eyeBlinkLeft`` follows the eye on the image's right in an unmirrored
frame, ``eyeLookOutLeft`` rises when the subject looks to their own left), as in ARKit.

VRM presets are the avatar's anatomical sides. With ``mirror=True`` (the default, selfie
view) the avatar is the user's reflection, so the user's left eye drives the avatar's
RIGHT eye (``blinkRight``), the user looking to their left makes the avatar look to its
right (the screen's left, ``lookRight``), and ARKit names swap ``Left`` <-> ``Right``.

The preset formulas are heuristics (documented in :meth:`ExpressionMapper.map`); every
input first goes through the user's calibration range, ``clamp((v - lo) / (hi - lo))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

BLENDSHAPE_NAMES: tuple[str, ...] = (
    "_neutral", "browDownLeft", "browDownRight", "browInnerUp", "browOuterUpLeft",
    "browOuterUpRight", "cheekPuff", "cheekSquintLeft", "cheekSquintRight", "eyeBlinkLeft",
    "eyeBlinkRight", "eyeLookDownLeft", "eyeLookDownRight", "eyeLookInLeft", "eyeLookInRight",
    "eyeLookOutLeft", "eyeLookOutRight", "eyeLookUpLeft", "eyeLookUpRight", "eyeSquintLeft",
    "eyeSquintRight", "eyeWideLeft", "eyeWideRight", "jawForward", "jawLeft", "jawOpen",
    "jawRight", "mouthClose", "mouthDimpleLeft", "mouthDimpleRight", "mouthFrownLeft",
    "mouthFrownRight", "mouthFunnel", "mouthLeft", "mouthLowerDownLeft", "mouthLowerDownRight",
    "mouthPressLeft", "mouthPressRight", "mouthPucker", "mouthRight", "mouthRollLower",
    "mouthRollUpper", "mouthShrugLower", "mouthShrugUpper", "mouthSmileLeft", "mouthSmileRight",
    "mouthStretchLeft", "mouthStretchRight", "mouthUpperUpLeft", "mouthUpperUpRight",
    "noseSneerLeft", "noseSneerRight",
)  # fmt: skip
NUM_BLENDSHAPES = len(BLENDSHAPE_NAMES)
BLENDSHAPE_INDEX: dict[str, int] = {n: i for i, n in enumerate(BLENDSHAPE_NAMES)}

#: VRM 1.0 preset names produced by :class:`ExpressionMapper`, in output order.
VRM_PRESETS: tuple[str, ...] = (
    "blink", "blinkLeft", "blinkRight", "aa", "ih", "ou", "ee", "oh",
    "happy", "angry", "sad", "relaxed", "surprised",
    "lookUp", "lookDown", "lookLeft", "lookRight",
)  # fmt: skip
PRESET_INDEX: dict[str, int] = {n: i for i, n in enumerate(VRM_PRESETS)}


def mirror_name(name: str) -> str:
    """Swap a ``Left``/``Right`` suffix (``eyeBlinkLeft`` -> ``eyeBlinkRight``)."""
    if name.endswith("Left"):
        return name[:-4] + "Right"
    if name.endswith("Right"):
        return name[:-5] + "Left"
    return name


#: blendshape index -> index of its mirror image (identity for unsided names).
MIRROR_PERMUTATION = np.array([BLENDSHAPE_INDEX[mirror_name(n)] for n in BLENDSHAPE_NAMES])

_DEFAULT_RANGES = {"eyeBlinkLeft": (0.15, 0.70), "eyeBlinkRight": (0.15, 0.70), "jawOpen": (0.02, 0.60)}
#: channels calibrated by :meth:`ExpressionCalibration.from_samples`: (rest %, peak %).
_CALIBRATED = {"eyeBlinkLeft": (75.0, 99.0), "eyeBlinkRight": (75.0, 99.0), "jawOpen": (10.0, 99.0),
               "mouthFunnel": (10.0, 99.0), "mouthPucker": (10.0, 99.0)}  # fmt: skip


@dataclass(frozen=True)
class ExpressionCalibration:
    """Per-user input ranges: blendshape name -> ``(lo, hi)``; unlisted channels use (0, 1).

    ``lo`` is the user's resting value (eyes open, mouth closed), ``hi`` the fully
    closed/open value.
    """

    ranges: Mapping[str, tuple[float, float]] = field(default_factory=lambda: dict(_DEFAULT_RANGES))

    def __post_init__(self) -> None:
        for name, (lo, hi) in self.ranges.items():
            if name not in BLENDSHAPE_INDEX:
                raise ValueError(f"calibration: unknown blendshape {name!r}")
            if not hi > lo:
                raise ValueError(f"calibration: {name} range ({lo}, {hi}) is empty")

    @classmethod
    def from_samples(cls, blendshapes: np.ndarray, *, min_span: float = 0.2) -> "ExpressionCalibration":
        """Measure a user's blink and mouth ranges from blendshapes ``(N, 52)`` seen while
        they talk and blink normally (eyes are open most of the time, the mouth closed
        part of it). ``lo``/``hi`` are percentiles per channel; ``hi >= lo + min_span``.
        """
        b = np.asarray(blendshapes, dtype=np.float64)
        if b.ndim != 2 or b.shape[1] != NUM_BLENDSHAPES or len(b) == 0:
            raise ValueError(f"calibration needs blendshapes of shape (N, 52), got {b.shape}")
        ranges = {}
        for name, (rest_q, peak_q) in _CALIBRATED.items():
            col = b[:, BLENDSHAPE_INDEX[name]]
            lo = float(np.percentile(col, rest_q))
            hi = max(float(np.percentile(col, peak_q)), lo + min_span)
            ranges[name] = (lo, hi)
        return cls(ranges)

    def scale_offset(self) -> tuple[np.ndarray, np.ndarray]:
        """(52,) scale and (52,) offset with calibrated = clamp(v * scale + offset)."""
        scale, offset = np.ones(NUM_BLENDSHAPES), np.zeros(NUM_BLENDSHAPES)
        for name, (lo, hi) in self.ranges.items():
            i = BLENDSHAPE_INDEX[name]
            scale[i] = 1.0 / (hi - lo)
            offset[i] = -lo / (hi - lo)
        return scale, offset


def _ramp(v: float, lo: float, hi: float) -> float:
    return min(1.0, max(0.0, (v - lo) / (hi - lo)))


@dataclass(frozen=True)
class ExpressionOptions:
    """Settings of :class:`ExpressionMapper`.

    Attributes:
        mirror: selfie view (module doc); must match the head pose's mirror setting.
        wink_threshold: when the two calibrated eye closures differ by less than this,
            both eyes use their mean (no accidental half winks); 0 disables linking.
        emotions: derive happy/angry/sad/relaxed/surprised from the face (else all 0).
        look_dead_zone: gaze blendshape level below which look* stays 0.
    """

    mirror: bool = True
    wink_threshold: float = 0.25
    emotions: bool = True
    look_dead_zone: float = 0.15


class ExpressionMapper:
    """Maps (52,) blendshapes to VRM preset weights (17,), in :data:`VRM_PRESETS` order."""

    def __init__(self, options: ExpressionOptions = ExpressionOptions(),
                 calibration: ExpressionCalibration | None = None) -> None:  # fmt: skip
        self.options = options
        self._cal = np.empty(NUM_BLENDSHAPES)
        self.calibrate(calibration or ExpressionCalibration())

    def calibrate(self, calibration: ExpressionCalibration) -> None:
        """Use ``calibration`` from now on (see :meth:`ExpressionCalibration.from_samples`)."""
        self.calibration = calibration
        self._scale, self._offset = calibration.scale_offset()

    def map(self, blendshapes: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """VRM preset weights in [0, 1], shape (17,). Formulas (c = calibrated input,
        sides are the user's; the mirror then assigns them to the avatar's sides):

        - eyes: ``L = c(eyeBlinkLeft)``, ``R = c(eyeBlinkRight)``; linked to their mean when
          ``|L − R| < wink_threshold``; ``blink = min(L, R)``, ``blinkLeft/Right`` = the rest.
        - mouth: ``jaw = c(jawOpen)``, ``round = max(c(mouthFunnel), c(mouthPucker))``,
          ``wide = clamp(mean(mouthStretch) + ½·mean(mouthSmile))``; ``aa = jaw·(1−round)·(1−½wide)``,
          ``ih = jaw·½wide·(1−round)``, ``oh = jaw·round``, ``ou = round·(1−jaw)``,
          ``ee = wide·(1−round)·(1−jaw)``; scaled down together if their sum exceeds 1.
        - emotions (dead zones so a resting face gives 0): ``happy = ramp(smile, .3, .8)``,
          ``angry = ramp(browDown, .3, .7)·(1−happy)``, ``sad = ramp(frown+½browInnerUp, .2, .7)·(1−happy)``,
          ``surprised = ramp(browOuterUp+½eyeWide, .35, .8)``, ``relaxed = ramp(squint, .5, .9)·(1−happy)``.
        - gaze: ``left = mean(eyeLookOutLeft, eyeLookInRight)`` (the user looks to their
          left), ramped from ``look_dead_zone`` to 0.7; likewise right/up/down.
        """
        o = self.options
        c = np.clip(np.asarray(blendshapes, dtype=np.float64) * self._scale + self._offset, 0.0, 1.0)
        if out is None:
            out = np.zeros(len(VRM_PRESETS))
        g = c.__getitem__
        ix = BLENDSHAPE_INDEX
        # eyes
        el, er = g(ix["eyeBlinkLeft"]), g(ix["eyeBlinkRight"])
        if abs(el - er) < o.wink_threshold:
            el = er = 0.5 * (el + er)
        blink = min(el, er)
        user_l, user_r = el - blink, er - blink
        # mouth
        jaw = g(ix["jawOpen"])
        rnd = max(g(ix["mouthFunnel"]), g(ix["mouthPucker"]))
        wide = min(1.0, 0.5 * (g(ix["mouthStretchLeft"]) + g(ix["mouthStretchRight"]))
                   + 0.25 * (g(ix["mouthSmileLeft"]) + g(ix["mouthSmileRight"])))  # fmt: skip
        aa = jaw * (1 - rnd) * (1 - 0.5 * wide)
        ih = jaw * 0.5 * wide * (1 - rnd)
        oh = jaw * rnd
        ou = rnd * (1 - jaw)
        ee = wide * (1 - rnd) * (1 - jaw)
        total = aa + ih + ou + ee + oh
        k = 1.0 / total if total > 1.0 else 1.0
        # emotions
        happy = angry = sad = relaxed = surprised = 0.0
        if o.emotions:
            smile = 0.5 * (g(ix["mouthSmileLeft"]) + g(ix["mouthSmileRight"]))
            happy = _ramp(smile, 0.3, 0.8)
            brow_down = 0.5 * (g(ix["browDownLeft"]) + g(ix["browDownRight"]))
            angry = _ramp(brow_down, 0.3, 0.7) * (1 - happy)
            frown = 0.5 * (g(ix["mouthFrownLeft"]) + g(ix["mouthFrownRight"]))
            sad = _ramp(frown + 0.5 * g(ix["browInnerUp"]), 0.2, 0.7) * (1 - happy)
            brow_up = 0.5 * (g(ix["browOuterUpLeft"]) + g(ix["browOuterUpRight"]))
            wide_eyes = 0.5 * (g(ix["eyeWideLeft"]) + g(ix["eyeWideRight"]))
            surprised = _ramp(brow_up + 0.5 * wide_eyes, 0.35, 0.8)
            squint = 0.5 * (g(ix["eyeSquintLeft"]) + g(ix["eyeSquintRight"]))
            relaxed = _ramp(squint, 0.5, 0.9) * (1 - happy)
        # gaze
        dz = o.look_dead_zone
        look_l = _ramp(0.5 * (g(ix["eyeLookOutLeft"]) + g(ix["eyeLookInRight"])), dz, 0.7)
        look_r = _ramp(0.5 * (g(ix["eyeLookOutRight"]) + g(ix["eyeLookInLeft"])), dz, 0.7)
        look_u = _ramp(0.5 * (g(ix["eyeLookUpLeft"]) + g(ix["eyeLookUpRight"])), dz, 0.7)
        look_d = _ramp(0.5 * (g(ix["eyeLookDownLeft"]) + g(ix["eyeLookDownRight"])), dz, 0.7)
        if o.mirror:
            user_l, user_r = user_r, user_l
            look_l, look_r = look_r, look_l
        out[:] = (blink, user_l, user_r, aa * k, ih * k, ou * k, ee * k, oh * k,
                  happy, angry, sad, relaxed, surprised, look_u, look_d, look_l, look_r)  # fmt: skip
        return out

    def map_dict(self, blendshapes: np.ndarray) -> dict[str, float]:
        """:meth:`map` as ``{preset name: weight}``."""
        return dict(zip(VRM_PRESETS, self.map(blendshapes).tolist()))


class PerfectSync:
    """ARKit-named custom expressions ("perfect sync") passed straight through.

    Args:
        available: the avatar's custom expression names; matched to ARKit names
            case-insensitively (the avatar's own spelling is kept).
        mirror: swap Left/Right (module doc).

    ``names`` lists the matched avatar names; :meth:`apply` writes their weights (raw
    blendshape values, uncalibrated, as ARKit apps do) into ``out`` (len(names),).
    """

    def __init__(self, available: Iterable[str], *, mirror: bool = True) -> None:
        lower = {n.lower(): i for i, n in enumerate(BLENDSHAPE_NAMES) if i > 0}
        self.names: list[str] = []
        idx = []
        for name in available:
            i = lower.get(name.lower())
            if i is None:
                continue
            self.names.append(name)
            idx.append(MIRROR_PERMUTATION[i] if mirror else i)
        self._idx = np.array(idx, dtype=np.intp)

    def apply(self, blendshapes: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty(len(self._idx))
        np.take(np.asarray(blendshapes, dtype=np.float64), self._idx, out=out)
        return out

    def as_dict(self, blendshapes: np.ndarray) -> dict[str, float]:
        return dict(zip(self.names, self.apply(blendshapes).tolist()))
