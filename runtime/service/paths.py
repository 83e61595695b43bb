"""Which files the service may load: the avatar, motion and hair folders, and requested
names resolved inside them (a path resolving outside its folder is refused with 403, symlinks
included; an unknown one 404; a malformed one 400). Listings show only what resolving accepts.
"""

from __future__ import annotations

from pathlib import Path

from .errors import BadRequest, Forbidden, NotFound

AVATAR_SUFFIXES = (".vrm", ".glb", ".gltf")
#: clips one ``FILE#A+B+...`` spec may name, and the length of a clip name
MAX_CLIP_NAMES = 64
MAX_NAME = 255
CLIP_SUFFIXES = (".vrma", ".glb", ".gltf", ".vrm", ".bvh")


def folder_files(folder: Path | None, suffixes) -> list[str]:
    """The files with one of ``suffixes`` under ``folder`` that :func:`resolve_avatar` /
    :func:`resolve_clip` would accept, as sorted paths relative to ``folder``: a symlink that
    leads outside the folder is not listed (it would be refused, 403). [] for None."""
    if folder is None:
        return []
    base = folder.resolve()
    out = []
    for p in folder.rglob("*"):
        target = p.resolve()             # what the loader checks: the file a link leads to
        if target.suffix.lower() in suffixes and target.is_file() and target.is_relative_to(base):
            out.append(str(p.relative_to(folder)))
    return sorted(out)


def resolve_avatar(avatar_dir: Path, requested: str) -> Path:
    """The avatar file ``requested`` inside ``avatar_dir``; raises BadRequest, Forbidden or
    NotFound otherwise."""
    if not isinstance(requested, str) or not requested or "\0" in requested:
        raise BadRequest("'path' must be a non-empty string without NUL bytes")
    base = avatar_dir.resolve()
    target = (base / requested).resolve()
    if not target.is_relative_to(base):
        raise Forbidden(f"{requested!r} is outside the avatar folder")
    if target.suffix.lower() not in AVATAR_SUFFIXES:
        raise BadRequest(f"{requested!r} is not a .vrm/.glb/.gltf file")
    if not target.is_file():
        raise NotFound(f"{requested!r} does not exist in the avatar folder")
    return target


def resolve_clip(motion_dir: Path | None, requested) -> str:
    """A clip spec for ``requested`` ("idle", "rest", "turn-test", "move-then-settle", or
    ``FILE[#Name...]`` inside ``motion_dir``); raises BadRequest, Forbidden or NotFound otherwise."""
    if not isinstance(requested, str) or not requested or "\0" in requested:
        raise BadRequest("'clip' must be a non-empty string without NUL bytes")
    if requested in ("idle", "rest", "turn-test", "move-then-settle"):
        return requested
    if motion_dir is None:
        raise Forbidden("no motion folder is configured (--motion-dir)")
    file, sep, names = requested.partition("#")
    if len(file) > 1024:
        raise BadRequest(f"a clip file name of {len(file)} characters is over the 1024 allowed")
    if sep:
        parts = names.split("+")
        if len(parts) > MAX_CLIP_NAMES:
            raise BadRequest(f"{len(parts)} clips in one spec are over the {MAX_CLIP_NAMES} allowed")
        if any(not p or len(p) > MAX_NAME for p in parts):
            raise BadRequest(f"every clip name after '#' must be 1..{MAX_NAME} characters")
    base = motion_dir.resolve()
    target = (base / file).resolve()
    if not target.is_relative_to(base):
        raise Forbidden(f"{file!r} is outside the motion folder")
    if target.suffix.lower() not in CLIP_SUFFIXES:
        raise BadRequest(f"{file!r} is not a {'/'.join(CLIP_SUFFIXES)} file")
    if not target.is_file():
        raise NotFound(f"{file!r} does not exist in the motion folder")
    return str(target) + sep + names


def resolve_style(hair_dirs: list[Path], requested) -> tuple[Path, str]:
    """(file, name) of the style ``requested`` — a style name (``<dir>/<name>/<name>.<ext>`` or
    ``<dir>/<name>.<ext>``) or a file path relative to a hair folder — inside ``hair_dirs``;
    raises Forbidden outside the folders, NotFound for an unknown one, BadRequest for a
    malformed one."""
    from avatars.hair.source import STYLE_SUFFIXES

    if not isinstance(requested, str) or not requested or "\0" in requested:
        raise BadRequest("'name' must be a non-empty string without NUL bytes, or null")
    if not hair_dirs:
        raise Forbidden("no hair folder is configured (--hair-dir)")
    bases = [d.resolve() for d in hair_dirs]
    path_like = "/" in requested or "\\" in requested or requested in (".", "..") or \
        Path(requested).suffix.lower() in STYLE_SUFFIXES
    if path_like:
        targets = [(b / requested).resolve() for b in bases]
        inside = [t for t, b in zip(targets, bases) if t.is_relative_to(b)]
        if not inside:
            raise Forbidden(f"{requested!r} is outside the hair folder")
        if inside[0].suffix.lower() not in STYLE_SUFFIXES:
            raise BadRequest(f"{requested!r} is not a {'/'.join(STYLE_SUFFIXES)} file")
        found = next((t for t in inside if t.is_file()), None)
        if found is None:
            raise NotFound(f"{requested!r} does not exist in the hair folder")
        return found, found.stem
    for b in bases:
        for suffix in STYLE_SUFFIXES:
            for cand in (b / requested / f"{requested}{suffix}", b / f"{requested}{suffix}"):
                if cand.is_file():
                    if not cand.resolve().is_relative_to(b):     # a link out of the folder
                        raise Forbidden(f"{requested!r} is outside the hair folder")
                    return cand, requested
    raise NotFound(f"no hair style named {requested!r} in the hair folder "
                       "(GET /hairstyles lists them)")


__all__ = ["AVATAR_SUFFIXES", "CLIP_SUFFIXES", "folder_files", "resolve_avatar", "resolve_clip", "resolve_style"]
