"""``python -m avatars.generate [--out DIR]``: generate the built-in avatars.

Without ``--out`` the files are generated into the cache (if not there yet) and their
paths printed; with ``--out`` they are written to ``DIR/swaycam-default.vrm`` and
``DIR/swaycam-layered.vrm``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import build_default_avatar, build_layered_avatar, default_avatar_path, layered_avatar_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m avatars.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the .vrm files into this folder instead of the cache")
    args = parser.parse_args(argv)
    if args.out is None:
        paths = [default_avatar_path(), layered_avatar_path()]
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        paths = []
        for stem, build in (("swaycam-default", build_default_avatar), ("swaycam-layered", build_layered_avatar)):
            path = args.out / f"{stem}.vrm"
            path.write_bytes(build())
            paths.append(path)
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
