"""Names on the VMC wire: Unity ``HumanBodyBones`` <-> VRM 1.0 humanoid bones, VRM 0.x / 1.0
expression presets, and the Unity frame.

- Bones (VMC protocol spec, "Bone Transform": HumanBodyBones type names): the VRM 1.0 name
  with its first letter upper-cased, except the thumbs, shifted by one (VRMC_vrm-1.0
  humanoid.md "changes from 0.x"): thumbMetacarpal -> ThumbProximal, thumbProximal ->
  ThumbIntermediate, thumbDistal -> ThumbDistal.
- Expressions (VMC spec, "VRM0 vs VRM1 Incompatibility Warning"): senders send VRM 0.x
  BlendShape preset names by default (Joy, Angry, Sorrow, Fun, Surprised, A, I, U, E, O,
  Blink, Blink_L, Blink_R, LookUp, LookDown, LookLeft, LookRight, Neutral); VRM 1.0 names as
  an option; custom (perfect sync) names as the model has them. Receivers accept both,
  case-insensitively.
- Frame: Unity is left-handed (+Y up, +Z forward), glTF right-handed; a +Z-facing avatar maps
  by mirroring X: p -> (−x, y, z), q -> (x, −y, −z, w) (an involution: the same map both ways).
"""

from __future__ import annotations

import numpy as np

from tracking.body import BODY_BONES, EXPRESSION_NAMES
from tracking.expressions import BLENDSHAPE_NAMES

_THUMB = {"ThumbMetacarpal": "ThumbProximal", "ThumbProximal": "ThumbIntermediate", "ThumbDistal": "ThumbDistal"}


def unity_bone_name(vrm1: str) -> str:
    """VRM 1.0 humanoid bone name -> Unity HumanBodyBones name."""
    for side in ("left", "right"):
        if vrm1.startswith(side):
            rest = vrm1[len(side):]
            return side.capitalize() + _THUMB.get(rest, rest)
    return vrm1[0].upper() + vrm1[1:]


#: Unity HumanBodyBones name -> index into :data:`tracking.body.BODY_BONES`.
UNITY_BONES: dict[str, int] = {unity_bone_name(n): i for i, n in enumerate(BODY_BONES)}
UNITY_NAMES: tuple[str, ...] = tuple(unity_bone_name(n) for n in BODY_BONES)

#: VRM 1.0 preset -> VRM 0.x BlendShape preset name (as VMC senders spell them).
VRM0_NAMES: dict[str, str] = {
    "happy": "Joy", "angry": "Angry", "sad": "Sorrow", "relaxed": "Fun", "surprised": "Surprised",
    "aa": "A", "ih": "I", "ou": "U", "ee": "E", "oh": "O", "blink": "Blink", "blinkLeft": "Blink_L",
    "blinkRight": "Blink_R", "lookUp": "LookUp", "lookDown": "LookDown", "lookLeft": "LookLeft",
    "lookRight": "LookRight", "neutral": "Neutral",
}
assert set(VRM0_NAMES) == set(EXPRESSION_NAMES)

#: lower-cased wire name -> ("preset", index in EXPRESSION_NAMES) or ("arkit", blendshape index)
WIRE_EXPRESSIONS: dict[str, tuple[str, int]] = {}
for _i, _n in enumerate(BLENDSHAPE_NAMES):
    if _i:
        WIRE_EXPRESSIONS[_n.lower()] = ("arkit", _i)
for _i, _n in enumerate(EXPRESSION_NAMES):
    WIRE_EXPRESSIONS[_n.lower()] = ("preset", _i)
    WIRE_EXPRESSIONS[VRM0_NAMES[_n].lower()] = ("preset", _i)

NAME_STYLES = ("vrm0", "vrm1")


def wire_expression_name(name: str, preset: bool, style: str = "vrm0") -> str:
    """The name an avatar expression is sent under: a VRM 1.0 preset as VRM 0.x (``vrm0``) or
    as is (``vrm1``); a custom expression as the model has it."""
    if preset and style == "vrm0":
        return VRM0_NAMES.get(name, name)
    return name


def to_unity_p(p: np.ndarray) -> np.ndarray:
    """(..., 3) positions, avatar frame -> Unity frame (and back)."""
    out = np.array(p, np.float64, copy=True)
    out[..., 0] *= -1.0
    return out


def to_unity_q(q: np.ndarray) -> np.ndarray:
    """(..., 4) quaternions (x, y, z, w), avatar frame -> Unity frame (and back)."""
    out = np.array(q, np.float64, copy=True)
    out[..., 1] *= -1.0
    out[..., 2] *= -1.0
    return out
