"""``swaycam generate [--out DIR]``: the built-in avatars (the default and the layered one)."""

from __future__ import annotations

from .args import add_command, add_out_option, cannot_write


def add_parser(sub) -> None:
    p = add_command(sub, "generate", run, help="generate the built-in avatars (default and layered VRM 1.0 files)",
                    description="Generate swaycam's own avatars: the default one (teal hair on spring chains, "
                    "colliders, expressions, MToon) and the layered stress variant (26 hair chains, 12,000+ hair "
                    "vertices). Without --out they go to the cache that 'swaycam run' and the other commands "
                    "use (generated once; nothing is done when they are there already); the paths are printed, "
                    "one per line.")
    add_out_option(p, what="swaycam-default.vrm and swaycam-layered.vrm into DIR (created if missing) "
                   "instead of the cache")


def run(args) -> int:
    from avatars.generate import cached_avatar_paths, write_avatars

    if args.out is None:
        paths = cached_avatar_paths()
    else:
        try:
            paths = write_avatars(args.out)
        except OSError as exc:
            raise cannot_write(args.out, exc) from None
    for p in paths:
        print(p)
    return 0
