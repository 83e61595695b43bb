"""Image and projection helpers for the render tests."""

from __future__ import annotations

import numpy as np


def skinned(avatar, world, instance: int, prim, positions=None) -> np.ndarray:
    """World positions (V, 3) of ``prim`` (of mesh instance ``instance``) at node matrices ``world``."""
    mi = avatar.mesh_instances[instance]
    pos = (prim.positions if positions is None else positions).astype(np.float64)
    if mi.skin < 0 or prim.joints is None:
        m = world[mi.node]
        return pos @ m[:3, :3].T + m[:3, 3]
    skin = avatar.skins[mi.skin]
    mats = world[skin.joints] @ skin.inverse_bind
    out = np.zeros_like(pos)
    for k in range(4):
        m = mats[prim.joints[:, k].astype(np.int64)]
        out += prim.weights[:, k:k + 1] * (np.einsum("nij,nj->ni", m[:, :3, :3], pos) + m[:, :3, 3])
    return out


def morph_region(avatar, world, expression: str) -> np.ndarray:
    """World positions (before and after) of every vertex an expression's morphs move."""
    binds = avatar.expressions[expression].morph_target_binds
    node_to_inst = {mi.node: k for k, mi in enumerate(avatar.mesh_instances)}
    pts = []
    for b in binds:
        k = node_to_inst[b.node]
        for prim in avatar.meshes[avatar.mesh_instances[k].mesh].primitives:
            d = prim.morph_positions[b.index]
            moved = np.linalg.norm(d, axis=1) > 1e-7
            if not moved.any():
                continue
            before = skinned(avatar, world, k, prim)[moved]
            after = skinned(avatar, world, k, prim, prim.positions + b.weight * d)[moved]
            pts += [before, after]
    return np.concatenate(pts)


def srgb_encode(c):
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * np.clip(c, 0, None) ** (1 / 2.4) - 0.055)


def srgb_decode(c):
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def hair_color(avatar) -> np.ndarray:
    """Median base colour (sRGB 0..255, (3,)) of the vertices moved mostly by spring joints,
    texture included (sampled at the vertex uv)."""
    spring_nodes = {j.node for s in avatar.springs for j in s.joints}
    cols = []
    for mi in avatar.mesh_instances:
        if mi.skin < 0:
            continue
        joints = avatar.skins[mi.skin].joints
        for prim in avatar.meshes[mi.mesh].primitives:
            if prim.joints is None:
                continue
            dom = joints[prim.joints[np.arange(prim.vertex_count), np.argmax(prim.weights, axis=1)]]
            sel = np.isin(dom, list(spring_nodes))
            if not sel.any():
                continue
            mat = avatar.materials[prim.material]
            c = np.tile(mat.base_color_factor[:3], (int(sel.sum()), 1))
            if mat.base_color_texture is not None and prim.uv0 is not None:
                img = avatar.images[avatar.textures[mat.base_color_texture.texture].image].rgba
                h, w = img.shape[:2]
                uv = prim.uv0[sel] % 1.0
                rows = np.clip((uv[:, 1] * h).astype(int), 0, h - 1)
                texel = img[rows, np.clip((uv[:, 0] * w).astype(int), 0, w - 1)]
                c = c * srgb_decode(texel[:, :3] / 255.0)
            cols.append(c)
    return 255.0 * srgb_encode(np.median(np.concatenate(cols), axis=0))


def changed_pixels(a: np.ndarray, b: np.ndarray, threshold: int = 0) -> np.ndarray:
    """(H, W) bool: pixels whose channels differ by more than ``threshold``."""
    return np.any(np.abs(a.astype(np.int16) - b.astype(np.int16)) > threshold, axis=-1)


def centroid(mask: np.ndarray) -> np.ndarray:
    """(x, y) pixel centroid of a mask."""
    rows, cols = np.nonzero(mask)
    return np.array([cols.mean(), rows.mean()])
