"""Hair sources: a hair file (OBJ, glTF/GLB/VRM) or a mesh inside an avatar, and style lookup.

:func:`load_hair` opens a file; :func:`hair_from_avatar` takes the hair out of a loaded
avatar (selected by mesh name, node name or spring name), at the avatar's rest pose, in
metres; :func:`find_style` resolves a style name in the hair folders.

A mesh taken from an avatar remembers where it came from (:class:`AvatarOrigin`) and which
springs only moved it, so rebuilding it on the same avatar clears its old weights and
springs (the seed articles' Seed-san experiment).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..assets import assets_dir
from ..errors import did_you_mean
from ..loader import load_avatar
from ..model import Avatar
from .model import AvatarOrigin, HairError, HairMesh, check_mesh
from .obj import load_obj

#: Environment variable naming extra hair folders (``os.pathsep``-separated).
HAIR_DIR_ENV = "SWAYCAM_HAIR_DIR"
#: File suffixes a style may have, in lookup order.
STYLE_SUFFIXES = (".obj", ".glb", ".gltf", ".vrm")


def hair_folders() -> list[Path]:
    """Folders searched for style names: ``$SWAYCAM_HAIR_DIR`` entries, then the shared
    assets' ``hair`` folder."""
    out = [Path(p).expanduser() for p in os.environ.get(HAIR_DIR_ENV, "").split(os.pathsep) if p]
    out.append(assets_dir() / "hair")
    return out


def find_style(name: str, folders: list[Path] | None = None) -> Path:
    """The file of style ``name``: ``<folder>/<name>/<name>.<ext>`` or ``<folder>/<name>.<ext>``.

    Raises:
        HairError: no folder has it (the message lists the folders and the styles found).
    """
    folders = hair_folders() if folders is None else [Path(f) for f in folders]
    for folder in folders:
        for suffix in STYLE_SUFFIXES:
            for cand in (folder / name / f"{name}{suffix}", folder / f"{name}{suffix}"):
                if cand.is_file():
                    return cand
    known = sorted({p.stem for f in folders if f.is_dir() for p in f.rglob("*") if p.suffix in STYLE_SUFFIXES})
    raise HairError(name, "", f"no hair style named {name!r} in {', '.join(str(f) for f in folders)}"
                    + (f" (styles: {', '.join(known)})" if known else "") + did_you_mean(name, known))


def list_styles(folders: list[Path] | None = None) -> dict[str, Path]:
    """Every style in ``folders`` (default :func:`hair_folders`) as {name: file}, sorted by
    name: ``<folder>/<name>/<name>.<ext>`` and ``<folder>/<name>.<ext>`` (the forms
    :func:`find_style` resolves); a name found in several folders or forms is the one
    :func:`find_style` would pick. Missing folders are skipped."""
    folders = hair_folders() if folders is None else [Path(f) for f in folders]
    names: set[str] = set()
    for folder in folders:
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            if p.is_file() and p.suffix.lower() in STYLE_SUFFIXES:
                names.add(p.stem)
            elif p.is_dir() and any((p / f"{p.name}{s}").is_file() for s in STYLE_SUFFIXES):
                names.add(p.name)
    return {n: find_style(n, folders) for n in sorted(names)}


def load_hair(path: str | Path, *, mesh: str | None = None, node: str | None = None,
              spring: str | None = None) -> HairMesh:
    """Load a hair source file.

    Args:
        path: an ``.obj`` (MakeHuman ``.mhmat``/``.mhclo`` beside it are read), or a
            ``.glb``/``.gltf``/``.vrm`` whose hair mesh is chosen by ``mesh``/``node``/
            ``spring`` (a file with one drawn mesh needs none).

    Raises:
        HairError: see :func:`avatars.hair.obj.load_obj` and :func:`hair_from_avatar`.
        AvatarError: a glTF/VRM file that cannot be loaded.
    """
    p = Path(path)
    if p.suffix.lower() == ".obj":
        if mesh or node or spring:
            raise HairError(str(p), "", "an OBJ file is one hair mesh: mesh/node/spring selection is for avatar files")
        return load_obj(p)
    avatar = load_avatar(p)
    if not (mesh or node or spring):
        if len(avatar.mesh_instances) != 1:
            names = [avatar.meshes[mi.mesh].name for mi in avatar.mesh_instances]
            raise HairError(str(p), "", f"{len(names)} meshes ({', '.join(names)}): choose the hair with a mesh, node "
                            "or spring name")
        mesh = avatar.meshes[avatar.mesh_instances[0].mesh].name
    return hair_from_avatar(avatar, mesh=mesh, node=node, spring=spring)


def rest_positions(avatar: Avatar, instance: int, primitive: int) -> np.ndarray:
    """(V, 3) float64 world positions of a primitive at the avatar's rest pose (linear blend
    skinning as glTF 2.0 §3.7.3 defines it; a rigid mesh follows its node)."""
    inst = avatar.mesh_instances[instance]
    prim = avatar.meshes[inst.mesh].primitives[primitive]
    p = prim.positions.astype(np.float64)
    world = avatar.skeleton.rest_world
    if inst.skin < 0 or prim.joints is None or prim.weights is None:
        m = world[inst.node]
        return p @ m[:3, :3].T + m[:3, 3]
    skin = avatar.skins[inst.skin]
    jm = world[skin.joints] @ skin.inverse_bind
    w = prim.weights.astype(np.float64)
    zero = w.sum(axis=1) <= 1e-6
    w[zero] = (1.0, 0.0, 0.0, 0.0)
    blend = np.einsum("vk,vkab->vab", w, jm[prim.joints.astype(np.int64)][:, :, :3, :])
    return np.einsum("vab,vb->va", blend[:, :, :3], p) + blend[:, :, 3]


def vertex_components(n: int, tris: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Connected-component label (n,) of vertices joined by triangles or by equal ``key``."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    e = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [0, 2]]]) if len(tris) else np.zeros((0, 2), int)
    order = np.argsort(key, kind="stable")
    same = np.stack([order[:-1], order[1:]], axis=1)[key[order[:-1]] == key[order[1:]]] if n > 1 else e[:0]
    e = np.concatenate([e, same])
    g = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return connected_components(g, directed=False)[1]


def weld_keys(positions: np.ndarray, tolerance: float) -> np.ndarray:
    """(V,) int64 keys: vertices within ``tolerance`` (grid-snapped) share a key."""
    q = np.round(positions / max(tolerance, 1e-30)).astype(np.int64)
    _, inv = np.unique(q, axis=0, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


def hair_from_avatar(avatar: Avatar, *, mesh: str | None = None, node: str | None = None,
                     spring: str | None = None, triangles: dict | None = None, name: str | None = None) -> HairMesh:
    """The hair mesh of an avatar at its rest pose (metres, the avatar's frame: +Y up, +Z front).

    Exactly one selector: ``mesh`` (mesh name: every instance drawing it), ``node`` (the
    name of a node drawing a mesh), ``spring`` (the connected pieces of skinned meshes
    that the spring's joints move, e.g. the default avatar's ``"Ponytail"``), or
    ``triangles`` {(instance, primitive): (T,) bool} (e.g. the avatar's own hair cut out of
    the meshes it shares with the face, :func:`avatars.tryon.own_hair.own_hair_source`).

    The springs whose joints move nothing but the selected vertices are listed in
    ``cleared_springs`` (for a ``triangles`` selection: mostly — more than half of the
    vertices they weigh on — selected ones, so a few stray face corners weighted to a bang
    do not keep its old spring); the selected vertices and triangles in ``origin``.

    Raises:
        HairError: no or several selectors, nothing matches (the message lists the names),
            or the selection has no triangles.
    """
    path = avatar.path
    if sum(x is not None for x in (mesh, node, spring, triangles)) != 1:
        raise HairError(path, "", "select the hair with exactly one of mesh=, node=, spring=, triangles=")
    sk = avatar.skeleton
    picks: list[tuple[int, int, np.ndarray]] = []   # (instance, primitive, vertex mask)
    tri_masks = {} if triangles is None else {kp: np.asarray(m, bool) for kp, m in triangles.items()}
    if triangles is not None:
        for (k, p), m in sorted(tri_masks.items()):
            prim = avatar.meshes[avatar.mesh_instances[k].mesh].primitives[p]
            mask = np.zeros(prim.vertex_count, bool)
            mask[prim.indices.astype(np.int64).reshape(-1, 3)[m].reshape(-1)] = True
            picks.append((k, p, mask))
        if not picks:
            raise HairError(path, "", "the triangle selection is empty")
    elif mesh is not None or node is not None:
        for k, mi in enumerate(avatar.mesh_instances):
            if (mesh is not None and avatar.meshes[mi.mesh].name == mesh) or (node is not None and sk.names[mi.node] == node):
                for p, prim in enumerate(avatar.meshes[mi.mesh].primitives):
                    picks.append((k, p, np.ones(prim.vertex_count, bool)))
        if not picks:
            what = "mesh" if mesh is not None else "node"
            names = sorted({avatar.meshes[mi.mesh].name if mesh is not None else sk.names[mi.node]
                            for mi in avatar.mesh_instances})
            raise HairError(path, "", f"no {what} named {mesh or node!r} draws a mesh ({what}s: {', '.join(names)})")
    else:
        sp = next((s for s in avatar.springs if s.name == spring), None)
        if sp is None:
            raise HairError(path, "", f"no spring named {spring!r} (springs: {', '.join(s.name for s in avatar.springs)})")
        moved = set()
        for j in sp.joints:
            moved.update(sk.descendants(j.node))
        for k, mi in enumerate(avatar.mesh_instances):
            if mi.skin < 0:
                continue
            in_skin = np.array([int(n) in moved for n in avatar.skins[mi.skin].joints])
            for p, prim in enumerate(avatar.meshes[mi.mesh].primitives):
                if prim.joints is None or prim.weights is None or prim.mode != 4:
                    continue
                seed = ((prim.weights > 0) & in_skin[prim.joints.astype(np.int64)]).any(axis=1)
                if not seed.any():
                    continue
                tris = prim.indices.astype(np.int64).reshape(-1, 3)
                pos = rest_positions(avatar, k, p)
                lab = vertex_components(prim.vertex_count, tris, weld_keys(pos, 1e-7))
                picks.append((k, p, np.isin(lab, np.unique(lab[seed]))))
        if not picks:
            raise HairError(path, "", f"spring {spring!r} moves no mesh vertex")
    origin, pos_parts, tri_parts, uv_parts, mats = [], [], [], [], []
    base = 0
    for k, p, mask in picks:
        prim = avatar.meshes[avatar.mesh_instances[k].mesh].primitives[p]
        if prim.mode != 4:
            continue
        tris = prim.indices.astype(np.int64).reshape(-1, 3)
        t_sel = np.nonzero(tri_masks[(k, p)] if (k, p) in tri_masks else mask[tris].all(axis=1))[0]
        verts = np.unique(tris[t_sel])
        if len(verts) == 0:
            continue
        remap = np.full(prim.vertex_count, -1, np.int64)
        remap[verts] = np.arange(len(verts)) + base
        pos_parts.append(rest_positions(avatar, k, p)[verts])
        tri_parts.append(remap[tris[t_sel]])
        uv_parts.append(None if prim.uv0 is None else prim.uv0[verts])
        mats.append(np.full(len(t_sel), prim.material, np.int64))
        origin.append(AvatarOrigin(instance=k, primitive=p, vertices=verts, triangles=t_sel))
        base += len(verts)
    if not pos_parts:
        raise HairError(path, "", f"the selection {mesh or node or spring!r} has no triangles")
    pos = np.concatenate(pos_parts)
    tris = np.concatenate(tri_parts)
    warnings = check_mesh(path, pos, tris)
    uv = None if any(u is None for u in uv_parts) else np.concatenate(uv_parts).astype(np.float32)
    tri_mat = np.concatenate(mats)
    mat = int(tri_mat[0])
    color = avatar.materials[mat].base_color_factor.astype(np.float64) if 0 <= mat < len(avatar.materials) else None
    extent = float(np.ptp(pos, axis=0).max())
    selected = {(o.instance, o.primitive): set(o.vertices.tolist()) for o in origin}
    cleared = tuple(s.name for s in avatar.springs if _moves_only(avatar, s, selected, mostly=triangles is not None))
    kwargs = {} if color is None else {"color": color}
    return HairMesh(name=name or (mesh or node or spring), path=path, positions=pos, triangles=tris,
                    weld=weld_keys(pos, 1e-6 * max(extent, 1e-9)), uv=uv, unit=1.0,
                    unit_source="glTF (metres)", frame="avatar-rest", material=mat, triangle_material=tri_mat,
                    origin=tuple(origin),
                    cleared_springs=cleared, warnings=tuple(warnings), **kwargs)


def _moves_only(avatar: Avatar, spring, selected: dict, mostly: bool = False) -> bool:
    """True when the spring's joints (and their descendants) weigh on some vertices and
    every one of them (``mostly``: more than half of them) is in ``selected``
    {(instance, primitive): vertex set}."""
    sk = avatar.skeleton
    moved = set()
    for j in spring.joints:
        moved.update(sk.descendants(j.node))
    inside = outside = 0
    for k, mi in enumerate(avatar.mesh_instances):
        if mi.skin < 0:
            continue
        in_skin = np.array([int(n) in moved for n in avatar.skins[mi.skin].joints])
        for p, prim in enumerate(avatar.meshes[mi.mesh].primitives):
            if prim.joints is None or prim.weights is None:
                continue
            used = np.zeros(prim.vertex_count, bool)      # vertices its triangles draw (primitives may
            used[prim.indices.astype(np.int64)] = True    # carry a whole shared vertex buffer)
            hit = np.nonzero(((prim.weights > 0) & in_skin[prim.joints.astype(np.int64)]).any(axis=1) & used)[0]
            if hit.size == 0:
                continue
            sel = selected.get((k, p), set())
            n_in = len(set(hit.tolist()) & sel)
            inside += n_in
            outside += hit.size - n_in
            if outside and not mostly:
                return False
    return inside > 0 and (outside == 0 or (mostly and inside > outside))
