"""The hair-source data model: a stand-alone hair mesh as plain numpy data (no solver, no GL).

A :class:`HairMesh` is what the try-on pipeline (``avatars.tryon``) starts from: triangles
with their render vertices, the welding key that joins vertices split by UV seams (for the
connectivity analysis only), a diffuse colour, and what the file says about its units and
the head it was made for. Positions stay in the file's units and frame (+Y up, facing +Z,
the MakeHuman and glTF convention); :mod:`avatars.hair.units` decides the units against a
target head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import AvatarError

#: Largest hair mesh the try-on accepts (render vertices). Bigger meshes are refused with a
#: clear message (decimate them first): the guide analysis is a graph search per component.
MAX_VERTICES = 200_000


class HairError(AvatarError):
    """A hair source cannot be used. ``element`` names the line ("line 12") or the glTF
    element ("meshes[3]"); the message names the file."""


@dataclass(frozen=True, eq=False)
class AvatarOrigin:
    """The part of an avatar a hair mesh was taken from (its old weights and springs are
    cleared when the hair is rebuilt on that same avatar).

    Attributes:
        instance: index into ``avatar.mesh_instances``.
        primitive: primitive index in that mesh.
        vertices: (V,) int64 vertex indices of the primitive, in HairMesh vertex order (the
            parts of a HairMesh follow each other in the order of ``HairMesh.origin``).
        triangles: (T,) int64 indices of the primitive's triangles that were taken.
    """

    instance: int
    primitive: int
    vertices: np.ndarray
    triangles: np.ndarray


@dataclass(frozen=True, eq=False)
class HairMesh:
    """A hair mesh in its file's units.

    Attributes:
        name: style name (file stem, mesh name).
        path: the file it came from.
        positions: (V, 3) float64 render-vertex positions, file units, +Y up, facing +Z.
        triangles: (T, 3) int64 vertex indices (counter-clockwise seen from the front face).
        uv: (V, 2) float32 TEXCOORD_0 in glTF convention (v down), or None.
        weld: (V,) int64 key per vertex: vertices with the same key are one point of the
            surface (an OBJ ``v`` index, or the same position in a glTF mesh) split only by
            UV seams or normals. The guide analysis welds them; the rendered mesh does not.
        color: (4,) float64 linear RGBA diffuse colour.
        unit: metres per file unit when the format states it (glTF: 1.0; MakeHuman assets:
            0.1, decimetres), else None (guessed against the head by :func:`detect_units`).
        unit_source: how ``unit`` was decided, for reports.
        head_reference: (3,) width, height, depth (file units) of the head the style was
            made for, from a MakeHuman ``.mhclo`` (its x/y/z_scale references), or None.
        frame: "file" (a stand-alone asset, to be fitted) or "avatar-rest" (taken from an
            avatar at its rest pose, metres, already in place on that avatar).
        material: index into the source avatar's materials ("avatar-rest" sources), or -1.
        triangle_material: (T,) int64 the source avatar's material of each triangle
            ("avatar-rest" sources), or None.
        origin: the primitives of a source avatar the mesh was taken from (empty for hair files).
        cleared_springs: springs of that avatar whose joints moved only this hair (their
            weights and springs are cleared when the hair is rebuilt on that avatar).
        warnings: things the loader noticed (missing texture, non-manifold edges, ...).
        lift: a kept placement lifts what sinks under the head's skin (by at most 1 % of the
            head) out of it: set for the avatar's own hair cut out of a mesh it shared with
            the face, whose rims the skin hid (:func:`avatars.tryon.own_hair.own_hair_source`).
    """

    name: str
    path: str
    positions: np.ndarray
    triangles: np.ndarray
    weld: np.ndarray
    uv: np.ndarray | None = None
    color: np.ndarray = field(default_factory=lambda: np.array([0.1, 0.06, 0.035, 1.0]))
    unit: float | None = None
    unit_source: str = "not stated"
    head_reference: np.ndarray | None = None
    frame: str = "file"
    material: int = -1
    triangle_material: np.ndarray | None = None
    origin: tuple[AvatarOrigin, ...] = ()
    cleared_springs: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    lift: bool = False

    @property
    def vertex_count(self) -> int:
        return int(self.positions.shape[0])

    @property
    def triangle_count(self) -> int:
        return int(self.triangles.shape[0])

    def subset(self, keep: np.ndarray) -> tuple["HairMesh", np.ndarray]:
        """(the mesh with only the triangles ``keep`` (T,) bool, the kept vertices' indices
        (V',) into this mesh): vertices no kept triangle uses are removed."""
        from dataclasses import replace

        tris = self.triangles[np.asarray(keep, bool)]
        used = np.unique(tris)
        remap = np.full(self.vertex_count, -1, np.int64)
        remap[used] = np.arange(len(used))
        tm = None if self.triangle_material is None else self.triangle_material[np.asarray(keep, bool)]
        return replace(self, positions=self.positions[used], triangles=remap[tris], weld=self.weld[used],
                       uv=None if self.uv is None else self.uv[used], triangle_material=tm), used

    def extent(self) -> np.ndarray:
        """(3,) bounding-box size in file units."""
        if self.vertex_count == 0:
            return np.zeros(3)
        return self.positions.max(axis=0) - self.positions.min(axis=0)


def check_mesh(path: str, positions: np.ndarray, triangles: np.ndarray, element: str = "") -> list[str]:
    """Validate a parsed mesh; returns warnings, raises :class:`HairError` for unusable ones.

    Refused: no triangles, NaN/inf positions, more than :data:`MAX_VERTICES` vertices,
    triangles indexing missing vertices. Warned (the pipeline handles them): degenerate
    triangles (dropped by the caller), non-manifold edges (more than two triangles), and
    vertices no triangle uses.
    """
    if len(positions) > MAX_VERTICES:
        raise HairError(path, element, f"{len(positions)} vertices; the try-on accepts at most {MAX_VERTICES}: "
                        "decimate the mesh first (e.g. Blender's Decimate modifier)")
    if len(triangles) == 0:
        raise HairError(path, element, "the mesh has no faces (triangles); a hair mesh needs a surface")
    bad = ~np.isfinite(positions).all(axis=1)
    if bad.any():
        raise HairError(path, element, f"vertex {int(np.nonzero(bad)[0][0])} has NaN or inf coordinates")
    if triangles.min() < 0 or triangles.max() >= len(positions):
        raise HairError(path, element, f"a face uses vertex {int(triangles.max())} but there are {len(positions)}")
    warnings = []
    e = np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]), axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    nm = int((counts > 2).sum())
    if nm:
        warnings.append(f"{nm} non-manifold edges (shared by more than two faces); the guide graph uses them as edges")
    unused = len(positions) - len(np.unique(triangles))
    if unused:
        warnings.append(f"{unused} vertices are used by no face; ignored")
    return warnings
