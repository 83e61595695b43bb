"""Mesh detail chosen per backend: fewer, larger triangles where nobody can see the difference
(issue 20).

A software rasteriser pays per triangle, not only per pixel: llvmpipe sets up, bins and
shades every triangle in 4×4-pixel blocks, so the same 276k pixels cost 3.3 ms of CPU as two
triangles and 17.7 ms as 30,000 triangles of 20 pixels (1280×720, a plain shader; the
generated default avatar draws 29k triangles of ~7 pixels on average at 1280×720). A GPU
does not care. ``"reduced"`` detail draws each primitive with a simplified index buffer over
the *same* vertices (the skinning, morph targets, contact and attributes are untouched; only
which vertices form triangles changes), simplified until the surface moves by at most
:data:`PIXEL_ERROR` of an output pixel:

- the tolerance is in metres, from the camera framing the avatar: ``PIXEL_ERROR`` × the size
  of one pixel at the framed point (:func:`pixel_size_m`);
- the error is measured in the rest pose *and* in :data:`POSES` seeded random poses (every
  node turned up to :data:`POSE_ANGLE`), given to the simplifier as vertex attributes, so a
  strand of hair or an elbow keeps the rings it needs to bend: a collapse that is invisible
  at rest but kinks a bent limb is refused;
- normals are attributes too (weight :data:`NORMAL_WEIGHT`: a normal off by 0.001 counts
  like the whole tolerance), so the toon shading's light/shade line stays in place; so are
  the texture coordinates of textured materials (half a texel of a 1024 px texture counts
  like it) and the vertex colours of materials that show them;
- vertices a morph target moves are locked (expressions move exactly the vertices the
  artist made), and so are open borders (:data:`meshopt.SIMPLIFY_LOCK_BORDER`: patches
  laid on a surface keep their outline); attribute seams are kept by the simplifier.

The simplifier is meshoptimizer's ``meshopt_simplifyWithAttributes`` (Kapoulkine,
quadric error metrics after Garland & Heckbert 1997, restricted to the existing vertices).
Its PyPI wrapper declares no argument types for that function (its size_t and float
arguments crash it), so :func:`_simplify` declares the C prototype of ``meshoptimizer.h``
itself and calls the library the wheel ships.

``detail``: "full" (every triangle, the renderer's own default: golden images and the
three-vrm comparison use it), "reduced", or "auto": reduced on software rasterisers
(:data:`SOFTWARE_DETAIL`), full on GPUs. ``swaycam run`` and ``swaycam bench render``
default to "auto".
"""

from __future__ import annotations

import ctypes
import glob
import logging
import math
import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from avatars import Avatar, Primitive

log = logging.getLogger(__name__)

DETAIL_MODES = ("auto", "full", "reduced")
#: What "auto" means on llvmpipe / softpipe.
SOFTWARE_DETAIL = "reduced"
#: Largest surface displacement of a reduced mesh, in output pixels at the framed point.
PIXEL_ERROR = 0.5
#: Seeded random poses in which the displacement is measured too (besides the rest pose).
POSES = 4
#: Largest random turn of each node in those poses, radians (~46°).
POSE_ANGLE = 0.8
#: Weight of the displacement in each test pose (metres of attribute per metre). The
#: simplifier integrates attribute error over triangle areas, so a weight of 1 let the
#: default avatar's sleeves move by 7.5 mm in the test poses; 16 keeps them within 1.7 mm
#: there and 1.0 mm (two tolerances) in unseen poses of 0.4 rad per node, for 12 % more
#: triangles (4: 3.5 / 1.6 mm; 64: 0.7 / 0.7 mm and 14 % more again).
POSE_WEIGHT = 16.0
#: Metres of error one unit of normal deviation counts for, per metre of tolerance: a
#: normal off by 1 / NORMAL_WEIGHT (0.001) costs the whole tolerance. (50 removed 4 % more
#: triangles of the default avatar and doubled the pixels whose colour changed.)
NORMAL_WEIGHT = 1000.0
#: The same for texture coordinates: 1 / 2048 of the texture (half a texel of 1024 px).
UV_WEIGHT = 2048.0
#: The same for vertex colours (linear, 0..1): off by half a level of 8 bits.
COLOR_WEIGHT = 512.0
_LOCK_BORDER, _ERROR_ABSOLUTE = 1, 4          # meshopt_SimplifyLockBorder, meshopt_SimplifyErrorAbsolute


def resolve_detail(mode: str, software: bool) -> bool:
    """Whether meshes are drawn reduced for ``mode`` ("auto", "full", "reduced") on this backend.

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in DETAIL_MODES:
        raise ValueError(f"detail {mode!r} is not one of {', '.join(DETAIL_MODES)}")
    if mode == "auto":
        mode = SOFTWARE_DETAIL if software else "full"
    return mode == "reduced"


def pixel_size_m(camera, height_px: int) -> float:
    """Metres one output pixel spans at the camera's target (its framed point), for a
    ``height_px`` pixel tall output: 2·d·tan(fov_y / 2) / height, d the eye-target distance."""
    d = float(np.linalg.norm(np.asarray(camera.target, np.float64) - np.asarray(camera.position, np.float64)))
    return 2.0 * d * math.tan(0.5 * float(camera.fov_y)) / max(int(height_px), 1)


@dataclass(frozen=True)
class ReducedIndices:
    """The triangles one primitive is drawn with.

    Attributes:
        indices: (I',) uint32 triangle list over the primitive's own vertices.
        triangles: triangles before (the file's).
        error_m: the simplifier's own estimate of the largest displacement, metres.
    """

    indices: np.ndarray
    triangles: int
    error_m: float


@lru_cache(maxsize=1)
def _simplify():
    """``meshopt_simplifyWithAttributes`` of the library the meshoptimizer wheel ships, with
    its C prototype (meshoptimizer.h)."""
    import meshoptimizer

    found = glob.glob(os.path.join(os.path.dirname(meshoptimizer.__file__), "_meshoptimizer*"))
    if not found:
        raise ImportError(f"meshoptimizer: no compiled library next to {meshoptimizer.__file__}")
    lib = ctypes.CDLL(found[0])
    f = lib.meshopt_simplifyWithAttributes
    p, n = ctypes.c_void_p, ctypes.c_size_t
    f.argtypes = [p, p, n, p, n, n, p, n, p, n, p, n, ctypes.c_float, ctypes.c_uint, ctypes.POINTER(ctypes.c_float)]
    f.restype = n
    return f


def pose_worlds(avatar: Avatar, *, poses: int | None = None, angle: float | None = None,
                seed: int = 0) -> list[np.ndarray]:
    """World matrices (N, 4, 4) of the rest pose and of ``poses`` (default :data:`POSES`)
    seeded random poses: every node's rest rotation followed by a turn of up to ``angle``
    (default :data:`POSE_ANGLE`) radians about a random axis."""
    from avatars.math3d import mat3_from_quat, quat_from_axis_angle

    poses = POSES if poses is None else poses
    angle = POSE_ANGLE if angle is None else angle
    sk = avatar.skeleton
    rng = np.random.default_rng(seed)
    out = [sk.rest_world]
    for _ in range(poses):
        axes = rng.normal(size=(sk.node_count, 3))
        axes /= np.maximum(np.linalg.norm(axes, axis=1, keepdims=True), 1e-12)
        turns = mat3_from_quat(quat_from_axis_angle(axes, rng.uniform(-angle, angle, sk.node_count)))
        local = np.array(sk.rest_local)
        local[:, :3, :3] = local[:, :3, :3] @ turns
        out.append(sk.world_matrices(local))
    return out


def _deformed(prim: Primitive, matrices: np.ndarray | None, rigid: np.ndarray) -> np.ndarray:
    """(V, 3) world positions of ``prim`` under skinning ``matrices`` (J, 4, 4) (linear blend
    skinning, glTF 2.0 §3.7.3), or under the rigid node matrix when it has no skin."""
    p = prim.positions.astype(np.float64)
    if matrices is None or prim.joints is None or prim.weights is None:
        return p @ rigid[:3, :3].T + rigid[:3, 3]
    j = np.clip(prim.joints.astype(np.int64), 0, len(matrices) - 1)
    m = np.einsum("vk,vkij->vij", prim.weights.astype(np.float64), matrices[j])
    return np.einsum("vij,vj->vi", m[:, :3, :3], p) + m[:, :3, 3]


def reduce_primitive(prim: Primitive, tolerance_m: float, posed: list[np.ndarray], *,
                     normals: np.ndarray, textured: bool, vertex_colors: bool = False) -> ReducedIndices:
    """The simplified triangle list of ``prim`` (module doc).

    Args:
        prim: a TRIANGLES primitive.
        tolerance_m: largest displacement allowed, metres (world).
        posed: (V, 3) world positions of its vertices in the rest pose first, then in each
            test pose (:func:`pose_worlds` through :func:`_deformed`).
        normals: (V, 3) its vertex normals.
        textured: its material samples textures (its texture coordinates weigh in).
        vertex_colors: its material shows COLOR_0 (glTF PBR and unlit; MToon ignores it).

    Returns:
        :class:`ReducedIndices`; the file's own triangles when nothing can be removed.
    """
    idx = np.ascontiguousarray(prim.indices, np.uint32)
    tris = len(idx) // 3
    if tris < 8 or tolerance_m <= 0:
        return ReducedIndices(idx, tris, 0.0)
    pos = np.ascontiguousarray(posed[0], np.float32)
    attrs = [*(p - posed[0] for p in posed[1:]), np.asarray(normals, np.float64)]
    weights = [POSE_WEIGHT] * (3 * (len(posed) - 1)) + [NORMAL_WEIGHT * tolerance_m] * 3
    if textured:
        for uv in (prim.uv0, prim.uv1):
            if uv is not None:
                attrs.append(uv.astype(np.float64))
                weights += [UV_WEIGHT * tolerance_m] * 2
    if vertex_colors and prim.colors is not None:
        attrs.append(prim.colors.astype(np.float64))
        weights += [COLOR_WEIGHT * tolerance_m] * 4
    a = np.ascontiguousarray(np.concatenate(attrs, axis=1), np.float32)
    w = np.asarray(weights, np.float32)
    lock = np.zeros(len(pos), np.uint8)
    if prim.morph_positions.shape[0]:
        lock[np.any(prim.morph_positions != 0, axis=(0, 2))] = 1
    dest = np.empty_like(idx)
    err = ctypes.c_float(0.0)
    n = _simplify()(dest.ctypes.data, idx.ctypes.data, len(idx), pos.ctypes.data, len(pos), pos.strides[0],
                    a.ctypes.data, a.strides[0], w.ctypes.data, len(w), lock.ctypes.data, 3,
                    float(tolerance_m), _LOCK_BORDER | _ERROR_ABSOLUTE, ctypes.byref(err))
    if n == 0 or n >= len(idx):
        return ReducedIndices(idx, tris, 0.0)
    return ReducedIndices(dest[:n].copy(), tris, float(err.value))


def posed_positions(avatar: Avatar, instance: int, prim: Primitive, worlds: list[np.ndarray]) -> list[np.ndarray]:
    """(V, 3) world positions of ``prim`` of mesh instance ``instance`` in each of ``worlds``."""
    mi = avatar.mesh_instances[instance]
    out = []
    for world in worlds:
        if mi.skin >= 0:
            skin = avatar.skins[mi.skin]
            mats = world[np.asarray(skin.joints, np.int64)] @ np.asarray(skin.inverse_bind, np.float64)
            out.append(_deformed(prim, mats, world[mi.node]))
        else:
            out.append(_deformed(prim, None, world[mi.node]))
    return out


def reduce_avatar(avatar: Avatar, tolerance_m: float) -> dict[tuple[int, int], np.ndarray]:
    """The simplified triangle list of every TRIANGLES primitive of ``avatar`` (module doc),
    keyed by (mesh instance, primitive index in its mesh). Pure CPU (no GL): any thread may
    compute it before the renderer uploads the avatar (the try-on worker does)."""
    from .materials import material_textures

    worlds = pose_worlds(avatar)
    out: dict[tuple[int, int], np.ndarray] = {}
    for k, mi in enumerate(avatar.mesh_instances):
        for j, prim in enumerate(avatar.meshes[mi.mesh].primitives):
            if prim.mode != 4 or prim.vertex_count == 0 or prim.indices.size == 0:
                continue
            mat = avatar.materials[prim.material] if 0 <= prim.material < len(avatar.materials) else None
            textured = mat is not None and bool(material_textures(mat))
            colors = mat is None or mat.mtoon is None
            normals = prim.normals if prim.normals is not None else _smooth_normals(prim)
            out[(k, j)] = reduce_primitive(prim, tolerance_m, posed_positions(avatar, k, prim, worlds),
                                           normals=normals, textured=textured, vertex_colors=colors).indices
    return out


def _smooth_normals(prim: Primitive) -> np.ndarray:
    from .upload import smooth_normals

    return smooth_normals(prim.positions, prim.indices)


__all__ = ["COLOR_WEIGHT", "DETAIL_MODES", "NORMAL_WEIGHT", "PIXEL_ERROR", "POSES", "POSE_ANGLE", "SOFTWARE_DETAIL", "UV_WEIGHT",
           "ReducedIndices", "pixel_size_m", "pose_worlds", "posed_positions", "reduce_avatar", "reduce_primitive",
           "resolve_detail"]
