"""Hairstyle try-on (DESIGN §9): fit a hair mesh onto an avatar's head and rig it.

``try_on(avatar, hair, TryOnSettings())`` -> :class:`TryOnResult` whose ``avatar`` is an
ordinary :class:`avatars.Avatar` with the hair mesh, joints, skin and springs added.
Modules, one step each: :mod:`.head` (the target head, scalp triangles, envelope),
:mod:`.fit` (crown, scale, alignment, push-out), :mod:`.graph` (welded surface graph),
:mod:`.guides` (candidate guide curves), :mod:`.scalp` (scalp attachment), :mod:`.join`
(fragment joining), :mod:`.rig` (chains, joints, springs, colliders), :mod:`.weights` (skin
weights), :mod:`.assemble` (the output avatar), :mod:`.pipeline` (all of it),
:mod:`.cache` (results on disk), :mod:`.evaluate` (measures and the benchmark),
:mod:`.geometry` (closest points, winding numbers, the radial envelope).
"""

from .fit import FitReport, fit_hair
from .head import HeadModel, NoHeadError, build_head, own_hair_instances
from .pipeline import GuideReport, TryOnResult, TryOnSettings, try_on
from .rig import Chain, RigOptions
from .scalp import ScalpAttachment

__all__ = [
    "Chain", "FitReport", "GuideReport", "HeadModel", "NoHeadError", "RigOptions", "ScalpAttachment", "TryOnResult",
    "TryOnSettings", "build_head", "fit_hair", "own_hair_instances", "try_on",
]
