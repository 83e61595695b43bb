"""Clip specs -> clips: ``FILE``, ``FILE#Name`` or ``FILE#A+B+C`` (a sequence), any source.

``.vrma`` -> :mod:`avatars.clips.vrma`; ``.bvh`` -> :mod:`avatars.clips.bvh`; ``.glb``,
``.gltf``, ``.vrm`` -> :mod:`avatars.clips.gltf_anim` (or VRMA when the file carries the
``VRMC_vrm_animation`` extension whatever its suffix). ``#Name`` picks an animation of a
file by name (glTF animations, VRMA); without it a file's first animation plays. A ``#``
that is part of the file name is kept when that file exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import AvatarError, did_you_mean
from ..gltf_io import read_document
from .model import Clip, ClipError

CLIP_SUFFIXES = (".vrma", ".glb", ".gltf", ".vrm", ".bvh")


@dataclass(frozen=True)
class ClipSpec:
    """A parsed spec: the file and the animation names asked for ([] for the first one)."""

    path: Path
    names: tuple[str, ...]

    def __str__(self) -> str:
        return str(self.path) + (("#" + "+".join(self.names)) if self.names else "")


def parse_spec(spec: str | Path) -> ClipSpec:
    """``FILE[#A[+B...]]`` -> :class:`ClipSpec` (the file is not opened).

    Raises:
        ClipError: an empty spec or an empty name (``FILE#``, ``FILE#A++B``).
    """
    text = str(spec)
    if not text:
        raise ClipError("", "", "empty clip spec")
    p = Path(text).expanduser()
    try:
        whole = p.exists()
    except OSError:                      # a name the OS refuses (too long): not one file
        whole = False
    if "#" not in text or whole:
        return ClipSpec(p, ())
    file, _, names = text.rpartition("#")
    parts = tuple(names.split("+"))
    if not all(parts):
        raise ClipError(file, "", f"clip spec {text!r}: empty clip name after '#'")
    return ClipSpec(Path(file).expanduser(), parts)


#: Extensions only an avatar (a model) carries: a glTF using any of them is a model even when
#: it also has animations (VRM 0.x ``VRM``; VRM 1.0's vrm, springBone, node constraint, MToon).
MODEL_EXTENSIONS = ("VRM", "VRMC_vrm", "VRMC_springBone", "VRMC_springBone_extended_collider",
                    "VRMC_node_constraint", "VRMC_materials_mtoon")


def model_extensions(doc_json: dict) -> list[str]:
    """The :data:`MODEL_EXTENSIONS` a glTF JSON uses: listed in ``extensionsUsed`` or present
    on the root, a node or a material (an exporter may forget the list), in that order."""
    def names(obj) -> list:
        ext = obj.get("extensions") if isinstance(obj, dict) else None
        return list(ext) if isinstance(ext, dict) else []

    used = doc_json.get("extensionsUsed")
    found = list(used) if isinstance(used, list) else []
    found += names(doc_json)
    for key in ("nodes", "materials"):
        items = doc_json.get(key)
        for item in items if isinstance(items, list) else ():
            found += names(item)
    return [e for e in MODEL_EXTENSIONS if e in found]


def is_clip_document(doc_json: dict) -> bool:
    """True for a glTF JSON that is a clip file: it has animations and uses none of the
    :data:`MODEL_EXTENSIONS` (an avatar with animations is an avatar), or it is a VRM
    Animation (``VRMC_vrm_animation``)."""
    if "VRMC_vrm_animation" in (doc_json.get("extensions") or {}):
        return True
    return bool(doc_json.get("animations")) and not model_extensions(doc_json)


def clip_names(path: str | Path) -> list[str]:
    """The names of the animations a glTF/GLB library holds (``FILE#Name`` plays one), read
    from its JSON only; [] for other files and for a file that cannot be read (listing
    never fails: loading one says why)."""
    p = Path(path)
    if p.suffix.lower() not in (".glb", ".gltf"):
        return []
    try:
        from ..gltf_io import read_document

        anims = read_document(p).json.get("animations") or []
    except Exception:  # noqa: BLE001 - a listing shows what it can
        return []
    return [str(a.get("name")) for a in anims if isinstance(a, dict) and isinstance(a.get("name"), str)
            and a.get("name")]


def load_file(path: str | Path, *, names: list[str] | None = None, bone_map=None,
              unit_scale: float | None = None) -> list[Clip]:
    """Every clip of a file, or those named in ``names`` (in that order).

    Raises:
        ClipError (an AvatarError): missing file, unknown suffix, a name not in the file, or
            anything the source's loader refuses (the glTF reader's own errors included).
    """
    try:
        return _load_file(path, names=names, bone_map=bone_map, unit_scale=unit_scale)
    except ClipError:
        raise
    except AvatarError as exc:          # the glTF reader's (accessors, nodes...): same words, clip type
        raise ClipError(exc.path, exc.element, exc.reason) from None


def _load_file(path, *, names, bone_map, unit_scale) -> list[Clip]:
    p = Path(path)
    if p.suffix.lower() not in CLIP_SUFFIXES:
        raise ClipError(p, "", f"not a clip file (known: {', '.join(CLIP_SUFFIXES)})")
    if not p.is_file():
        raise ClipError(p, "", "file does not exist" if not p.exists() else "not a regular file")
    data = p.read_bytes()
    if p.suffix.lower() == ".bvh":
        from .bvh import load_bvh

        if names and names != [p.stem]:
            raise ClipError(p, "", f"a BVH file holds one clip ({p.stem!r}); no clip named {names[0]!r}")
        return [load_bvh(p, data, unit_scale=unit_scale, bone_map=bone_map)]
    doc = read_document(p, data)
    if p.suffix.lower() == ".vrma" or "VRMC_vrm_animation" in (doc.json.get("extensions") or {}):
        from .vrma import load_vrma

        clips = load_vrma(p, doc=doc)
        if names is None:
            return clips
        by = {c.name: c for c in clips}
        missing = [n for n in names if n not in by]
        if missing:
            raise ClipError(p, "animations", f"no animation named {missing[0]!r} (the file has: "
                            f"{', '.join(repr(c.name) for c in clips)})" + did_you_mean(missing[0], by))
        return [by[n] for n in names]
    from .gltf_anim import load_gltf_clips

    return load_gltf_clips(p, names=names, bone_map=bone_map, doc=doc)


def load_clips(spec: str | Path | ClipSpec, *, bone_map=None, unit_scale: float | None = None) -> list[Clip]:
    """The clips a spec names: ``FILE`` -> its first animation; ``FILE#A+B`` -> A then B."""
    s = spec if isinstance(spec, ClipSpec) else parse_spec(spec)
    clips = load_file(s.path, names=list(s.names) if s.names else None, bone_map=bone_map, unit_scale=unit_scale)
    return clips if s.names else clips[:1]


def describe(clip: Clip) -> dict:
    """What ``swaycam inspect CLIP`` says of one clip (JSON-ready)."""
    from ..humanoid import REQUIRED_BONES

    return {
        "name": clip.name, "duration_s": round(clip.duration_s, 6), "keys": int(len(clip.times)),
        "frame_rate": clip.frame_rate, "loop": clip.loop, "bones": list(clip.bones),
        "missing_required_bones": [b for b in REQUIRED_BONES if b not in clip.rotations],
        "hips_translation": clip.hips_position is not None,
        "expressions": sorted(clip.expressions), "look_at": clip.look_at is not None,
        "node_tracks": sorted(clip.node_tracks), "notes": list(clip.notes),
        "bone_map": dict(clip.bone_nodes),
    }


def inspect_file(path: str | Path, *, bone_map=None, unit_scale: float | None = None) -> dict:
    """{"path", "clips": [describe(...)]} for every clip of a file."""
    clips = load_file(path, bone_map=bone_map, unit_scale=unit_scale)
    return {"path": str(path), "clips": [describe(c) for c in clips]}


def format_inspection(info: dict) -> str:
    """Text for ``swaycam inspect CLIP``."""
    lines = [f"{info['path']}: {len(info['clips'])} clip{'s' if len(info['clips']) != 1 else ''}"]
    for c in info["clips"]:
        miss = ", ".join(c["missing_required_bones"]) or "none"
        extra = []
        if c["expressions"]:
            extra.append(f"expressions {', '.join(c['expressions'])}")
        if c["look_at"]:
            extra.append("lookAt")
        if c["node_tracks"]:
            extra.append(f"{len(c['node_tracks'])} node tracks ({', '.join(c['node_tracks'][:4])}"
                         f"{'...' if len(c['node_tracks']) > 4 else ''})")
        lines.append(f"  {c['name']}: {c['duration_s']:.3f} s, {c['keys']} keys ({c['frame_rate']:g}/s)"
                     f"{', loop' if c['loop'] else ''}, {len(c['bones'])} bones, missing required: {miss}"
                     + (f"; {'; '.join(extra)}" if extra else ""))
        for n in c["notes"]:
            lines.append(f"    note: {n}")
        if c.get("bone_map"):
            pairs = [f"{b} <- {j}" for b, j in c["bone_map"].items()]
            lines.append("    bones: " + ", ".join(pairs))
    return "\n".join(lines)


def spec_json(spec: ClipSpec) -> str:
    return json.dumps(str(spec))
