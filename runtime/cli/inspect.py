"""``swaycam inspect FILE [--json]``: what an avatar file contains."""

from __future__ import annotations

import json
import sys

from avatars import AvatarError, load_avatar
from avatars.inspect import format_summary, summarize


def add_parser(sub) -> None:
    p = sub.add_parser("inspect", help="describe an avatar file (VRM 0.x/1.0, glTF)",
                       description="Version, meta and license, humanoid coverage, meshes, materials, "
                       "expressions, springs, colliders and every warning of an avatar file.")
    p.add_argument("file", nargs="?", help="a .vrm/.glb/.gltf file (default: the generated default avatar)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _default_path():
    from avatars.generate import default_avatar_path

    return default_avatar_path()


def run(args) -> int:
    path = args.file or _default_path()
    try:
        avatar = load_avatar(path)
    except AvatarError as exc:
        print(f"swaycam inspect: {exc}", file=sys.stderr)
        return 1
    summary = summarize(avatar)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_summary(summary))
    return 0
