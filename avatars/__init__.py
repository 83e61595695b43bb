"""swaycam avatars: VRM 0.x / 1.0 and glTF loading into plain numpy data (no OpenGL).

Public names: :func:`load_avatar`, the data model classes of :mod:`avatars.model` (node
constraints: :class:`RollConstraint`, :class:`AimConstraint`, :class:`RotationConstraint`),
:class:`Skeleton`, :class:`AvatarError`, :class:`AvatarWarning`. They are imported on first use
(PEP 562, as :mod:`render`): ``from avatars.errors import did_you_mean`` (the command line's
messages) or ``import avatars.tryon.errors`` loads that module only, not the loader and numpy.
"""

from importlib import import_module
from typing import TYPE_CHECKING

# Public name -> submodule, imported on first use.
_EXPORTS = {
    "AvatarError": "errors", "AvatarWarning": "errors", "load_avatar": "loader", "Skeleton": "skeleton",
    "AimConstraint": "model", "Avatar": "model", "Collider": "model", "ColliderGroup": "model",
    "Expression": "model", "Image": "model", "Material": "model", "MaterialColorBind": "model", "Mesh": "model",
    "MeshInstance": "model", "Meta": "model", "MorphTargetBind": "model", "MToon": "model",
    "NodeConstraint": "model", "Primitive": "model", "RollConstraint": "model", "RotationConstraint": "model",
    "Sampler": "model", "Skin": "model", "Spring": "model", "SpringJoint": "model", "JointLimit": "model", "SpringLink": "model", "Texture": "model",
    "TextureRef": "model", "TextureTransform": "model", "TextureTransformBind": "model",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'avatars' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .errors import AvatarError, AvatarWarning  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .loader import load_avatar  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .model import (  # noqa: F401 - re-exported lazily (_EXPORTS)
        AimConstraint, Avatar, Collider, ColliderGroup, Expression, Image, Material, MaterialColorBind, Mesh,
        MeshInstance, Meta, MorphTargetBind, MToon, NodeConstraint, Primitive, RollConstraint, RotationConstraint,
        JointLimit, Sampler, Skin, Spring, SpringJoint, SpringLink, Texture, TextureRef, TextureTransform, TextureTransformBind,
    )
    from .skeleton import Skeleton  # noqa: F401 - re-exported lazily (_EXPORTS)
