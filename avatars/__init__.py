"""swaycam avatars: VRM 0.x / 1.0 and glTF loading into plain numpy data (no OpenGL).

Public names: :func:`load_avatar`, the data model classes of :mod:`avatars.model` (node
constraints: :class:`RollConstraint`, :class:`AimConstraint`, :class:`RotationConstraint`),
:class:`Skeleton`, :class:`AvatarError`, :class:`AvatarWarning`.
"""

from .errors import AvatarError, AvatarWarning
from .loader import load_avatar
from .model import (
    AimConstraint, Avatar, Collider, ColliderGroup, Expression, Image, Material, MaterialColorBind, Mesh,
    MeshInstance, Meta, MorphTargetBind, MToon, NodeConstraint, Primitive, RollConstraint, RotationConstraint,
    Sampler, Skin, Spring, SpringJoint, SpringLink, Texture, TextureRef, TextureTransform, TextureTransformBind,
)
from .skeleton import Skeleton

__all__ = [
    "AimConstraint", "Avatar", "AvatarError", "AvatarWarning", "Collider", "ColliderGroup", "Expression", "Image",
    "Material", "MaterialColorBind", "Mesh", "MeshInstance", "Meta", "MorphTargetBind", "MToon", "NodeConstraint",
    "Primitive", "RollConstraint", "RotationConstraint", "Sampler", "Skeleton", "Skin", "Spring", "SpringJoint", "SpringLink",
    "Texture", "TextureRef", "TextureTransform", "TextureTransformBind", "load_avatar",
]
