"""glTF meshes, skins and mesh nodes -> :class:`Mesh`, :class:`Skin`, :class:`MeshInstance`."""

from __future__ import annotations

import numpy as np

from .accessors import read_accessor, read_matrices
from .gltf_io import GltfDocument
from .model import Mesh, MeshInstance, Primitive, Skin


def normalize_weights(weights: np.ndarray) -> np.ndarray:
    """(V, 4) float32 skin weights divided by their sums (rows summing to 0 kept), as loaded."""
    weights = _f32(weights)
    sums = weights.sum(axis=1, keepdims=True)
    return np.where(sums > 0, weights / np.where(sums > 0, sums, 1), weights)


def stable_weights(weights: np.ndarray) -> np.ndarray:
    """(V, 4) float32 weights that :func:`normalize_weights` leaves bit for bit as they are, so
    that writing and re-loading them gives the same values: each row rounded to multiples of
    2^-23 summing to exactly 1 (the largest weight takes the remainder; every partial sum is
    then exact in float32, and dividing by 1 changes nothing). Changes a weight by at most
    about 2^-22. Rows summing to 0 stay 0."""
    w = np.asarray(weights, np.float64)
    sums = w.sum(axis=1, keepdims=True)
    unit = float(1 << 23)
    q = np.rint(np.where(sums > 0, w / np.where(sums > 0, sums, 1.0), 0.0) * unit)
    live = sums[:, 0] > 0
    big = np.argmax(q, axis=1)
    rows = np.nonzero(live)[0]
    q[rows, big[rows]] += unit - q[rows].sum(axis=1)
    return (q / unit).astype(np.float32)


def _f32(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


def _attr(doc, attrs: dict, name: str, elem: str, ncols: int | None, count: int | None):
    if name not in attrs:
        return None
    a = read_accessor(doc, attrs[name], f"{elem}.attributes.{name}")
    if ncols is not None and (a.ndim != 2 or a.shape[1] != ncols):
        raise doc.issues.error(f"{elem}.attributes.{name}", f"expected {ncols} components, got shape {a.shape}")
    if count is not None and a.shape[0] != count:
        raise doc.issues.error(f"{elem}.attributes.{name}", f"{a.shape[0]} elements, POSITION has {count}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise doc.issues.error(f"{elem}.attributes.{name}", "contains NaN or inf")
    return a


def _primitive(doc: GltfDocument, prim: dict, elem: str, n_materials: int) -> Primitive:
    attrs = prim.get("attributes", {}) or {}
    if "POSITION" not in attrs:
        raise doc.issues.error(f"{elem}.attributes", "no POSITION attribute")
    pos = _attr(doc, attrs, "POSITION", elem, 3, None)
    v = pos.shape[0]
    normals = _attr(doc, attrs, "NORMAL", elem, 3, v)
    uv0 = _attr(doc, attrs, "TEXCOORD_0", elem, 2, v)
    uv1 = _attr(doc, attrs, "TEXCOORD_1", elem, 2, v)
    colors = _attr(doc, attrs, "COLOR_0", elem, None, v)
    if colors is not None:
        colors = _f32(colors)
        if colors.shape[1] == 3:
            colors = np.concatenate([colors, np.ones((v, 1), np.float32)], axis=1)
    joints = _attr(doc, attrs, "JOINTS_0", elem, 4, v)
    weights = _attr(doc, attrs, "WEIGHTS_0", elem, 4, v)
    if weights is not None:
        weights = normalize_weights(weights)
    if "indices" in prim:
        idx = read_accessor(doc, prim["indices"], f"{elem}.indices").astype(np.uint32)
        if idx.size and int(idx.max()) >= v:
            raise doc.issues.error(f"{elem}.indices", f"index {int(idx.max())} >= vertex count {v}")
    else:
        idx = np.arange(v, dtype=np.uint32)
    mat = prim.get("material", -1)
    if not isinstance(mat, int) or mat >= n_materials or mat < -1:
        doc.issues.warn(f"{elem}.material", f"material {mat} does not exist; default material used")
        mat = -1
    targets = prim.get("targets", []) or []
    mpos = np.zeros((len(targets), v, 3), np.float32)
    mnrm = np.zeros((len(targets), v, 3), np.float32) if targets and normals is not None else None
    for k, tgt in enumerate(targets):
        telem = f"{elem}.targets[{k}]"
        d = _attr(doc, tgt, "POSITION", telem, 3, v)
        if d is not None:
            mpos[k] = d
        dn = _attr(doc, tgt, "NORMAL", telem, 3, v)
        if dn is not None and mnrm is not None:
            mnrm[k] = dn
    return Primitive(
        positions=_f32(pos),
        indices=idx,
        normals=None if normals is None else _f32(normals),
        uv0=None if uv0 is None else _f32(uv0),
        uv1=None if uv1 is None else _f32(uv1),
        colors=colors,
        joints=None if joints is None else joints.astype(np.uint16),
        weights=weights,
        mode=int(prim.get("mode", 4)),
        material=mat,
        morph_positions=mpos,
        morph_normals=mnrm,
    )


def build_meshes(doc: GltfDocument) -> tuple[Mesh, ...]:
    """Parse every mesh. Raises AvatarError on broken accessors or inconsistent counts."""
    n_mat = len(doc.json.get("materials", []) or [])
    out = []
    for i, mesh in enumerate(doc.json.get("meshes", []) or []):
        elem = f"meshes[{i}]"
        prims = tuple(
            _primitive(doc, p, f"{elem}.primitives[{j}]", n_mat) for j, p in enumerate(mesh.get("primitives", []))
        )
        ntargets = {p.morph_positions.shape[0] for p in prims}
        if len(ntargets) > 1:
            raise doc.issues.error(elem, f"primitives have different morph target counts {sorted(ntargets)}")
        t = ntargets.pop() if ntargets else 0
        names = (mesh.get("extras") or {}).get("targetNames")
        if not names and prims:
            names = (doc.json["meshes"][i]["primitives"][0].get("extras") or {}).get("targetNames")
        names = tuple(str(x) for x in (names or [])) if names and len(names) == t else tuple(f"target{k}" for k in range(t))
        weights = np.asarray(mesh.get("weights", [0.0] * t), dtype=np.float64)
        if weights.shape != (t,):
            doc.issues.warn(f"{elem}.weights", f"{weights.size} default weights for {t} targets; zeros used")
            weights = np.zeros(t)
        out.append(Mesh(name=str(mesh.get("name", f"mesh{i}")), primitives=prims, target_names=names,
                        default_weights=weights))
    return tuple(out)


def build_skins(doc: GltfDocument, node_count: int) -> tuple[Skin, ...]:
    """Parse skins: joints (J,) node indices, inverse bind matrices (J, 4, 4)."""
    out = []
    for i, skin in enumerate(doc.json.get("skins", []) or []):
        elem = f"skins[{i}]"
        joints = np.asarray(skin.get("joints", []), dtype=np.int64)
        for k, j in enumerate(joints):
            if not 0 <= j < node_count:
                raise doc.issues.error(f"{elem}.joints[{k}]", f"node {int(j)} does not exist")
        if "inverseBindMatrices" in skin:
            ibm = read_matrices(doc, skin["inverseBindMatrices"], f"{elem}.inverseBindMatrices")
            if ibm.shape[0] != len(joints):
                raise doc.issues.error(f"{elem}.inverseBindMatrices", f"{ibm.shape[0]} matrices for {len(joints)} joints")
            if not np.all(np.isfinite(ibm)):
                raise doc.issues.error(f"{elem}.inverseBindMatrices", "contains NaN or inf")
        else:
            ibm = np.tile(np.eye(4), (len(joints), 1, 1))
        sk = skin.get("skeleton", -1)
        out.append(Skin(name=str(skin.get("name", f"skin{i}")), joints=joints, inverse_bind=ibm,
                        skeleton=sk if isinstance(sk, int) and 0 <= sk < node_count else -1))
    return tuple(out)


def build_mesh_instances(doc: GltfDocument, meshes, skins) -> tuple[MeshInstance, ...]:
    """Nodes that draw a mesh (and their skin).

    Raises:
        AvatarError: a mesh or skin that does not exist; a skinned primitive whose JOINTS_0
            names a joint the skin does not have (the skinning would read outside it).
    """
    n_meshes, n_skins = len(meshes), len(skins)
    out = []
    for i, node in enumerate(doc.json.get("nodes", []) or []):
        if "mesh" not in node:
            continue
        m = node["mesh"]
        if not isinstance(m, int) or not 0 <= m < n_meshes:
            raise doc.issues.error(f"nodes[{i}].mesh", f"mesh {m} does not exist ({n_meshes} meshes)")
        s = node.get("skin", -1)
        if not isinstance(s, int) or s >= n_skins or s < -1:
            raise doc.issues.error(f"nodes[{i}].skin", f"skin {s} does not exist ({n_skins} skins)")
        if s >= 0:
            n_joints = len(skins[s].joints)
            for j, prim in enumerate(meshes[m].primitives):
                if prim.joints is not None and prim.joints.size and int(prim.joints.max()) >= n_joints:
                    raise doc.issues.error(f"meshes[{m}].primitives[{j}].attributes.JOINTS_0",
                                           f"joint {int(prim.joints.max())} does not exist in skin {s} "
                                           f"({n_joints} joints; drawn by nodes[{i}])")
        out.append(MeshInstance(node=i, mesh=m, skin=s))
    return tuple(out)
