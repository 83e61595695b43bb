"""``swaycam replay`` and ``swaycam check-fps``: offline replays of a pose track."""

from __future__ import annotations

import argparse
import json
import sys

from solver.modes import SOLVER_NAMES, SolverMode


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < v <= 1000:
        raise argparse.ArgumentTypeError(f"{text} is outside (0, 1000]")
    return v


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"{text} is outside [0, 1)")
    return v


def add_parser(sub) -> None:
    p = sub.add_parser("replay", help="replay a pose track at a render rate; dump hair states per substep",
                       description="Offline replay of a pose track (.jsonl or 'turn-test') at --fps render "
                       "frames per second, physics at a fixed 120 Hz. --dump writes the hair tails and "
                       "velocities after every substep (npz: t_ns, tails, velocities).")
    p.add_argument("track", help="pose track .jsonl, or 'turn-test'")
    p.add_argument("--fps", type=_positive, required=True, help="render rate, frames per second")
    p.add_argument("--avatar", help="avatar file (default: the generated swaycam avatar)")
    p.add_argument("--solver", default=SolverMode.REST_SHAPE.value, choices=SOLVER_NAMES)
    p.add_argument("--jitter", type=_fraction, default=0.0, help="frame-time jitter fraction, 0 <= j < 1")
    p.add_argument("--dump", metavar="STATES.npz", help="write the hair state of every substep")
    p.set_defaults(func=run_replay)

    c = sub.add_parser("check-fps", help="prove the hair is identical at 24/30/60/120/144 fps and with jitter",
                       description="Replays the track at 24, 30, 60, 120 and 144 fps and with jittered frame "
                       "times, and prints the maximum hair position and velocity differences at common "
                       "substeps. Exit code 1 unless every difference is exactly 0.")
    c.add_argument("track", help="pose track .jsonl, or 'turn-test'")
    c.add_argument("--avatar", help="avatar file (default: the generated swaycam avatar)")
    c.add_argument("--solver", default=SolverMode.REST_SHAPE.value, choices=SOLVER_NAMES)
    c.add_argument("--json", action="store_true", help="print the table as JSON")
    c.set_defaults(func=run_check)


def _load(args):
    from avatars import load_avatar
    from ..pose_inputs import head_turn_track
    from tracking.track_io import load_track

    if args.avatar:
        avatar = load_avatar(args.avatar)
    else:
        from avatars.generate import default_avatar_path

        avatar = load_avatar(default_avatar_path())
    track = head_turn_track() if args.track == "turn-test" else load_track(args.track)
    return avatar, track


def run_replay(args) -> int:
    from ..replay import replay

    loaded = _load_or_report(args, "replay")
    if loaded is None:
        return 1
    avatar, track = loaded
    try:
        st = replay(avatar, track, args.fps, solver=args.solver, jitter=args.jitter)
    except ValueError as exc:
        print(f"swaycam replay: {exc}", file=sys.stderr)
        return 1
    print(f"{st.frames} frames at {args.fps:g} fps, {len(st.t_ns)} substeps, {st.tails.shape[1]} hair segments")
    if args.dump:
        try:
            written = st.save(args.dump)
        except OSError as exc:
            print(f"swaycam replay: cannot write {args.dump}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"hair states: {written}")
    return 0


def _load_or_report(args, command: str):
    from avatars import AvatarError
    from tracking.errors import TrackingError

    try:
        return _load(args)
    except (AvatarError, TrackingError) as exc:
        print(f"swaycam {command}: {exc}", file=sys.stderr)
        return None


def run_check(args) -> int:
    from ..replay import check_fps, format_rows

    loaded = _load_or_report(args, "check-fps")
    if loaded is None:
        return 1
    avatar, track = loaded
    if not avatar.springs:
        print(f"swaycam check-fps: {avatar.path} has no spring bones: there is no hair to compare", file=sys.stderr)
        return 1
    try:
        rows = check_fps(avatar, track, solver=args.solver)
    except ValueError as exc:
        print(f"swaycam check-fps: {exc}", file=sys.stderr)
        return 1
    ok = all(r.max_position_diff == 0.0 and r.max_velocity_diff == 0.0 for r in rows)
    if args.json:
        print(json.dumps({"identical": ok, "rows": [r.__dict__ for r in rows]}, indent=2))
    else:
        print(format_rows(rows))
        print("identical at every common substep" if ok else "DIFFERENCES FOUND")
    return 0 if ok else 1
