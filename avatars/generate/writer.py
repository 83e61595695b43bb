"""Assemble a VRM 1.0 GLB with pygltflib from rig nodes, mesh parts, materials and extensions.

Layout of the file: one buffer (the GLB BIN chunk); every bufferView starts on a 4-byte
boundary; vertex attributes are float32 (POSITION with min/max), JOINTS_0 uint16 (skin
joint indices), WEIGHTS_0 float32 normalised to sum 1 in float32; indices uint16 when the
primitive has fewer than 65536 vertices, else uint32. Morph targets store POSITION deltas;
a target that does not move a primitive is an accessor without bufferView (all zeros, glTF
2.0 §3.6.2.3). One skin holds every rig joint; inverse bind matrices are the exact inverses
of the bones' rest world matrices (pure translations here). Skinned mesh nodes are scene
roots with identity transforms, so vertex positions are bind-space = world rest space.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pygltflib as g

from .geometry import Part, merge
from .rig import Rig

ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
FLOAT, USHORT, UINT = 5126, 5123, 5125


@dataclass
class MeshSpec:
    """A mesh to write: its node name, parts (merged per material) and morph target names."""

    name: str
    parts: list[Part]
    target_names: tuple[str, ...] = ()


@dataclass
class GlbWriter:
    """Accumulates binary data and glTF objects; :meth:`to_bytes` gives the GLB."""

    gltf: g.GLTF2 = field(default_factory=lambda: g.GLTF2(asset=g.Asset(version="2.0", generator="swaycam avatars.generate")))
    blob: bytearray = field(default_factory=bytearray)

    def view(self, data: bytes, target: int | None = None) -> int:
        """Append ``data`` on a 4-byte boundary as a new bufferView; returns its index."""
        self.blob.extend(b"\x00" * (-len(self.blob) % 4))
        self.gltf.bufferViews.append(g.BufferView(buffer=0, byteOffset=len(self.blob), byteLength=len(data),
                                                  target=target))
        self.blob.extend(data)
        return len(self.gltf.bufferViews) - 1

    def accessor(self, array: np.ndarray, ctype: int, atype: str, target: int | None = None,
                 minmax: bool = False) -> int:
        """Write ``array`` (count, n) or (count,) as a tightly packed accessor; returns its index."""
        dtype = {FLOAT: "<f4", USHORT: "<u2", UINT: "<u4"}[ctype]
        a = np.ascontiguousarray(array, dtype=dtype)
        acc = g.Accessor(bufferView=self.view(a.tobytes(), target), componentType=ctype, count=int(a.shape[0]),
                         type=atype)
        if minmax:
            flat = a.reshape(a.shape[0], -1)
            acc.min = [float(v) for v in flat.min(axis=0)]
            acc.max = [float(v) for v in flat.max(axis=0)]
        self.gltf.accessors.append(acc)
        return len(self.gltf.accessors) - 1

    def zeros(self, count: int) -> int:
        """A VEC3 float accessor of ``count`` zeros without bufferView (an unused morph target)."""
        self.gltf.accessors.append(g.Accessor(byteOffset=None, componentType=FLOAT, count=count, type="VEC3",
                                              min=[0.0, 0.0, 0.0], max=[0.0, 0.0, 0.0]))
        return len(self.gltf.accessors) - 1

    def png(self, name: str, data: bytes) -> int:
        """Embed a PNG image; returns the image index."""
        self.gltf.images.append(g.Image(name=name, mimeType="image/png", bufferView=self.view(data)))
        return len(self.gltf.images) - 1

    def to_bytes(self) -> bytes:
        self.blob.extend(b"\x00" * (-len(self.blob) % 4))
        self.gltf.buffers = [g.Buffer(byteLength=len(self.blob))]
        self.gltf.set_binary_blob(bytes(self.blob))
        return b"".join(self.gltf.save_to_bytes())


def _weights32(w: np.ndarray) -> np.ndarray:
    w = np.asarray(w, np.float64)
    w = w / w.sum(axis=1, keepdims=True)
    w32 = w.astype(np.float32)
    w32[:, 0] = np.float32(1.0) - w32[:, 1:].sum(axis=1, dtype=np.float32)
    return w32


def _primitive(out: GlbWriter, part: Part, material: int, joint_index: np.ndarray, targets: tuple[str, ...]):
    n = part.vertex_count
    attrs = g.Attributes(
        POSITION=out.accessor(part.positions, FLOAT, "VEC3", ARRAY_BUFFER, minmax=True),
        NORMAL=out.accessor(part.normals, FLOAT, "VEC3", ARRAY_BUFFER),
    )
    if part.uv is not None:
        attrs.TEXCOORD_0 = out.accessor(part.uv, FLOAT, "VEC2", ARRAY_BUFFER)
    attrs.JOINTS_0 = out.accessor(joint_index[part.joints], USHORT, "VEC4", ARRAY_BUFFER)
    attrs.WEIGHTS_0 = out.accessor(_weights32(part.weights), FLOAT, "VEC4", ARRAY_BUFFER)
    ctype = USHORT if n < 65536 else UINT
    indices = out.accessor(part.triangles.reshape(-1), ctype, "SCALAR", ELEMENT_ARRAY_BUFFER)
    tgts = []
    for name in targets:
        d = part.targets.get(name)
        if d is None or not np.any(d):
            tgts.append(g.Attributes(POSITION=out.zeros(n)))
        else:
            tgts.append(g.Attributes(POSITION=out.accessor(d, FLOAT, "VEC3", ARRAY_BUFFER, minmax=True)))
    return g.Primitive(attributes=attrs, indices=indices, material=material, mode=4, targets=tgts)


def write_vrm(rig: Rig, meshes: list[MeshSpec], materials: list[dict], images: list[tuple[str, bytes]],
              extensions: dict, extensions_used: list[str]) -> tuple[bytes, dict[str, int]]:
    """Write the GLB.

    Args:
        rig: nodes 0..N-1 of the file (bones and helpers); mesh nodes are appended after them.
        meshes: skinned meshes; each becomes a mesh and a node named after it.
        materials: glTF material dicts (order = material index; ``name`` keys the parts).
        images: (name, PNG bytes); texture i samples image i (linear filtering, clamped edges).
        extensions: root extensions (VRMC_vrm, VRMC_springBone); a ``{"$mesh": name}``
            placeholder anywhere inside is replaced by the node index of that mesh.
        extensions_used: the ``extensionsUsed`` list.

    Returns:
        (GLB bytes, mesh name -> node index).
    """
    out = GlbWriter()
    gl = out.gltf
    world = np.zeros((len(rig.names), 3))
    for i, name in enumerate(rig.names):
        # translations rounded to 1 nm (clean JSON); world positions re-accumulated from them
        # in the loader's order (parent + local), so the inverse binds match them exactly
        local = np.round(rig.local_translation(i), 9) + 0.0
        p = rig.parents[i]
        world[i] = local if p < 0 else world[p] + local
        node = g.Node(name=name, translation=[float(v) for v in local])
        node.children = [k for k, q in enumerate(rig.parents) if q == i]
        gl.nodes.append(node)
    joint_index = np.zeros(len(rig.names), np.int64)
    joint_index[rig.joints] = np.arange(len(rig.joints))
    ibm = np.zeros((len(rig.joints), 4, 4))
    ibm[:] = np.eye(4)
    ibm[:, :3, 3] = -world[rig.joints]
    roots = [i for i, p in enumerate(rig.parents) if p < 0]
    gl.skins.append(g.Skin(name="skin", joints=list(rig.joints), skeleton=roots[0],
                           inverseBindMatrices=out.accessor(np.transpose(ibm, (0, 2, 1)).reshape(-1, 16), FLOAT,
                                                            "MAT4")))
    mat_index = {m["name"]: i for i, m in enumerate(materials)}
    gl.materials = [g.Material(**m) for m in materials]
    for name, data in images:
        img = out.png(name, data)
        gl.textures.append(g.Texture(sampler=0, source=img))
    if images:
        gl.samplers.append(g.Sampler(magFilter=9729, minFilter=9987, wrapS=33071, wrapT=33071))
    mesh_nodes = {}
    for spec in meshes:
        prims = []
        for mname in sorted({p.material for p in spec.parts}, key=lambda k: mat_index[k]):
            part = merge([p for p in spec.parts if p.material == mname])
            prims.append(_primitive(out, part, mat_index[mname], joint_index, spec.target_names))
        mesh = g.Mesh(name=spec.name, primitives=prims)
        if spec.target_names:
            mesh.weights = [0.0] * len(spec.target_names)
            mesh.extras = {"targetNames": list(spec.target_names)}
        gl.meshes.append(mesh)
        gl.nodes.append(g.Node(name=spec.name, mesh=len(gl.meshes) - 1, skin=0))
        mesh_nodes[spec.name] = len(gl.nodes) - 1
    gl.scenes = [g.Scene(name="swaycam", nodes=roots + list(mesh_nodes.values()))]
    gl.scene = 0
    resolved = _resolve(extensions, mesh_nodes)
    gl.extensions = resolved
    gl.extensionsUsed = list(extensions_used)
    return out.to_bytes(), mesh_nodes


def _resolve(obj, mesh_nodes: dict[str, int]):
    """Replace ``{"$mesh": name}`` placeholders in extension JSON by mesh node indices."""
    if isinstance(obj, dict):
        if set(obj) == {"$mesh"}:
            return mesh_nodes[obj["$mesh"]]
        return {k: _resolve(v, mesh_nodes) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_resolve(v, mesh_nodes) for v in obj]
    return obj
