"""The mouth from two sources: the camera's visemes (blendshapes mapped by
:class:`tracking.expressions.ExpressionMapper`) and the audio's (:mod:`tracking.audio`).

Modes (``[lipsync] mix``):

- ``auto`` (default): the louder and surer source wins, softly. The audio's strength is
  ``s_a = level · confidence · audio_weight`` (level: the gated volume, confidence: the
  winning vowel's share); the camera's ``s_c = min(1, Σ visemes) · face confidence ·
  camera_weight`` (how open the tracked mouth is, and how sure the tracker is). The audio's
  share ``w = s_a⁴ / (s_a⁴ + s_c⁴)`` (0 when both are 0): a clear winner takes nearly all,
  a tie blends, and the share moves continuously with its inputs, so the mouth never jumps.
- ``audio``: the audio's visemes whenever an audio source runs (the camera's otherwise).
- ``camera``: the camera's; the audio is ignored.
- ``max``: per viseme, the larger of the two.

The result replaces ``aa ih ou ee oh`` (VRM 1.0 names; VRM 0.x avatars' ``a i u e o`` are
the same expressions under :mod:`avatars.expressions`' names); scaled down together when
their sum exceeds 1, as the camera mapping does.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracking.audio import V_CONF, V_LEVEL, V_ON, VISEMES

MIX_MODES = ("auto", "audio", "camera", "max")


@dataclass(frozen=True)
class MixOptions:
    """Attributes: mix (:data:`MIX_MODES`), camera_weight, audio_weight (>= 0, the ``auto`` bias)."""

    mix: str = "auto"
    camera_weight: float = 1.0
    audio_weight: float = 1.0

    def __post_init__(self) -> None:
        if self.mix not in MIX_MODES:
            raise ValueError(f"mix: {self.mix!r} is not one of {', '.join(MIX_MODES)}")
        if not (self.camera_weight >= 0 and self.audio_weight >= 0):
            raise ValueError("camera_weight and audio_weight must be >= 0")


def audio_share(voice, camera: dict[str, float], face_confidence: float, o: MixOptions) -> float:
    """The audio's share w in [0, 1] of the mouth (module doc) for ``voice`` (8,) and the
    camera's viseme weights."""
    if not voice[V_ON] or o.mix == "camera":
        return 0.0
    if o.mix == "audio":
        return 1.0
    s_a = float(voice[V_LEVEL]) * float(voice[V_CONF]) * o.audio_weight
    s_c = min(1.0, sum(camera.get(v, 0.0) for v in VISEMES)) * float(face_confidence) * o.camera_weight
    a4, c4 = s_a ** 4, s_c ** 4
    return 0.0 if a4 + c4 == 0.0 else a4 / (a4 + c4)


def mix_mouth(values: dict[str, float], voice, face_confidence: float, o: MixOptions) -> dict[str, float]:
    """``values`` (expression name -> weight, the camera's) with the mouth mixed (module doc),
    in place; returned."""
    if not voice[V_ON] or o.mix == "camera":
        return values
    if o.mix == "max":
        mouth = [max(values.get(v, 0.0), float(voice[i])) for i, v in enumerate(VISEMES)]
    else:
        w = audio_share(voice, values, face_confidence, o)
        mouth = [(1.0 - w) * values.get(v, 0.0) + w * float(voice[i]) for i, v in enumerate(VISEMES)]
    total = sum(mouth)
    k = 1.0 / total if total > 1.0 else 1.0
    for v, m in zip(VISEMES, mouth):
        values[v] = m * k
    return values
