"""glTF nodes -> :class:`Skeleton` (rest TRS, parents), with structural validation."""

from __future__ import annotations

import numpy as np

from .gltf_io import GltfDocument
from .math3d import mat_decompose, quat_normalize
from .skeleton import Skeleton

#: Largest |value| of a node's translation, scale or matrix entry (metres / factor): no
#: avatar is 10 km wide, and 1e308 would overflow forward kinematics to inf.
MAX_NODE_VALUE = 1e4


def build_skeleton(doc: GltfDocument) -> Skeleton:
    """Parse ``nodes`` into a Skeleton.

    Raises:
        AvatarError: a child index that does not exist, a node with two parents, a cycle,
            NaN/inf in a transform, a zero-length rotation quaternion.
    """
    nodes = doc.json.get("nodes", []) or []
    n = len(nodes)
    issues = doc.issues
    parents = np.full(n, -1, dtype=np.int64)
    names = []
    t = np.zeros((n, 3))
    r = np.zeros((n, 4))
    r[:, 3] = 1.0
    s = np.ones((n, 3))
    for i, node in enumerate(nodes):
        elem = f"nodes[{i}]"
        names.append(str(node.get("name", "")))
        for c in node.get("children", []) or []:
            if not isinstance(c, int) or not 0 <= c < n:
                raise issues.error(f"{elem}.children", f"node {c} does not exist ({n} nodes)")
            if c == i:
                raise issues.error(f"{elem}.children", "node is its own child (cycle)")
            if parents[c] >= 0:
                raise issues.error(f"{elem}.children", f"node {c} already has parent {parents[c]}")
            parents[c] = i
        if "matrix" in node:
            m = np.asarray(node["matrix"], dtype=np.float64)
            if m.shape != (16,):
                raise issues.error(f"{elem}.matrix", f"needs 16 numbers, got {m.size}")
            if not np.all(np.isfinite(m)):
                raise issues.error(f"{elem}.matrix", "contains NaN or inf")
            if np.abs(m).max() > MAX_NODE_VALUE:
                raise issues.error(f"{elem}.matrix", f"has {np.abs(m).max():g}, beyond {MAX_NODE_VALUE:g}")
            ti, ri, si = mat_decompose(m.reshape(4, 4).T)
            t[i], r[i], s[i] = ti, ri, si
        else:
            for key, arr, size in (("translation", t, 3), ("rotation", r, 4), ("scale", s, 3)):
                if key in node:
                    v = np.asarray(node[key], dtype=np.float64)
                    if v.shape != (size,):
                        raise issues.error(f"{elem}.{key}", f"needs {size} numbers, got {v.size}")
                    if not np.all(np.isfinite(v)):
                        raise issues.error(f"{elem}.{key}", f"contains NaN or inf: {node[key]}")
                    if key != "rotation" and np.abs(v).max() > MAX_NODE_VALUE:
                        raise issues.error(f"{elem}.{key}", f"has {np.abs(v).max():g}, beyond {MAX_NODE_VALUE:g}")
                    arr[i] = v
            if np.linalg.norm(r[i]) < 1e-8:
                raise issues.error(f"{elem}.rotation", "zero-length quaternion")
    _check_acyclic(parents, issues)
    return Skeleton(
        names=tuple(names),
        parents=parents,
        rest_translation=t,
        rest_rotation=quat_normalize(r),
        rest_scale=s,
    )


def _check_acyclic(parents: np.ndarray, issues) -> None:
    n = len(parents)
    state = np.zeros(n, dtype=np.int8)  # 0 unseen, 1 on path, 2 done
    for start in range(n):
        path = []
        j = start
        while j >= 0 and state[j] == 0:
            state[j] = 1
            path.append(j)
            j = int(parents[j])
        if j >= 0 and state[j] == 1:
            raise issues.error(f"nodes[{j}]", "cycle in the node tree (node is its own ancestor)")
        for k in path:
            state[k] = 2


def check_node(doc: GltfDocument, index, element: str, *, optional: bool = False) -> int | None:
    """Validate a node reference. Returns the index; for optional parts returns None and warns."""
    n = len(doc.json.get("nodes", []) or [])
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < n:
        return index
    if optional:
        doc.issues.warn(element, f"node {index} does not exist; skipped")
        return None
    raise doc.issues.error(element, f"node {index} does not exist")
