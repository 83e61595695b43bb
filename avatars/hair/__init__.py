"""Hair sources for the try-on (docs/design.md §9): stand-alone hair meshes as plain numpy data.

Public names: :class:`HairMesh`, :class:`AvatarOrigin`, :class:`HairError`,
:func:`load_hair` (OBJ + MakeHuman ``.mhmat``/``.mhclo``, glTF/GLB/VRM), :func:`hair_from_avatar`
(a mesh inside an avatar, by mesh, node or spring name), :func:`find_style` (style names in
the hair folders), :func:`list_styles` (every style there), :func:`detect_units` /
:class:`UnitChoice`, :data:`MAX_VERTICES`.
"""

from .model import MAX_VERTICES, AvatarOrigin, HairError, HairMesh
from .obj import load_obj
from .source import find_style, hair_folders, hair_from_avatar, list_styles, load_hair, rest_positions
from .units import UnitChoice, detect_units

__all__ = [
    "AvatarOrigin", "HairError", "HairMesh", "MAX_VERTICES", "UnitChoice", "detect_units", "find_style", "hair_folders",
    "hair_from_avatar", "list_styles", "load_hair", "load_obj", "rest_positions",
]
