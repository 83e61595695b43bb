"""``swaycam inspect [AVATAR] [--json]``: what an avatar file contains."""

from __future__ import annotations

from .args import add_command, add_json_option, avatar_path, avatar_spec, print_json


def add_parser(sub) -> None:
    p = add_command(sub, "inspect", run, help="describe an avatar file (VRM 0.x/1.0, glTF)",
                    description="Version, meta and license, humanoid coverage, meshes, materials, expressions, "
                    "springs, colliders and every warning of an avatar file.")
    p.add_argument("avatar", nargs="?", type=avatar_spec, metavar="AVATAR",
                   help="a .vrm/.glb/.gltf file, or 'default' / 'layered' (default: the generated default avatar)")
    add_json_option(p, "the description")


def run(args) -> int:
    from avatars import load_avatar
    from avatars.inspect import format_summary, summarize

    summary = summarize(load_avatar(avatar_path(args.avatar)))
    if args.json:
        print_json(summary)
    else:
        print(format_summary(summary))
    return 0
