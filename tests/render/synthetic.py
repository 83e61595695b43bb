"""Tiny in-memory avatars (quads) with exactly known pixels, for renderer feature tests.

Every quad lies in a plane z = const, facing +Z (toward the default test camera at
z = +2 looking at the origin), unless ``facing`` is -1.
"""

from __future__ import annotations

import math

import numpy as np

import render
from avatars import (
    Avatar, Image, Material, Mesh, MeshInstance, Meta, Primitive, Sampler, Skeleton, Skin, Texture, TextureRef,
)

CAMERA = render.Camera(position=np.array([0.0, 0.0, 2.0]), target=np.zeros(3), fov_y=math.radians(45.0),
                       near=0.1, far=10.0)


def skeleton(n: int, translations=None) -> Skeleton:
    """``n`` root nodes at ``translations`` (n, 3) (origin by default)."""
    t = np.zeros((n, 3)) if translations is None else np.asarray(translations, float)
    return Skeleton(names=tuple(f"n{i}" for i in range(n)), parents=np.full(n, -1, np.int64), rest_translation=t,
                    rest_rotation=np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)), rest_scale=np.ones((n, 3)))


def quad(center=(0.0, 0.0, 0.0), size=0.5, *, material=0, facing=1, joint=None, morph=None) -> Primitive:
    """A square of side ``size`` centred at ``center``; ``joint``: skinned fully to that joint;
    ``morph``: (3,) position delta of a single morph target."""
    cx, cy, cz = center
    h = size / 2
    pos = np.array([[cx - h, cy - h, cz], [cx + h, cy - h, cz], [cx + h, cy + h, cz], [cx - h, cy + h, cz]], np.float32)
    idx = np.array([0, 1, 2, 0, 2, 3] if facing > 0 else [0, 2, 1, 0, 3, 2], np.uint32)
    kw = {}
    if joint is not None:
        kw["joints"] = np.tile(np.array([joint, 0, 0, 0], np.uint16), (4, 1))
        kw["weights"] = np.tile(np.array([1, 0, 0, 0], np.float32), (4, 1))
    if morph is not None:
        kw["morph_positions"] = np.tile(np.asarray(morph, np.float32), (1, 4, 1))
    return Primitive(positions=pos, indices=idx, normals=np.tile(np.array([0, 0, facing], np.float32), (4, 1)),
                     uv0=np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32), material=material, **kw)


def unlit(color=(1.0, 1.0, 1.0, 1.0), **kw) -> Material:
    return Material(base_color_factor=np.asarray(color, float), unlit=True, **kw)


def avatar(primitives, materials, *, nodes=1, translations=None, skin_joints=None, images=(), textures=(),
           target_names=None) -> Avatar:
    """One mesh instance on node 0 drawing ``primitives``; skinned to ``skin_joints`` (node
    indices) when given."""
    sk = skeleton(nodes, translations)
    skins = ()
    inst_skin = -1
    if skin_joints is not None:
        j = np.asarray(skin_joints, np.int64)
        ibm = np.linalg.inv(sk.rest_world[j])
        skins = (Skin(name="skin", joints=j, inverse_bind=ibm),)
        inst_skin = 0
    t = primitives[0].morph_positions.shape[0]
    mesh = Mesh(name="m", primitives=tuple(primitives), target_names=target_names or tuple(f"t{k}" for k in range(t)),
                default_weights=np.zeros(t))
    return Avatar(path="synthetic", vrm_version=None, meta=Meta(), skeleton=sk, meshes=(mesh,),
                  mesh_instances=(MeshInstance(node=0, mesh=0, skin=inst_skin),), skins=skins,
                  materials=tuple(materials), images=tuple(images), textures=tuple(textures))


def checker_texture(colors, *, sampler=Sampler(mag_filter=9728, min_filter=9728)):
    """A 2x2 image (colors: 4 RGBA uint8 tuples, row-major from the top-left) and its texture."""
    rgba = np.array(colors, np.uint8).reshape(2, 2, 4)
    return (Image(name="checker", rgba=rgba),), (Texture(image=0, sampler=sampler),), TextureRef(texture=0)


def srgb8(linear: float) -> int:
    """Expected 8-bit sRGB encoding of a linear value."""
    c = linear * 12.92 if linear <= 0.0031308 else 1.055 * linear ** (1 / 2.4) - 0.055
    return int(round(255 * c))


def textures(*arrays, sampler=Sampler(mag_filter=9728, min_filter=9728)):
    """Images and textures from (H, W, 4) uint8 arrays: texture k samples image k with ``sampler``."""
    imgs = tuple(Image(name=f"t{k}", rgba=np.asarray(a, np.uint8)) for k, a in enumerate(arrays))
    return imgs, tuple(Texture(image=k, sampler=sampler) for k in range(len(arrays)))


def halves(left, right, size=8) -> np.ndarray:
    """A ``size`` square RGBA image: colour ``left`` (4 uint8) where u < 0.5, ``right`` elsewhere."""
    a = np.zeros((size, size, 4), np.uint8)
    a[:, : size // 2] = left
    a[:, size // 2:] = right
    return a


def quad_with_normal(normal, center=(0.0, 0.0, 0.0), size=0.5, *, material=0) -> Primitive:
    """:func:`quad` with every vertex normal set to ``normal`` (normalised)."""
    q = quad(center, size, material=material)
    n = np.asarray(normal, np.float64)
    q.normals[:] = (n / np.linalg.norm(n)).astype(np.float32)
    return q


def sphere(radius=0.3, center=(0.0, 0.0, 0.0), *, rings=24, segments=48, material=0) -> Primitive:
    """A closed UV sphere with outward normals and uvs: u = longitude / 2π with x < 0 where
    u < 0.5 and x > 0 where u > 0.5; v = polar angle / π (0 at the top)."""
    vs, us = np.meshgrid(np.linspace(0.0, 1.0, rings + 1), np.linspace(0.0, 1.0, segments + 1), indexing="ij")
    theta, phi = vs * math.pi, us * 2.0 * math.pi
    n = np.stack([-np.sin(theta) * np.sin(phi), np.cos(theta), np.sin(theta) * np.cos(phi)], -1).reshape(-1, 3)
    pos = (n * radius + np.asarray(center)).astype(np.float32)
    uv = np.stack([us, vs], -1).reshape(-1, 2).astype(np.float32)
    w = segments + 1
    tri = []
    for i in range(rings):
        for j in range(segments):
            a, b, c, d = i * w + j, i * w + j + 1, (i + 1) * w + j, (i + 1) * w + j + 1
            tri += [(a, c, b), (b, c, d)]
    tri = np.array(tri, np.int64)
    p = pos.astype(np.float64) - np.asarray(center)
    fn = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
    flip = np.einsum("ij,ij->i", fn, p[tri].mean(axis=1)) < 0
    tri[flip] = tri[flip][:, [0, 2, 1]]
    return Primitive(positions=pos, indices=tri.reshape(-1).astype(np.uint32), normals=n.astype(np.float32), uv0=uv,
                     material=material)
