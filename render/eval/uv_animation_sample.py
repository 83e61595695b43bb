"""The MToon UV-animation test avatar, written by our own code.

It is the equivalent of vrm-c's sample "VRMC_materials_mtoon UV Animation Test"
(vrm-c/vrm-specification, samples/VRMC_materials_mtoon_UV_Animation_Test, VRM Public
License 1.0, (c) 2022 pixiv Inc.): quads of 0.4 m facing +Z, each with one MToon 1.0
material whose shade colour is white times the same texture (so it looks unlit) and whose
texture moves: ``uvAnimationScrollXSpeedFactor`` = 1 (a left arrow), the Y scroll = 1 (an
up arrow), ``uvAnimationRotationSpeedFactor`` = 1 (circular arrows). We draw our own arrows
instead of copying the sample's images, and add a fourth quad that the sample lacks: X
scroll 0.5 and rotation 0.5 masked by a ``uvAnimationMaskTexture`` (B = 1 on the left half,
0 on the right), so the mask is measured too. Textures repeat (the UV animation needs
REPEAT) and are mipmapped (LINEAR_MIPMAP_NEAREST, as in the sample).

The file is a VRM 1.0 with the required humanoid bones (bare nodes, no skin), so both our
loader and three-vrm take it; it is deterministic, generated on first use into the cache
(``$SWAYCAM_CACHE``/avatars, see :func:`avatars.generate.cache.cached_file`).
"""

from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path

import numpy as np
import pygltflib as g
from PIL import Image, ImageDraw

from avatars.generate.writer import ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, FLOAT, USHORT, GlbWriter

QUAD_SIZE = 0.4
TEXTURE_SIZE = 256
#: (name, centre (x, y) metres, MToon UV animation properties, mask texture?)
QUADS = (
    ("ScrollX", (0.0, 0.35), {"uvAnimationScrollXSpeedFactor": 1.0}, False),
    ("ScrollY", (0.0, 0.85), {"uvAnimationScrollYSpeedFactor": 1.0}, False),
    ("ScrollRot", (0.0, 1.35), {"uvAnimationRotationSpeedFactor": 1.0}, False),
    ("Masked", (0.5, 0.85), {"uvAnimationScrollXSpeedFactor": 0.5, "uvAnimationRotationSpeedFactor": 0.5}, True),
)
#: Humanoid bones VRM 1.0 requires: name, parent, local translation (metres).
BONES = (
    ("hips", None, (0.0, 0.9, 0.0)), ("spine", "hips", (0.0, 0.1, 0.0)), ("head", "spine", (0.0, 0.5, 0.0)),
    ("leftUpperLeg", "hips", (0.1, -0.05, 0.0)), ("leftLowerLeg", "leftUpperLeg", (0.0, -0.4, 0.0)),
    ("leftFoot", "leftLowerLeg", (0.0, -0.4, 0.0)), ("rightUpperLeg", "hips", (-0.1, -0.05, 0.0)),
    ("rightLowerLeg", "rightUpperLeg", (0.0, -0.4, 0.0)), ("rightFoot", "rightLowerLeg", (0.0, -0.4, 0.0)),
    ("leftUpperArm", "spine", (0.2, 0.35, 0.0)), ("leftLowerArm", "leftUpperArm", (0.25, 0.0, 0.0)),
    ("leftHand", "leftLowerArm", (0.25, 0.0, 0.0)), ("rightUpperArm", "spine", (-0.2, 0.35, 0.0)),
    ("rightLowerArm", "rightUpperArm", (-0.25, 0.0, 0.0)), ("rightHand", "rightLowerArm", (-0.25, 0.0, 0.0)),
)


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=9)
    return buf.getvalue()


def _arrow(kind: str) -> Image.Image:
    """Black drawing on white, TEXTURE_SIZE square: "left", "up", "rotate"; plus a small
    corner mark so any motion of the texture is visible."""
    s = TEXTURE_SIZE
    img = Image.new("RGB", (s, s), (255, 255, 255))
    d = ImageDraw.Draw(img)
    if kind == "left":
        d.polygon([(0.08 * s, 0.45 * s), (0.4 * s, 0.15 * s), (0.4 * s, 0.32 * s), (0.9 * s, 0.32 * s),
                   (0.9 * s, 0.58 * s), (0.4 * s, 0.58 * s), (0.4 * s, 0.75 * s)], fill=(0, 0, 0))
    elif kind == "up":
        d.polygon([(0.5 * s, 0.05 * s), (0.85 * s, 0.4 * s), (0.63 * s, 0.4 * s), (0.63 * s, 0.85 * s),
                   (0.37 * s, 0.85 * s), (0.37 * s, 0.4 * s), (0.15 * s, 0.4 * s)], fill=(0, 0, 0))
    else:
        box = (0.18 * s, 0.18 * s, 0.82 * s, 0.82 * s)
        for start, end in ((200, 340), (20, 160)):
            d.arc(box, start, end, fill=(0, 0, 0), width=int(0.11 * s))
        for ang in (340, 160):
            a = math.radians(ang)
            c = np.array([0.5 * s + 0.32 * s * math.cos(a), 0.5 * s + 0.32 * s * math.sin(a)])
            t = np.array([-math.sin(a), math.cos(a)])     # tangent, the way the arc runs
            nrm = np.array([math.cos(a), math.sin(a)])
            tip = c + t * 0.14 * s
            d.polygon([tuple(tip), tuple(c + nrm * 0.12 * s), tuple(c - nrm * 0.12 * s)], fill=(0, 0, 0))
    d.rectangle((0.04 * s, 0.88 * s, 0.2 * s, 0.96 * s), fill=(200, 30, 40))
    return img


def _mask() -> Image.Image:
    """UV animation mask: B = 255 on the left half, 0 on the right (R and G 0)."""
    s = TEXTURE_SIZE
    a = np.zeros((s, s, 3), np.uint8)
    a[:, : s // 2, 2] = 255
    return Image.fromarray(a, "RGB")


def build_uv_animation_sample() -> bytes:
    """The GLB bytes (see the module docstring)."""
    out = GlbWriter()
    gl = out.gltf
    index = {}
    for name, parent, t in BONES:
        index[name] = len(gl.nodes)
        gl.nodes.append(g.Node(name=name, translation=list(t)))
        if parent is not None:
            gl.nodes[index[parent]].children.append(index[name])
    h = QUAD_SIZE / 2
    pos = np.array([[-h, -h, 0], [h, -h, 0], [-h, h, 0], [h, h, 0]], np.float32)
    attrs = dict(POSITION=out.accessor(pos, FLOAT, "VEC3", ARRAY_BUFFER, minmax=True),
                 NORMAL=out.accessor(np.tile([0.0, 0.0, 1.0], (4, 1)), FLOAT, "VEC3", ARRAY_BUFFER),
                 TEXCOORD_0=out.accessor(np.array([[0, 1], [1, 1], [0, 0], [1, 0]], np.float32), FLOAT, "VEC2",
                                         ARRAY_BUFFER))
    indices = out.accessor(np.array([0, 1, 3, 0, 3, 2], np.uint16), USHORT, "SCALAR", ELEMENT_ARRAY_BUFFER)
    gl.samplers.append(g.Sampler(magFilter=9729, minFilter=9985, wrapS=10497, wrapT=10497))
    images = {"left": _arrow("left"), "up": _arrow("up"), "rotate": _arrow("rotate"), "mask": _mask()}
    tex = {}
    for k, (name, img) in enumerate(images.items()):
        out.png(name, _png(img))
        gl.textures.append(g.Texture(sampler=0, source=k))
        tex[name] = k
    art = {"ScrollX": "left", "ScrollY": "up", "ScrollRot": "rotate", "Masked": "up"}
    roots = [index["hips"]]
    for name, (x, y), anim, masked in QUADS:
        t = {"index": tex[art[name]]}
        mtoon = {"specVersion": "1.0", "shadeColorFactor": [1.0, 1.0, 1.0], "shadeMultiplyTexture": dict(t), **anim}
        if masked:
            mtoon["uvAnimationMaskTexture"] = {"index": tex["mask"]}
        gl.materials.append(g.Material(
            name=name, alphaMode="OPAQUE", doubleSided=True,
            pbrMetallicRoughness=g.PbrMetallicRoughness(baseColorFactor=[1.0, 1.0, 1.0, 1.0], baseColorTexture=t,
                                                        metallicFactor=0.0, roughnessFactor=1.0),
            extensions={"KHR_materials_unlit": {}, "VRMC_materials_mtoon": mtoon}))
        gl.meshes.append(g.Mesh(name=name, primitives=[g.Primitive(attributes=g.Attributes(**attrs), indices=indices,
                                                                   material=len(gl.materials) - 1)]))
        gl.nodes.append(g.Node(name=name, mesh=len(gl.meshes) - 1, translation=[x, y, 0.0]))
        roots.append(len(gl.nodes) - 1)
    gl.scenes = [g.Scene(name="uv-animation", nodes=roots)]
    gl.scene = 0
    gl.extensionsUsed = ["VRMC_vrm", "KHR_materials_unlit", "VRMC_materials_mtoon"]
    gl.extensions = {"VRMC_vrm": {
        "specVersion": "1.0",
        "meta": {"name": "swaycam MToon UV animation test", "version": "1", "authors": ["swaycam"],
                 "licenseUrl": "https://vrm.dev/licenses/1.0/", "avatarPermission": "everyone",
                 "commercialUsage": "corporation", "creditNotation": "unnecessary", "allowRedistribution": True,
                 "modification": "allowModificationRedistribution"},
        "humanoid": {"humanBones": {name: {"node": index[name]} for name, _, _ in BONES}},
    }}
    return out.to_bytes()


def uv_animation_sample_path() -> Path:
    """The sample's .vrm in the cache (generated on first use; the name carries a hash of
    this file's source, so a change makes a new file)."""
    from avatars.generate.cache import cached_file

    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return cached_file(f"swaycam-mtoon-uv-animation-{digest}", build_uv_animation_sample)
