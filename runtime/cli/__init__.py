"""The ``swaycam`` command line: one module per command, one argparse convention.

Each module listed in :data:`COMMAND_MODULES` exposes ``add_parser(subparsers)``, which
registers its command through :func:`runtime.cli.args.add_command` with ``func=handler``
(``handler(args) -> int`` is the exit code) and declares its options with the shared types
of :mod:`runtime.cli.args`. This module only collects them and turns a handler's errors
into one line ``swaycam COMMAND: message`` on stderr (exit code 1 for a runtime failure, 2
for a usage error).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import sys
import time

#: ``time.perf_counter()`` when the command started (this package imported): the zero of the
#: start-up times logged with ``-v`` (``swaycam run``'s first frame).
STARTED = time.perf_counter()

from .args import USAGE, CommandError, Parser  # noqa: E402 - after STARTED

#: Modules contributing commands, in help order. Every one is imported: a module that
#: fails to import is an error, never a command that quietly disappears.
COMMAND_MODULES = (
    "runtime.cli.run",
    "runtime.cli.track",
    "runtime.cli.replay",
    "runtime.cli.check_fps",
    "runtime.cli.inspect",
    "runtime.cli.metrics",
    "runtime.cli.matrix",
    "runtime.cli.generate",
    "runtime.cli.bench",
    "runtime.cli.hair",
    "runtime.cli.compare_render",
    "runtime.cli.calibrate",
    "runtime.cli.fuzz",
    "runtime.cli.soak",
)


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(
        prog="swaycam",
        description="Realtime webcam avatar runtime: MediaPipe head tracking, VRM avatars, "
        "frame-rate independent hair springs, OpenGL output.",
        epilog="'swaycam COMMAND --help' describes a command. Exit codes: 0 success, 1 failure, 2 usage "
        "error, 130 interrupted.",
    )
    ap.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return ap


def _expected_errors() -> tuple[type[Exception], ...]:
    """Failures a handler may let through: reported as one line, exit code 1."""
    from avatars import AvatarError
    from tracking.errors import TrackingError

    return (AvatarError, TrackingError)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the command, return its exit code
    (also for ``--help``, 0, and usage errors, 2: this never raises SystemExit)."""
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:          # --help, or a usage error already printed
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else USAGE)
    if args.verbose == 0:
        # MediaPipe / TensorFlow Lite print INFO and W0000 lines on stderr for every tracker
        os.environ.setdefault("GLOG_minloglevel", "2")
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        # OpenCV prints several lines of backend warnings before our one-line camera error
        os.environ.setdefault("OPENCV_LOG_LEVEL", "OFF")
        # ...and its FFmpeg backend a raw libav line ("[mov,mp4,... @ 0x...] moov atom not found")
        # before our one-line "not a readable video" error (-8: AV_LOG_QUIET; read when
        # OpenCV first opens a video, so it must be set before that)
        os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        ap.print_help(sys.stderr)
        return USAGE
    try:
        return int(args.func(args))
    except CommandError as exc:
        print(f"{args.command_prog}: {exc}", file=sys.stderr)
        return exc.exit_code
    except _expected_errors() as exc:
        print(f"{args.command_prog}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `swaycam inspect --json | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def console_main() -> int:
    """The ``swaycam`` console script: :func:`main` with MediaPipe's native log lines kept
    off the console unless ``-v`` is given (:mod:`runtime.native_log`)."""
    import warnings

    argv = sys.argv[1:]
    if not any(a in ("-v", "-vv", "--verbose") for a in argv):
        from ..native_log import filter_native_stderr

        filter_native_stderr()
        # our warnings (e.g. a pose track cut off mid-line) as one line, without Python's source echo
        warnings.formatwarning = lambda message, category, *_a, **_k: f"swaycam: warning: {message}\n"
    code = main(argv)
    # The process ends next. The interpreter's last garbage collections would walk every object
    # left (numba's and LLVM's, MediaPipe's: 0.2-0.45 s after a run, issue 20) and find nothing
    # to release: the command closed its files, sinks, processes and contexts itself, and
    # atexit handlers still run. Frozen objects are skipped: a garbage cycle left now would not
    # run its finalizers (none holds unwritten data: outputs are closed by their owners).
    gc.freeze()
    return code

