"""``swaycam inspect [FILE] [--json]``: what an avatar file or a motion clip file contains."""

from __future__ import annotations

from pathlib import Path

from .args import BUILTIN_AVATARS, add_command, add_json_option, avatar_path, existing_file, positive, print_json


def add_parser(sub) -> None:
    p = add_command(sub, "inspect", run, help="describe an avatar file (VRM 0.x/1.0, glTF) or a motion clip file",
                    description="An avatar: version, meta and license, humanoid coverage, meshes, materials, "
                    "expressions, springs, colliders and every warning. A clip file (.vrma, .bvh, or a .glb/.gltf "
                    "with animations; FILE#NAME for one clip): its clips with durations, key rates, loop flags, "
                    "the humanoid bones covered, the VRM-required bones missing, expression/lookAt/node tracks and "
                    "what was assumed while loading.")
    p.add_argument("avatar", nargs="?", type=_avatar_or_clip, metavar="AVATAR",
                   help="a .vrm/.glb/.gltf avatar, 'default' / 'layered' (the generated avatars), or a clip file "
                   "(.vrma/.bvh/.glb/.gltf[#NAME]) (default: the generated default avatar)")
    p.add_argument("--clips", action="store_true", help="read a .glb/.gltf/.vrm as a clip file even without animations "
                   "(an error then says so)")
    p.add_argument("--bone-map", type=existing_file, metavar="FILE", help="bone map for a clip (JSON/TOML)")
    p.add_argument("--bvh-scale", type=positive(), metavar="M", help="metres per BVH unit (default: guessed)")
    add_json_option(p, "the description")


def _avatar_or_clip(text: str) -> str:
    """An avatar spec, or a clip spec ``FILE[#NAME...]`` whose file exists (returned as given;
    argparse's error names what is missing)."""
    if text in BUILTIN_AVATARS or Path(text).expanduser().is_file():
        return text
    file, sep, _ = text.rpartition("#")
    existing_file(file if sep and not Path(text).expanduser().exists() else text)
    return text


def _is_clip_file(spec: str, force: bool) -> bool:
    from avatars.clips import CLIP_SUFFIXES, parse_spec
    from avatars.clips.load import is_clip_document
    from avatars.gltf_io import read_document

    p = parse_spec(spec).path
    suffix = p.suffix.lower()
    if suffix in (".vrma", ".bvh") or "#" in spec and not Path(spec).exists():
        return True
    if force:
        return True
    if suffix not in CLIP_SUFFIXES or suffix == ".vrm":
        return False
    return is_clip_document(read_document(p).json)


def run(args) -> int:
    from avatars import load_avatar
    from avatars.inspect import format_summary, summarize

    spec = args.avatar
    if spec not in (None, *BUILTIN_AVATARS):
        if _is_clip_file(spec, args.clips):
            return _clips(args, spec)
    summary = summarize(load_avatar(avatar_path(spec)))
    if args.json:
        print_json(summary)
    else:
        print(format_summary(summary))
    return 0


def _clips(args, spec: str) -> int:
    from avatars.clips import describe, format_inspection, inspect_file, load_clips, parse_spec

    s = parse_spec(spec)
    if s.names:
        clips = load_clips(s, bone_map=args.bone_map, unit_scale=args.bvh_scale)
        info = {"path": str(s.path), "clips": [describe(c) for c in clips]}
    else:
        info = inspect_file(s.path, bone_map=args.bone_map, unit_scale=args.bvh_scale)
    if args.json:
        print_json(info)
    else:
        print(format_inspection(info))
    return 0
