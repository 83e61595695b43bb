"""The avatar's own hair: whole meshes, or triangles cut out of a mesh it shares with the face
or body.

What is hair, per drawn triangle of the meshes carried by the head (skinned with most weight
on the humanoid head, its descendants and the spring joints under it), decided by the first
rule that finds any (:func:`find_own_hair`):

1. **Mesh instances** (:func:`avatars.tryon.head.own_hair_instances`): a skinned mesh whose
   every weighted joint is the head or a spring joint under it, with some weight on a
   spring joint (the default avatar's ``Hair``). Hidden whole, as before.
2. **Spring weights**: in the other meshes, a *seed* corner is mostly (> 1/2) weighted to
   spring joints under the head, a seed triangle has one. A connected piece (corners welded
   by position) is hair as a whole when most of its corners are seeds (Godette's buns, in her
   face mesh), or when at least :data:`SEED_SHARE` of them are and it is no part of the face:
   none of its corners is moved by a morph target and fewer than :data:`FACE_SHARE` lie in
   the lower front of the head (:func:`lower_face`: mouth, chin — where no hair grows; her
   hair shell, in her body mesh, carries her bangs' springs on 17 of its 106 corners; her
   face skin has 2 stray corners weighted to a bang: a piece with fewer than
   :data:`SEED_SHARE` seeds is not hair by this rule). A piece that mixes seeds with face
   skin keeps only the triangles reached from its seed triangles over triangles that are
   unmorphed, outside the lower face, and whose colour (base colour × texture at the
   triangle's centre) stays within :data:`COLOR_DISTANCE` of the seeds' mean colour.
3. **Material**: triangles carried by the head whose material name says hair ("hair",
   "髪") — an avatar whose hair has no springs.
4. **Geometry**: a connected piece carried by the head, unmorphed, mostly above the hairline
   profile (:data:`avatars.tryon.head.HAIRLINE`) and lying over another head surface (a layer
   at least :data:`LAYER_GAP` head heights outside the rest of the head along the rays from
   its centre, for :data:`LAYER_SHARE` of its corners): a hair shell over the skull.

Frames and units: the avatar's rest pose, metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar
from avatars.hair import rest_positions
from avatars.hair.source import vertex_components, weld_keys

from .head import hairline_elevation, own_hair_instances, spring_joint_nodes

#: Share of a piece's corners that must be seeds for it to be hair as a whole (rule 2).
SEED_SHARE = 0.05
#: A piece with at least this share of its corners in the lower face is part of the face.
FACE_SHARE = 0.05
#: Largest RGB distance (linear, 0..1) from the seeds' mean colour for a grown triangle.
COLOR_DISTANCE = 0.25
#: A layer lies this many head heights outside the surface under it, at least, ...
LAYER_GAP = 0.01
#: ... over at least this share of its corners.
LAYER_SHARE = 0.8
#: Material names that say hair (lower case substrings).
HAIR_WORDS = ("hair", "髪", "kami")
#: Weld tolerance of corners (metres) when splitting a primitive into connected pieces.
WELD = 1e-5


@dataclass(frozen=True)
class OwnHairPart:
    """Hair triangles of one primitive: ``instance``, ``primitive``, ``triangles`` (T,) bool
    over the primitive's triangles, the ``method`` that found them."""

    instance: int
    primitive: int
    triangles: np.ndarray
    method: str


@dataclass(frozen=True, eq=False)
class OwnHair:
    """The avatar's own hair (module doc).

    Attributes:
        instances: mesh instances that are hair as a whole (hidden whole).
        parts: hair triangles inside meshes shared with the face or body.
        notes: what was found, one line each.
    """

    instances: tuple[int, ...] = ()
    parts: tuple[OwnHairPart, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not self.instances and not self.parts

    def triangle_masks(self) -> dict[tuple[int, int], np.ndarray]:
        """{(instance, primitive): (T,) bool} of the parts."""
        return {(p.instance, p.primitive): p.triangles for p in self.parts}

    def methods(self) -> list[str]:
        out = ["mesh instances"] if self.instances else []
        for p in self.parts:
            if p.method not in out:
                out.append(p.method)
        return out

    def summary(self, avatar: Avatar, hidden: bool) -> dict:
        """The ``own_hair`` object of ``swaycam hair fit --json``."""
        whole = sum(len(pr.indices) // 3 for k in self.instances
                    for pr in avatar.meshes[avatar.mesh_instances[k].mesh].primitives if pr.mode == 4)
        cut = int(sum(int(p.triangles.sum()) for p in self.parts))
        return {"found": not self.empty, "hidden": bool(hidden and not self.empty), "methods": self.methods(),
                "instances": [avatar.meshes[avatar.mesh_instances[k].mesh].name for k in self.instances],
                "triangles": whole + cut, "cut_triangles": cut,
                "cut_from": sorted({avatar.meshes[avatar.mesh_instances[p.instance].mesh].name for p in self.parts}),
                "notes": list(self.notes)}


def lower_face(points: np.ndarray, center: np.ndarray) -> np.ndarray:
    """(P,) bool: points in the lower front of a head centred at ``center`` (within 40° of the
    front, more than 15° below the centre's horizontal plane: nose, mouth, chin)."""
    d = points - center
    az = np.degrees(np.arctan2(d[:, 0], d[:, 2]))
    el = np.degrees(np.arctan2(d[:, 1], np.hypot(d[:, 0], d[:, 2])))
    return (np.abs(az) < 40.0) & (el < -15.0)


def _head_center(avatar: Avatar, carried: set[int]) -> np.ndarray:
    """The middle of the box of the vertices mostly carried by the head (rest pose)."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for k, mi in enumerate(avatar.mesh_instances):
        if mi.skin < 0:
            continue
        is_c = np.array([int(j) in carried for j in avatar.skins[mi.skin].joints])
        for p, prim in enumerate(avatar.meshes[mi.mesh].primitives):
            if prim.mode != 4 or prim.joints is None or prim.weights is None:
                continue
            v = (prim.weights * is_c[prim.joints.astype(np.int64)]).sum(axis=1) >= 0.5
            if v.any():
                pos = rest_positions(avatar, k, p)[v]
                lo, hi = np.minimum(lo, pos.min(axis=0)), np.maximum(hi, pos.max(axis=0))
    return 0.5 * (lo + hi) if np.isfinite(lo).all() else np.zeros(3)


def _moved(avatar: Avatar, head: int) -> set[int]:
    sk = avatar.skeleton
    out = set()
    for n in spring_joint_nodes(avatar):
        if sk.is_ancestor(head, n):
            out.update(sk.descendants(n))
    return out


def triangle_colors(avatar: Avatar, prim, tris: np.ndarray) -> np.ndarray:
    """(T, 3) linear RGB of triangles: the material's base colour factor times its base
    colour texture at each triangle's centre UV (nearest texel; no texture: the factor)."""
    mat = avatar.materials[prim.material] if 0 <= prim.material < len(avatar.materials) else None
    base = np.ones(3) if mat is None else np.asarray(mat.base_color_factor[:3], float)
    out = np.tile(base, (len(tris), 1))
    ref = None if mat is None else mat.base_color_texture
    if ref is None or prim.uv0 is None or ref.texture >= len(avatar.textures):
        return out
    img = avatar.images[avatar.textures[ref.texture].image].rgba
    uv = prim.uv0[tris].mean(axis=1) % 1.0
    h, w = img.shape[:2]
    px = img[np.clip((uv[:, 1] * h).astype(int), 0, h - 1), np.clip((uv[:, 0] * w).astype(int), 0, w - 1), :3]
    lin = (np.asarray(px, float) / 255.0) ** 2.2
    return out * lin


def _layer_over_head(pos: np.ndarray, piece_v: np.ndarray, others: np.ndarray, center: np.ndarray,
                     height: float) -> bool:
    """True when the piece's corners ``pos[piece_v]`` lie a layer outside the head surface
    points ``others`` (M, 3) along the rays from ``center`` (module doc, rule 4)."""
    from .geometry import RadialEnvelope

    if len(others) < 16:
        return False
    inner = RadialEnvelope(center, others, dilate=0)
    d = pos[piece_v] - center
    gap = np.linalg.norm(d, axis=1) - inner.radius(d)
    return float(np.mean(gap > LAYER_GAP * height)) >= LAYER_SHARE


def find_own_hair(avatar: Avatar) -> OwnHair:
    """The avatar's own hair (module doc); an empty :class:`OwnHair` when it has none found."""
    head = avatar.head_node()
    if head < 0:
        return OwnHair()
    whole = tuple(own_hair_instances(avatar))
    sk = avatar.skeleton
    moved = _moved(avatar, head)
    carried = {n for n in sk.descendants(head)} | moved
    parts: list[OwnHairPart] = []
    notes: list[str] = []
    material_parts: list[OwnHairPart] = []
    geometry_cand = []
    head_points = []
    center = _head_center(avatar, carried)
    for k, mi in enumerate(avatar.mesh_instances):
        if k in whole or mi.skin < 0:
            continue
        joints = avatar.skins[mi.skin].joints
        is_moved = np.array([int(j) in moved for j in joints])
        is_carried = np.array([int(j) in carried for j in joints])
        for p, prim in enumerate(avatar.meshes[mi.mesh].primitives):
            if prim.mode != 4 or prim.joints is None or prim.weights is None:
                continue
            jj = prim.joints.astype(np.int64)
            w = prim.weights.astype(np.float64)
            hair_share = (w * is_moved[jj]).sum(axis=1)
            carry = (w * is_carried[jj]).sum(axis=1) >= 0.5
            tris = prim.indices.astype(np.int64).reshape(-1, 3)
            on_head = carry[tris].all(axis=1)
            if not on_head.any():
                continue
            pos = rest_positions(avatar, k, p)
            morphed = (np.abs(prim.morph_positions).sum(axis=(0, 2)) > 0 if prim.morph_positions.shape[0]
                       else np.zeros(prim.vertex_count, bool))
            lab = vertex_components(prim.vertex_count, tris, weld_keys(pos, WELD))
            tlab = lab[tris[:, 0]]
            seed_v = hair_share > 0.5
            seed = seed_v[tris].any(axis=1)
            face = lower_face(pos, center)
            mask = np.zeros(len(tris), bool)
            for c in np.unique(tlab[seed]):
                in_c = tlab == c
                v = np.unique(tris[in_c])
                share = seed_v[v].mean()
                if share < SEED_SHARE:       # a few stray corners weighted to a spring (Godette's face skin)
                    continue
                if share > 0.5 or (not morphed[v].any() and face[v].mean() < FACE_SHARE):
                    mask |= in_c & on_head
                else:
                    free = ~(morphed | face)[tris].any(axis=1)
                    mask |= _grow(avatar, prim, tris, in_c & on_head & free, seed & in_c)
            if mask.any():
                parts.append(OwnHairPart(k, p, mask, "spring weights"))
                continue
            mat = avatar.materials[prim.material].name.lower() if 0 <= prim.material < len(avatar.materials) else ""
            if any(word in mat for word in HAIR_WORDS):
                material_parts.append(OwnHairPart(k, p, on_head.copy(), "material"))
                continue
            head_points.append(pos[np.unique(tris[on_head])])
            geometry_cand.append((k, p, pos, tris, tlab, on_head, morphed))
    if parts or whole:
        return OwnHair(whole, tuple(parts), tuple(notes))
    if material_parts:
        return OwnHair((), tuple(material_parts), ("hair found by material name",))
    return OwnHair((), tuple(_by_geometry(avatar, head, geometry_cand, head_points)), ())


def _grow(avatar: Avatar, prim, tris: np.ndarray, allowed: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Triangles reached from ``seed`` over ``allowed`` triangles sharing an edge, whose colour
    is within :data:`COLOR_DISTANCE` of the seeds' mean (module doc, rule 2)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    col = triangle_colors(avatar, prim, tris)
    mean = col[seed].mean(axis=0)
    ok = (allowed & (np.linalg.norm(col - mean, axis=1) <= COLOR_DISTANCE)) | seed
    idx = np.nonzero(ok)[0]
    e = np.sort(np.concatenate([tris[idx][:, [0, 1]], tris[idx][:, [1, 2]], tris[idx][:, [2, 0]]]), axis=1)
    owner = np.tile(np.arange(len(idx)), 3)
    order = np.lexsort((e[:, 1], e[:, 0]))
    e, owner = e[order], owner[order]
    same = np.nonzero((e[1:] == e[:-1]).all(axis=1))[0]
    g = coo_matrix((np.ones(len(same)), (owner[same], owner[same + 1])), shape=(len(idx), len(idx)))
    _, lab = connected_components(g, directed=False)
    out = np.zeros(len(tris), bool)
    out[idx[np.isin(lab, np.unique(lab[seed[idx]]))]] = True
    return out


def _by_geometry(avatar: Avatar, head: int, cands, head_points) -> list[OwnHairPart]:
    """Rule 4 of the module doc over the head-carried pieces ``cands``."""
    if not cands:
        return []
    pts = np.concatenate(head_points)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    center, height = 0.5 * (lo + hi), float(hi[1] - lo[1])
    out = []
    for i, (k, p, pos, tris, tlab, on_head, morphed) in enumerate(cands):
        mask = np.zeros(len(tris), bool)
        for c in np.unique(tlab[on_head]):
            in_c = (tlab == c) & on_head
            v = np.unique(tris[in_c])
            if morphed[v].any():
                continue
            d = pos[v] - center
            az = np.degrees(np.arctan2(d[:, 0], d[:, 2]))
            el = np.degrees(np.arctan2(d[:, 1], np.hypot(d[:, 0], d[:, 2])))
            if np.mean(el >= hairline_elevation(az)) < 0.5:
                continue
            rest = np.concatenate([pos[np.unique(tris[on_head & (tlab != c)])]]
                                  + [hp for j, hp in enumerate(head_points) if j != i])
            if _layer_over_head(pos, v, rest, center, height):
                mask |= in_c
        if mask.any():
            out.append(OwnHairPart(k, p, mask, "geometry (a layer over the scalp)"))
    return out


def own_hair_source(avatar: Avatar, name: str = "own_hair"):
    """The avatar's own hair (:func:`find_own_hair`: whole meshes and triangles cut out of
    shared ones) as a :class:`avatars.hair.HairMesh` at its rest pose, to re-rig it with the
    try-on pipeline on this same avatar (its old springs that moved mostly it are cleared,
    its triangles replaced; :func:`avatars.hair.hair_from_avatar`).

    Raises:
        avatars.hair.HairError: the avatar has no own hair this module can find.
    """
    from avatars.hair import HairError, hair_from_avatar

    own = find_own_hair(avatar)
    if own.empty:
        raise HairError(avatar.path, "", "no own hair found: no mesh or triangles weighted to spring joints under the "
                        "head, no hair material, no layer over the scalp; select the hair with --mesh, --node or "
                        "--spring")
    masks = dict(own.triangle_masks())
    for k in own.instances:
        for p, prim in enumerate(avatar.meshes[avatar.mesh_instances[k].mesh].primitives):
            if prim.mode == 4:
                masks[(k, p)] = np.ones(len(prim.indices) // 3, bool)
    from dataclasses import replace

    return replace(hair_from_avatar(avatar, triangles=masks, name=name), lift=bool(own.parts))
