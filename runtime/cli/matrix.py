"""``swaycam matrix``: the quality matrix (every avatar × hairstyle × clip × solver), resumable."""

from __future__ import annotations

import argparse
import sys

from .args import (CommandError, UsageError, add_command, add_json_option, count, existing_dir, frame_rates, number,
                   print_json)

_DESCRIPTION = """Measure every cell (avatar, hairstyle, clip, solver) of a matrix with the hair-quality
measures of 'swaycam metrics' and the fps identity across render rates.

The measures: stretch, settle, root drift, penetration and rest arc as 'swaycam metrics', the
scalp drift and head penetration of fitted styles on the head turn, and the fps identity (the
largest hair difference between replays at the frame rates, 0 = identical). Results go to --out: one file per
finished cell (a re-run skips them; an interrupted run loses only the cells in flight),
results.parquet (measured columns), timings.parquet (wall clock) and report/index.html.

Axes come from --preset (quick, full), --spec FILE.toml, or the options below (an option replaces
that axis of the preset or file). Paths may start with 'assets:' (the shared assets folder).

    swaycam matrix --preset quick
    swaycam matrix --avatar default --hair none --hair bob01 --clip turn-test --solver legacy
    swaycam matrix --preset full --ray                  # a local Ray
    swaycam matrix --preset full --ray 10.0.0.5:6379    # an existing Ray cluster"""


def _jittered(text: str) -> tuple:
    if text == "none":
        return ()
    try:
        out = []
        for part in text.split(","):
            fps, jitter, seed = part.split(":")
            out.append((float(fps), float(jitter), int(seed)))
        return tuple(out)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected FPS:JITTER:SEED[,...] or 'none'") from None


def add_parser(sub) -> None:
    p = add_command(sub, "matrix", run, help="quality matrix: every avatar x hairstyle x clip x solver, resumable",
                    description=_DESCRIPTION)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", metavar="NAME", help="a checked-in matrix: quick (minutes) or full (hours)")
    src.add_argument("--spec", metavar="FILE.toml", help="a TOML file with a [matrix] table")
    p.add_argument("--avatar", action="append", metavar="AVATAR",
                   help="a file, a folder, or default / layered / godette; repeatable (default: default)")
    p.add_argument("--hair", action="append", metavar="STYLE",
                   help="none (the avatar's own hair), a style name, a file, or all; repeatable (default: none)")
    p.add_argument("--clip", action="append", metavar="CLIP",
                   help="turn-test, idle, FILE#Name, or FILE (all its clips); repeatable (default: turn-test)")
    p.add_argument("--solver", action="append", metavar="SOLVER", help="repeatable (default: rest-shape)")
    p.add_argument("--rates", type=frame_rates, metavar="FPS,...", help="render rates of the fps identity "
                   "(default 24,30,60,120,144)")
    p.add_argument("--jittered", type=_jittered, metavar="FPS:JITTER:SEED,...",
                   help="jittered replays of the fps identity, or none (default 60:0.5:1,30:0.9:2,144:0.95:3)")
    p.add_argument("--duration", type=number(0.0, 3600.0, lo_open=True), metavar="S",
                   help="seconds of motion (default as swaycam metrics: 4 s head turn, a looping clip repeated "
                   "to 4 s, a one-shot once)")
    p.add_argument("--settle", type=number(2.0, 3600.0), metavar="S", help="seconds still after the motion (default 8)")
    p.add_argument("--hair-dir", type=existing_dir, metavar="DIR", help="the hair folder for style names")
    p.add_argument("--out", metavar="DIR", default="out/matrix", help="the results folder (default out/matrix)")
    p.add_argument("--workers", type=count(1, 4096), metavar="N",
                   help="worker processes (default: the core count)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="run on Ray: a local one, or the cluster at ADDRESS (needs swaycam[cluster])")
    p.add_argument("--retry-failed", action="store_true", help="run stored failed cells again")
    p.add_argument("--thumbnails", type=count(0, 100), default=6, metavar="K",
                   help="draw the worst frame of the K worst cells, 0 for none (default 6)")
    p.add_argument("--no-report", action="store_true", help="write the tables only, no HTML report")
    p.add_argument("--list", action="store_true", help="print the cells and their keys; run nothing")
    add_json_option(p, "the run's summary")


def _axes(args):
    from ..eval.matrix.axes import Axes, load_toml, preset_path

    if args.preset:
        axes = load_toml(preset_path(args.preset))
    elif args.spec:
        axes = load_toml(args.spec)
    else:
        axes = Axes()
    return axes.override(avatars=args.avatar, hairstyles=args.hair, clips=args.clip, solvers=args.solver,
                         rates=args.rates, jittered=args.jittered, duration_s=args.duration, settle_s=args.settle,
                         hair_dir=args.hair_dir)


def run(args) -> int:
    from ..eval.matrix.axes import SpecError, expand
    from ..eval.matrix.progress import Progress
    from ..eval.matrix.run import run_matrix
    from ..schedule import sigterm_as_interrupt
    from .args import writable_folder

    try:
        axes = _axes(args)
        cells = expand(axes)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot read the matrix spec: {exc}") from None
    if args.list:
        for c in cells:
            print(f"{c.key[:16]}  {c.label}")
        print(f"{len(cells)} cells", file=sys.stderr)
        return 0
    writable_folder(args.out)
    if args.ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise CommandError("--ray needs Ray: pip install 'swaycam[cluster]'") from None
        from ..eval.matrix.executors import RayExecutor

        executor = RayExecutor(None if args.ray == "local" else args.ray, args.workers)
    else:
        from ..eval.matrix.executors import PoolExecutor

        executor = PoolExecutor(args.workers)
    progress = Progress(len(cells), sys.stderr)
    guard = sigterm_as_interrupt()         # SIGTERM / SIGHUP as Ctrl-C: end the workers, write the tables
    try:
        with guard:
            summary, results = run_matrix(cells, args.out, executor, progress=progress,
                                          retry_failed=args.retry_failed, axes=axes)
    except KeyboardInterrupt:
        print(f"swaycam matrix: interrupted; the finished cells are in {args.out}", file=sys.stderr)
        return 128 + (guard.received or 2)
    if not args.no_report:
        from ..eval.matrix.report import write_report

        summary.report = write_report(args.out, cells, results, thumbnails=args.thumbnails)
    failed = sum(row["status"] == "error" for row, _ in results)
    if args.json:
        print_json({**summary.as_dict(), "failed_rows": failed})
    else:
        print(f"{summary.total} cells: {summary.cached} cached, {summary.computed} computed "
              f"({summary.failed} failed) in {summary.seconds:.1f} s; {failed} failed rows; {summary.results}"
              + (f"; report {summary.report}" if summary.report else ""))
    return 1 if failed else 0
