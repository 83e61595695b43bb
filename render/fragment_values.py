"""The values the mesh fragment shader reads from the Frame and Material blocks, handed to it
as flat varyings by the vertex shader (issue 20).

llvmpipe (Mesa 22.3 here) loads every uniform of a fragment shader lane by lane: a bounds
check and a scalar gather per value and per pixel (``vpextrd``/``vpinsrd`` sequences were a
third of the fragment shader's samples in ``perf``). A full-screen quad reading ten vec4
uniforms cost 19-29 ms of CPU at 1280×720; the same values as flat varyings 5.2-5.8 ms,
compile-time constants 4.4-4.6 ms (/tmp micro-benchmark in docs/history/runtime-notes.md, issue 20). A
flat varying is the provoking vertex's value, copied exactly: the fragment shader computes
what it computed before with the same bits, so images do not change.

:func:`vertex_header` (appended to mesh.vert's preamble) declares ``flat out`` variables
and ``pass_fragment_values()``, which copies the block members into them;
:func:`fragment_header` (mesh.frag's preamble, instead of the blocks) declares the ``flat in``
variables and ``#define``s the block members' names to them, plus ``slot_transform`` and
``slot_uv`` over the flat rows of each sampled slot's uv transform. Members the fragment
shader does not read for a program's features are eliminated by the GLSL linker; the uv
transform rows exist only for the slots the program samples (``HAS_<SLOT>_TEX``).
"""

from __future__ import annotations

from functools import lru_cache

from .materials import TEXTURE_SLOTS

#: (flat variable, GLSL type, value in the vertex shader, name mesh.frag reads)
VALUES = (
    ("f_base_color", "vec4", "m_base_color", "m_base_color"),
    ("f_shade_color", "vec4", "m_shade_color", "m_shade_color"),
    ("f_rim_color", "vec4", "m_rim_color", "m_rim_color"),
    ("f_emissive", "vec4", "m_emissive", "m_emissive"),
    ("f_outline_color", "vec4", "m_outline_color", "m_outline_color"),
    ("f_matcap_color", "vec4", "m_matcap_color", "m_matcap_color"),
    ("f_params0", "vec4", "m_params0", "m_params0"),
    ("f_params1", "vec4", "m_params1", "m_params1"),
    ("f_uv_anim", "vec4", "m_uv_anim", "m_uv_anim"),
    ("f_flags", "ivec4", "m_flags", "m_flags"),
    ("f_camera_pos", "vec4", "u_camera_pos", "u_camera_pos"),
    ("f_light_dir", "vec4", "u_light_dir", "u_light_dir"),
    ("f_light_color", "vec4", "u_light_color", "u_light_color"),
    ("f_ambient", "vec4", "u_ambient", "u_ambient"),
    ("f_view0", "vec4", "u_view[0]", None),      # u_view: mat4 of the three columns (matcap)
    ("f_view1", "vec4", "u_view[1]", None),
    ("f_view2", "vec4", "u_view[2]", None),
)


def _slot_rows():
    for k, slot in enumerate(TEXTURE_SLOTS):
        yield k, slot, f"HAS_{slot.upper()}_TEX", f"f_xf_{slot}0", f"f_xf_{slot}1"


@lru_cache(maxsize=None)
def vertex_header() -> str:
    """GLSL for mesh.vert (after common.glsl): the ``flat out`` values and
    ``pass_fragment_values()``."""
    lines = ["// flat values for mesh.frag (render/fragment_values.py)"]
    lines += [f"flat out {t} {name};" for name, t, _, _ in VALUES]
    for _, _, guard, r0, r1 in _slot_rows():
        lines += [f"#ifdef {guard}", f"flat out vec4 {r0};", f"flat out vec4 {r1};", "#endif"]
    lines.append("void pass_fragment_values() {")
    lines += [f"    {name} = {src};" for name, _, src, _ in VALUES]
    for k, _, guard, r0, r1 in _slot_rows():
        lines += [f"#ifdef {guard}", f"    {r0} = m_tex_xform[{2 * k}];", f"    {r1} = m_tex_xform[{2 * k + 1}];",
                  "#endif"]
    lines.append("}")
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=None)
def fragment_header() -> str:
    """GLSL for mesh.frag (instead of common.glsl's blocks): the ``flat in`` values under the
    block members' names, the texture slot numbers, ``slot_transform`` and ``slot_uv``."""
    lines = ["// Frame and Material values as flat inputs (render/fragment_values.py)"]
    lines += [f"flat in {t} {name};" for name, t, _, _ in VALUES]
    lines += [f"#define {read} {name}" for name, _, _, read in VALUES if read]
    lines.append("#define u_view mat4(f_view0, f_view1, f_view2, vec4(0.0, 0.0, 0.0, 1.0))")
    for k, slot, guard, r0, r1 in _slot_rows():
        lines.append(f"#define TEX_{slot.upper()} {k}")
        lines += [f"#ifdef {guard}", f"flat in vec4 {r0};", f"flat in vec4 {r1};", "#endif"]
    lines += ["vec2 slot_transform(int k, vec2 uv) {", "    vec3 h = vec3(uv, 1.0);"]
    for k, _, guard, r0, r1 in _slot_rows():
        lines += [f"#ifdef {guard}", f"    if (k == {k}) return vec2(dot({r0}.xyz, h), dot({r1}.xyz, h));", "#endif"]
    lines += ["    return uv;", "}",
              "vec2 slot_uv(int k, vec2 uv0, vec2 uv1) {",
              "    return slot_transform(k, ((m_flags.z >> k) & 1) == 1 ? uv1 : uv0);", "}"]
    return "\n".join(lines) + "\n"


__all__ = ["VALUES", "fragment_header", "vertex_header"]
