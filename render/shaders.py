"""GLSL 330 core programs: sources in ``render/glsl/``, compile/link with readable errors.

Every program gets ``#version 330 core``, the constants below as ``#define``s, and, where
asked, ``common.glsl`` (the Frame and Material uniform blocks) prepended.
"""

from __future__ import annotations

import ctypes
import logging
from functools import lru_cache
from pathlib import Path

import numpy as np
from ._gl import GL

from avatars import contact

from . import fragment_values
from .gpu import GLObject, Ledger

log = logging.getLogger(__name__)

GLSL_DIR = Path(__file__).with_name("glsl")
MAX_MORPHS = 32        #: morph targets blended per draw (the largest weights win)
MORPH_WIDTH = 2048     #: texels per row of a morph delta texture
FRAME_BINDING = 0      #: uniform block binding of ``Frame``
MATERIAL_BINDING = 1   #: uniform block binding of ``Material``
JOINTS_BINDING = 2     #: uniform block binding of ``Joints`` (skinning matrices)
JOINT_ROW_BYTES = 48   #: one affine skinning matrix as three vec4 rows

# Texture units.
UNIT_BASE, UNIT_SHADE, UNIT_EMISSIVE, UNIT_JOINTS, UNIT_MORPHS = 0, 1, 2, 3, 4
UNIT_CONTACT = 13     #: the try-on contact's head-envelope texture (avatars.contact)
#: Material texture slot (render/materials.py TEXTURE_SLOTS) -> texture unit.
MATERIAL_UNITS = {"base": UNIT_BASE, "shade": UNIT_SHADE, "emissive": UNIT_EMISSIVE, "normal": 5,
                  "shading_shift": 6, "matcap": 7, "rim": 8, "outline_width": 9, "uv_mask": 10,
                  "metallic_roughness": 11, "occlusion": 12}


class ShaderError(RuntimeError):
    """A GLSL compile or link error; the message has the file name and the driver's log."""


def joint_capacity() -> int:
    """Skinning matrices that fit the ``Joints`` uniform block of the current context
    (GL_MAX_UNIFORM_BLOCK_SIZE, capped at 64 KiB)."""
    size = min(int(GL.glGetIntegerv(GL.GL_MAX_UNIFORM_BLOCK_SIZE)), 65536)
    return size // JOINT_ROW_BYTES


@lru_cache(maxsize=None)
def _source(name: str) -> str:
    return (GLSL_DIR / name).read_text()


def preamble(common: bool, defines: tuple[str, ...] = (), includes: tuple[str, ...] = (), extra: str = "") -> str:
    """The text before a program's own source: version, constants, ``common.glsl``, the
    ``includes`` (files of ``render/glsl``) and ``extra`` (generated GLSL), then ``#line 1``."""
    head = f"#version 330 core\n#define MAX_MORPHS {MAX_MORPHS}\n#define MORPH_WIDTH {MORPH_WIDTH}\n"
    head += f"#define JOINT_CAPACITY {joint_capacity()}\n"
    head += (f"#define CONTACT_MAX {contact.MAX_COLLIDERS}\n#define CONTACT_ROUNDS {contact.ROUNDS}\n"
             f"#define CONTACT_FULL {contact.FULL_DEPTH!r}\n")
    head += "".join(f"#define {d}\n" for d in defines)
    return (head + (_source("common.glsl") if common else "") + "".join(_source(f) for f in includes) + extra
            + "#line 1\n")


def _compile(kind: int, name: str, source: str) -> int:
    sh = GL.glCreateShader(kind)
    GL.glShaderSource(sh, source)
    GL.glCompileShader(sh)
    if not GL.glGetShaderiv(sh, GL.GL_COMPILE_STATUS):
        info = GL.glGetShaderInfoLog(sh)
        GL.glDeleteShader(sh)
        text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
        raise ShaderError(f"{name}: compile failed:\n{text}")
    return sh


def _feedback_varyings(prog: int, names: tuple[str, ...]) -> None:
    """Declare the vertex outputs captured by transform feedback (interleaved, before linking)."""
    strings = [ctypes.create_string_buffer(n.encode()) for n in names]
    array = (ctypes.POINTER(ctypes.c_char) * len(strings))(
        *(ctypes.cast(s, ctypes.POINTER(ctypes.c_char)) for s in strings))
    GL.glTransformFeedbackVaryings(prog, len(strings), array, GL.GL_INTERLEAVED_ATTRIBS)


class Program(GLObject):
    """A linked program with cached uniform locations and typed setters.

    ``feedback``: vertex shader outputs to capture with transform feedback, interleaved in
    this order (used by tests to read the mesh shader's skinned positions; empty: none).
    ``vert_extra``: generated GLSL after the vertex shader's includes; ``frag_header``: the
    fragment shader's generated header *instead of* ``common.glsl`` (None: ``common`` decides).
    """

    kind = "program"

    def __init__(self, ledger: Ledger, vert: str, frag: str, *, common: bool = True, defines: tuple[str, ...] = (),
                 feedback: tuple[str, ...] = (), vert_includes: tuple[str, ...] = (), vert_extra: str = "",
                 frag_header: str | None = None):
        head = preamble(common, defines) if frag_header is None else preamble(False, defines, extra=frag_header)
        shaders = [_compile(GL.GL_VERTEX_SHADER, vert,
                            preamble(common, defines, vert_includes, extra=vert_extra) + _source(vert)),
                   _compile(GL.GL_FRAGMENT_SHADER, frag, head + _source(frag))]
        prog = GL.glCreateProgram()
        for sh in shaders:
            GL.glAttachShader(prog, sh)
        if feedback:
            _feedback_varyings(prog, tuple(feedback))
        GL.glLinkProgram(prog)
        for sh in shaders:
            GL.glDetachShader(prog, sh)
            GL.glDeleteShader(sh)
        if not GL.glGetProgramiv(prog, GL.GL_LINK_STATUS):
            info = GL.glGetProgramInfoLog(prog)
            GL.glDeleteProgram(prog)
            raise ShaderError(f"{vert}+{frag}: link failed:\n{info}")
        super().__init__(ledger, prog)
        self.name = f"{vert}+{frag}" + "".join(f" {d}" for d in defines)
        self._locations: dict[str, int] = {}
        for block, binding in (("Frame", FRAME_BINDING), ("Material", MATERIAL_BINDING),
                               ("Joints", JOINTS_BINDING)):
            idx = GL.glGetUniformBlockIndex(prog, block)
            if idx != GL.GL_INVALID_INDEX:
                GL.glUniformBlockBinding(prog, idx, binding)

    def use(self) -> None:
        GL.glUseProgram(self.id)

    def loc(self, name: str) -> int:
        """Uniform location (-1 when the uniform is unused and optimised away)."""
        loc = self._locations.get(name)
        if loc is None:
            loc = self._locations[name] = GL.glGetUniformLocation(self.id, name)
        return loc

    def set_int(self, name: str, value: int) -> None:
        GL.glUniform1i(self.loc(name), int(value))

    def set_float(self, name: str, value: float) -> None:
        GL.glUniform1f(self.loc(name), float(value))

    def set_vec(self, name: str, value) -> None:
        v = [float(x) for x in value]
        (GL.glUniform2f, GL.glUniform3f, GL.glUniform4f)[len(v) - 2](self.loc(name), *v)

    def set_ints(self, name: str, values: np.ndarray) -> None:
        """An int array uniform ``name[0]`` from (n,) int32."""
        if len(values):
            GL.glUniform1iv(self.loc(name + "[0]"), len(values), np.ascontiguousarray(values, np.int32))

    def set_floats(self, name: str, values: np.ndarray) -> None:
        """A float array uniform ``name[0]`` from (n,) float32."""
        if len(values):
            GL.glUniform1fv(self.loc(name + "[0]"), len(values), np.ascontiguousarray(values, np.float32))

    def set_samplers(self, **units: int) -> None:
        """Assign texture units to sampler uniforms (call once after linking)."""
        self.use()
        for name, unit in units.items():
            GL.glUniform1i(self.loc(name), unit)

    def _delete(self) -> None:
        GL.glDeleteProgram(self.id)


#: mesh.vert's hook when the fragment shader reads the blocks itself
NO_FLAT_VALUES = "void pass_fragment_values() {}\n"


class Programs:
    """The renderer's programs, linked once per context.

    With ``flat_values`` (the renderer's choice on software rasterisers) the mesh fragment
    shader reads no uniform block: the vertex shader hands it every block value as a flat
    varying (:mod:`render.fragment_values`; llvmpipe gathers fragment uniforms lane by lane);
    a textured MToon program then leaves few varying slots free, which a GPU needs no more
    of. The mesh program comes in variants, linked on first use: with ``ALPHA_MASK`` (the
    fragment shader may ``discard``, which turns off early depth tests, so only
    alpha-tested materials use it), with ``OUTLINE`` (the MToon inverted hull), with
    ``JOINTS_TEXTURE`` (skinning matrices in a texture, for skeletons too big for the uniform
    block), and with a material's features (lighting model, textures, rim, UV animation:
    :func:`render.materials.shader_features`).
    """

    def __init__(self, ledger: Ledger, *, flat_values: bool = True):
        self._ledger = ledger
        #: the fragment shader gets the block values as flat varyings (for software
        #: rasterisers; a GPU reads uniforms at no cost and keeps its varyings for textures)
        self.flat_values = bool(flat_values)
        self._mesh: dict[tuple, Program] = {}
        self.lines = Program(ledger, "lines.vert", "lines.frag")
        self.quad = Program(ledger, "quad.vert", "quad.frag", common=False)
        self.quad.set_samplers(u_tex=0)

    def mesh_for(self, mask: bool, outline: bool, joints_texture: bool = False,
                 feedback: tuple[str, ...] = (), features: tuple[str, ...] = ()) -> Program:
        """The mesh program for an alpha-tested (``mask``) material and/or the outline pass,
        reading skinning matrices from the uniform block or (``joints_texture``) a texture,
        with the material ``features`` (``#define`` names; none: unlit, untextured).
        ``feedback``: vertex outputs to capture with transform feedback (a separate variant,
        for tests comparing the shader with CPU skinning; the renderer draws without)."""
        key = (bool(mask), bool(outline), bool(joints_texture), tuple(feedback), tuple(features))
        p = self._mesh.get(key)
        if p is None:
            defines = tuple(d for d, on in zip(("ALPHA_MASK", "OUTLINE", "JOINTS_TEXTURE"), key[:3]) if on)
            p = Program(self._ledger, "mesh.vert", "mesh.frag", defines=defines + key[4], feedback=key[3],
                        vert_includes=("contact.glsl",),
                        vert_extra=fragment_values.vertex_header() if self.flat_values else NO_FLAT_VALUES,
                        frag_header=fragment_values.fragment_header() if self.flat_values else None)
            p.set_samplers(u_joint_tex=UNIT_JOINTS, u_morph_tex=UNIT_MORPHS, u_contact_env_tex=UNIT_CONTACT,
                           **{f"u_{slot}_tex": unit for slot, unit in MATERIAL_UNITS.items()})
            self._mesh[key] = p
        return p

    @property
    def mesh_variants(self) -> int:
        """Mesh programs linked so far."""
        return len(self._mesh)

    def release(self) -> None:
        for p in (*self._mesh.values(), self.lines, self.quad):
            p.release()
