"""``swaycam replay TRACK --fps N``: an offline replay of a pose track at one render rate."""

from __future__ import annotations

from solver.modes import SolverMode

from .args import (
    CommandError,
    add_avatar_option,
    add_command,
    add_motion_options,
    add_solver_option,
    avatar_path,
    cannot_write,
    fraction,
    load_pose_track,
    motion_setup,
    positive,
    track_spec,
    writable_file,
)

#: The body motion of replays and the frame-rate check unless --motion says otherwise.
DEFAULT_MOTION = "idle"


def add_parser(sub) -> None:
    p = add_command(sub, "replay", run, help="replay a pose track at a render rate; dump hair states per substep",
                    description="Offline replay of a pose track (.jsonl or 'turn-test') at --fps render frames "
                    "per second, physics at a fixed 120 Hz. --dump writes the hair tails and velocities after "
                    "every substep (npz: t_ns, tails, velocities).")
    p.add_argument("track", type=track_spec, help="pose track .jsonl, or 'turn-test'")
    p.add_argument("--fps", type=positive(1000), required=True, help="render rate, frames per second, (0, 1000]")
    add_avatar_option(p)
    add_solver_option(p, default=SolverMode.REST_SHAPE.value)
    p.add_argument("--jitter", type=fraction, default=0.0, help="frame-time jitter fraction, 0 <= j < 1 (default 0)")
    p.add_argument("--dump", metavar="STATES.npz", help="write the hair state of every substep")
    add_motion_options(p, default=DEFAULT_MOTION, in_place_default=False)


def load_inputs(args):
    """(avatar, pose track) of ``--avatar`` and the ``track`` argument (also ``swaycam check-fps``)."""
    from avatars import load_avatar

    return load_avatar(avatar_path(args.avatar)), load_pose_track(args.track)


def run(args) -> int:
    from ..replay import FOLDER_REASON, npz_path, replay

    if args.dump:      # checked before the replay: a bad path fails now, not after it
        try:
            writable_file(npz_path(args.dump), folder_reason=FOLDER_REASON)
        except IsADirectoryError as exc:
            raise cannot_write(args.dump, exc) from None
    avatar, track = load_inputs(args)
    motion = motion_setup(args, default=DEFAULT_MOTION, in_place_default=False)
    try:
        st = replay(avatar, track, args.fps, solver=args.solver, jitter=args.jitter, motion=motion)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print(f"{st.frames} frames at {args.fps:g} fps, {len(st.t_ns)} substeps, {st.tails.shape[1]} hair segments")
    if args.dump:
        try:
            written = st.save(args.dump)
        except OSError as exc:
            raise cannot_write(args.dump, exc) from None
        print(f"hair states: {written}")
    return 0
