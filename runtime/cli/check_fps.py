"""``swaycam check-fps TRACK``: the hair is identical at 24/30/60/120/144 fps and with jitter."""

from __future__ import annotations

from solver.modes import SolverMode

from .args import (
    CommandError,
    add_avatar_option,
    add_command,
    add_json_option,
    add_motion_options,
    add_solver_option,
    motion_setup,
    print_json,
    track_spec,
)
from .replay import DEFAULT_MOTION


def add_parser(sub) -> None:
    p = add_command(sub, "check-fps", run,
                    help="prove the hair is identical at 24/30/60/120/144 fps and with jitter",
                    description="Replays the track at 24, 30, 60, 120 and 144 fps and with jittered frame times, "
                    "and prints the maximum hair position and velocity differences at common substeps. Exit code "
                    "1 unless every difference is exactly 0. The body plays the generated idle unless --motion "
                    "says otherwise (a clip, 'rest' or 'none').")
    p.add_argument("track", type=track_spec, help="pose track .jsonl, or 'turn-test'")
    add_avatar_option(p)
    add_solver_option(p, default=SolverMode.REST_SHAPE.value)
    add_motion_options(p, default=DEFAULT_MOTION, in_place_default=False)
    add_json_option(p, "the table")


def run(args) -> int:
    from ..replay import check_fps, format_rows
    from .replay import load_inputs

    avatar, track = load_inputs(args)
    if not avatar.springs:
        raise CommandError(f"{avatar.path} has no spring bones: there is no hair to compare")
    motion = motion_setup(args, default=DEFAULT_MOTION, in_place_default=False)
    try:
        rows = check_fps(avatar, track, solver=args.solver, motion=motion)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    ok = all(r.max_position_diff == 0.0 and r.max_velocity_diff == 0.0 for r in rows)
    if args.json:
        print_json({"identical": ok, "rows": rows})
    else:
        print(format_rows(rows))
        print("identical at every common substep" if ok else "DIFFERENCES FOUND")
    return 0 if ok else 1
