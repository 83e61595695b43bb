"""Hairstyle try-on (docs/design.md §9): fit a hair mesh onto an avatar's head and rig it.

``try_on(avatar, hair, TryOnSettings())`` -> :class:`TryOnResult` whose ``avatar`` is an
ordinary :class:`avatars.Avatar` with the hair mesh, joints, skin and springs added; the
hair sources it starts from are :mod:`avatars.hair`. Mesh fitting and rigging at build
time, numpy and scipy only: nothing here simulates (the springs it writes are the solver's
input like any VRM's).
Modules, one step each: :mod:`.head` (the target head, scalp triangles, envelope),
:mod:`.own_hair` (the avatar's own hair: meshes, or triangles cut out of shared meshes),
:mod:`.fit` (units, alignment, push-out) with :mod:`.placement` (which method places the
hair) and :mod:`.register` (its inner surface registered to the head), :mod:`.graph` (welded
surface graph), :mod:`.guides` (candidate guide curves), :mod:`.flow` (root-to-tip flow over
the surface), :mod:`.scalp` (scalp attachment), :mod:`.join` (fragment joining),
:mod:`.choice` (which strands carry chains), :mod:`.autorig` (the auto-rig: chains, joints,
springs, colliders), :mod:`.weights` (skin weights), :mod:`.sheets` (sheets, neighbour
links and bend limits for the solver), :mod:`.skin_contact` (per-vertex contact of the hair mesh),
:mod:`.assemble` (the output avatar), :mod:`.pipeline` (all of it), :mod:`.cache` (results
on disk), :mod:`.geometry` (closest points, winding numbers, the radial envelope),
:mod:`.errors` (:class:`TryOnError` and its kinds). Its measures on the standard head turn
are :mod:`solver.eval.tryon_quality`; its benchmark :mod:`avatars.eval.fit_bench`; the
three-vrm check of its export :mod:`avatars.eval.threevrm_load`. Background and numbers:
docs/history/tryon-notes.md.

The public names are imported lazily (PEP 562): ``import avatars.tryon.errors`` (what the
runtime's :class:`runtime.tryon.StyleError` needs) loads neither scipy nor trimesh.
"""

from importlib import import_module
from typing import TYPE_CHECKING

# Public name -> submodule (imported on first use, module doc).
_EXPORTS = {
    "Chain": "autorig", "RigOptions": "autorig",
    "FitError": "errors", "NoHeadError": "errors", "TryOnError": "errors",
    "FitReport": "fit", "fit_hair": "fit",
    "HeadModel": "head", "build_head": "head", "own_hair_instances": "head",
    "OwnHair": "own_hair", "find_own_hair": "own_hair", "own_hair_source": "own_hair",
    "GuideReport": "pipeline", "TryOnResult": "pipeline", "TryOnSettings": "pipeline", "try_on": "pipeline",
    "ScalpAttachment": "scalp",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'avatars.tryon' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .autorig import Chain, RigOptions  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .errors import FitError, NoHeadError, TryOnError  # noqa: F401
    from .fit import FitReport, fit_hair  # noqa: F401
    from .head import HeadModel, build_head, own_hair_instances  # noqa: F401
    from .own_hair import OwnHair, find_own_hair, own_hair_source  # noqa: F401
    from .pipeline import GuideReport, TryOnResult, TryOnSettings, try_on  # noqa: F401
    from .scalp import ScalpAttachment  # noqa: F401
