"""``swaycam metrics``: the hair-quality table for avatars and solvers."""

from __future__ import annotations

import math
import sys

from solver.modes import SOLVER_NAMES, SolverMode


def add_parser(sub) -> None:
    p = sub.add_parser("metrics", help="hair quality table: stretch, settle, penetration, rest arc, fps check",
                       description="The standard run (head turn: 4 s of motion, 8 s still; physics 120 Hz; mesh "
                       "sampled at 30 Hz) per avatar and solver: p99 edge stretch, worst edge, tip settle, root "
                       "drift, collider penetration, tip deviation from the rest arc, frame-rate consistency, "
                       "and timing. Writes hair_metrics.md, hair_metrics.json and plots into --out.")
    p.add_argument("--avatar", action="append",
                   help="avatar file, or 'default' / 'layered' (repeatable; default: Godette if the shared "
                   "assets are present, the generated default and layered avatars)")
    p.add_argument("--solver", action="append", choices=SOLVER_NAMES,
                   help="solver (repeatable; default rest-shape and legacy)")
    p.add_argument("--track", help="a pose track .jsonl instead of the standard head turn")
    p.add_argument("--out", default="out/metrics", help="output folder (default out/metrics)")
    p.add_argument("--gravity", type=float, metavar="G",
                   help="gravity in m/s² (straight down) for every spring instead of each file's own; "
                   "without --avatar the default set already adds a Godette run at 9.81")
    p.add_argument("--no-fps-check", action="store_true", help="skip the frame-rate consistency replays")
    p.set_defaults(func=run)


#: The default set's extra run: Godette's file sets no gravity on its springs.
EARTH_G = 9.81


def _avatars(specs, gravity=None):
    """{row name: avatar, or (avatar, [hair] settings) when a gravity replaces the file's}."""
    from pathlib import Path

    from avatars import load_avatar
    from avatars.assets import GODETTE, find_asset
    from avatars.generate import default_avatar_path, layered_avatar_path

    runs = [(s, gravity) for s in specs or ()]
    if not specs:
        godette = find_asset(*GODETTE)
        if godette is not None:
            runs.append((str(godette), gravity))
            if gravity is None:
                runs.append((str(godette), EARTH_G))
        runs += [("default", gravity), ("layered", gravity)]
    loaded, out = {}, {}
    for s, g in runs:
        if s not in loaded:
            loaded[s] = load_avatar(default_avatar_path() if s == "default" else
                                    layered_avatar_path() if s == "layered" else s)
        a = loaded[s]
        name = {"default": "swaycam default", "layered": "swaycam layered"}.get(s, a.meta.name or Path(s).stem)
        if g is None:
            out[name] = a
        else:
            out[f"{name}, g = {g:g} m/s²"] = (a, {"gravity": [0.0, -g, 0.0]})
    return out


def run(args) -> int:
    from avatars import AvatarError
    from tracking.errors import TrackingError
    from tracking.track_io import load_track

    from ..hair_quality import measure, write_report

    try:
        if args.gravity is not None and not math.isfinite(args.gravity):
            raise ValueError(f"--gravity: {args.gravity} is not a finite number")
        avatars = _avatars(args.avatar, args.gravity)
        track = load_track(args.track) if args.track else None
    except (AvatarError, TrackingError, ValueError) as exc:
        print(f"swaycam metrics: {exc}", file=sys.stderr)
        return 1
    bare = [name for name, e in avatars.items()
            if not (a := e[0] if isinstance(e, tuple) else e).springs or a.head_node() < 0]
    if bare:
        print(f"swaycam metrics: {', '.join(bare)}: no spring bones or no humanoid head; nothing to measure",
              file=sys.stderr)
        return 1
    rows = measure(avatars, tuple(args.solver or (SolverMode.REST_SHAPE, SolverMode.LEGACY)), track=track,
                   fps_check=not args.no_fps_check)
    try:
        files = write_report(rows, args.out, title=f"pose track {args.track}" if args.track else None)
    except OSError as exc:
        print(f"swaycam metrics: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(files["markdown"].read_text())
    print(f"written: {files['markdown']}, {files['json']}, " + ", ".join(str(p) for p in files["plots"]))
    return 0
