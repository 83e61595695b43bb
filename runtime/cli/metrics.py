"""``swaycam metrics``: the hair-quality table for avatars and solvers."""

from __future__ import annotations

from solver.modes import SolverMode

from .args import (
    CommandError,
    UsageError,
    add_avatar_option,
    add_command,
    add_motion_options,
    add_out_option,
    add_solver_option,
    avatar_path,
    cannot_write,
    existing_file,
    motion_setup,
    number,
)


def add_parser(sub) -> None:
    p = add_command(sub, "metrics", run,
                    help="hair quality table: stretch, settle, penetration, rest arc, fps check",
                    description="The standard run (head turn: 4 s of motion, 8 s still; physics 120 Hz; mesh "
                    "sampled at 30 Hz) per avatar and solver: p99 edge stretch, worst edge, tip settle, root "
                    "drift, collider penetration, tip deviation from the rest arc, frame-rate consistency, and "
                    "timing. Writes hair_metrics.md, hair_metrics.json and plots into --out.")
    add_avatar_option(p, repeat=True, default_text="Godette if the shared assets are present, the generated "
                      "default and layered avatars")
    add_solver_option(p, repeat=True, default_text="rest-shape and legacy")
    p.add_argument("--track", type=existing_file, metavar="POSES.jsonl",
                   help="a pose track instead of the standard head turn")
    add_out_option(p, what="the report and plots into DIR", default="out/metrics")
    p.add_argument("--gravity", type=number(), metavar="G",
                   help="gravity in m/s² (straight down) for every spring instead of each file's own; "
                   "without --avatar the default set already adds a Godette run at 9.81")
    p.add_argument("--no-fps-check", action="store_true", help="skip the frame-rate consistency replays")
    add_motion_options(p, default="none", in_place_default=False)
    p.epilog = ("With --motion FILE#A,B+C (a row per comma: A, then the sequence B then C), each row is the head "
                "still and the body playing the clip (loops repeated to 4 s), then 8 s at rest; the links-inside "
                "and depth columns are the hair against the body colliders and torso capsule during the clip.")


#: The default set's extra run: Godette's file sets no gravity on its springs.
EARTH_G = 9.81


def _avatars(specs, gravity=None):
    """{row name: avatar, or (avatar, [hair] settings) when a gravity replaces the file's}."""
    from pathlib import Path

    from avatars import load_avatar
    from avatars.assets import GODETTE, find_asset

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
            loaded[s] = load_avatar(avatar_path(s))
        a = loaded[s]
        name = {"default": "swaycam default", "layered": "swaycam layered"}.get(s, a.meta.name or Path(s).stem)
        if g is None:
            out[name] = a
        else:
            out[f"{name}, g = {g:g} m/s²"] = (a, {"gravity": [0.0, -g, 0.0]})
    return out


def run(args) -> int:
    from tracking.track_io import load_track

    from ..eval.hair_quality import measure, write_report

    if args.track and args.motion not in (None, "none"):
        raise UsageError("--track and --motion: a motion row keeps the head still; give one of them")

    avatars = _avatars(args.avatar, args.gravity)
    track = load_track(args.track) if args.track else None
    bare = [name for name, e in avatars.items()
            if not (a := e[0] if isinstance(e, tuple) else e).springs or a.head_node() < 0]
    if bare:
        raise CommandError(f"{', '.join(bare)}: no spring bones or no humanoid head; nothing to measure")
    setups = []
    spec = args.motion or "none"
    file, _, names = spec.rpartition("#") if "#" in spec and "," in spec.rpartition("#")[2] else (spec, "", "")
    for one in ([f"{file}#{n}" for n in names.split(",")] if names else [spec]):
        args.motion = one
        setup = motion_setup(args, default="none", in_place_default=False)
        if setup is not None:
            setups.append(setup)
    motions = None
    if setups:
        motions = {s.label: s for s in setups}
    rows = measure(avatars, tuple(args.solver or (SolverMode.REST_SHAPE, SolverMode.LEGACY)), track=track,
                   fps_check=not args.no_fps_check, motions=motions)
    title = f"pose track {args.track}" if args.track else None
    if motions:
        title = f"body motion {', '.join(motions)}: each clip (loops to 4 s), then 8 s at rest; head still"
    try:
        files = write_report(rows, args.out, title=title)
    except OSError as exc:
        raise cannot_write(args.out, exc) from None
    print(files["markdown"].read_text())
    print(f"written: {files['markdown']}, {files['json']}, " + ", ".join(str(p) for p in files["plots"]))
    return 0
