"""The ``swaycam`` command line.

Subcommands live next to what they drive; each module exposes
``add_parser(subparsers)`` which registers its subcommand(s) with ``func=handler`` where
``handler(args) -> int`` is the exit code. This module only collects them.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

#: Modules contributing subcommands, in help order.
COMMAND_MODULES = (
    "runtime.cli.run",
    "runtime.cli.replay",
    "runtime.cli.track",
    "runtime.cli.inspect",
    "runtime.cli.metrics",
    "runtime.cli.bench",
    "runtime.cli.hair",
)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="swaycam",
        description="Realtime webcam avatar runtime: MediaPipe head tracking, VRM avatars, "
        "frame-rate independent hair springs, OpenGL output.",
    )
    ap.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue  # that part of swaycam is not built yet
            raise
        mod.add_parser(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.verbose == 0:
        # MediaPipe / TensorFlow Lite print INFO and W0000 lines on stderr for every tracker
        os.environ.setdefault("GLOG_minloglevel", "2")
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        # OpenCV prints several lines of backend warnings before our one-line camera error
        os.environ.setdefault("OPENCV_LOG_LEVEL", "OFF")
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        ap.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
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
    return main(argv)

