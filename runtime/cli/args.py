"""The one argparse convention every ``swaycam`` command follows.

A command module in ``runtime/cli/`` has ``add_parser(subparsers)``, which registers its
command with :func:`add_command` (``func=handler``, where ``handler(args) -> int`` is the
exit code) and declares its options with the shared types below. Nothing else in the
repository parses a command line, except ``python -m tracking.face_model --ensure`` (the
Makefile set-up, which runs before the runtime is needed).

Exit codes and errors (printed by :func:`runtime.cli.main`, one line on stderr, as
``swaycam COMMAND: message``):

- 0 success; 130 (or 128 + signal) interrupted;
- 1 a runtime failure: a handler raises :class:`CommandError`, or lets an
  :class:`~avatars.AvatarError` / :class:`~tracking.errors.TrackingError` through;
- 2 a usage error: argparse's own errors (a bad option value, a missing argument) and
  :class:`UsageError` for what only the handler can check.

Help style: ``help`` is a short lower-case phrase without a final period (the command
list), ``description`` full sentences; option help is lower case and names its default as
``(default X)``. Paragraphs are wrapped; lines indented by four spaces (examples) are kept.

Units: degrees and milliseconds only here, at the edge; handlers convert before calling
into the packages (radians, seconds, nanoseconds inside).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

#: Exit codes.
OK, FAILURE, USAGE = 0, 1, 2

#: ``--avatar`` names of the generated avatars (:mod:`avatars.generate`).
BUILTIN_AVATARS = ("default", "layered")


class CommandError(Exception):
    """A runtime failure: ``swaycam COMMAND: message`` on stderr, exit code 1."""

    exit_code = FAILURE


class UsageError(CommandError):
    """A usage error found after parsing (e.g. two options that only work together): exit code 2."""

    exit_code = USAGE


class HelpFormatter(argparse.HelpFormatter):
    """Wraps paragraphs; keeps lines indented by four spaces (examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for block in text.strip("\n").split("\n\n"):
            lines = [ln for ln in block.splitlines() if ln.strip()]
            if lines and all(ln.startswith("    ") for ln in lines):
                blocks.append("\n".join(indent + ln for ln in block.splitlines()))
            else:
                blocks.append(super()._fill_text(block, width, indent))
        return "\n\n".join(blocks)


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: ``swaycam COMMAND: message (see 'swaycam COMMAND --help')``,
    exit code 2. Subcommand parsers inherit the class."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str, prog: str | None = None):
        prog = prog or self.prog
        self.exit(USAGE, f"{prog}: {message} (see '{prog} --help')\n")

    def parse_args(self, args=None, namespace=None):
        # argparse reports options no command knows at the top ("swaycam: unrecognized ...");
        # name the command they were given to instead
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}", getattr(namespace, "command_prog", None))
        return namespace


def add_command(subparsers, name: str, handler: Callable[[argparse.Namespace], int] | None, *, help: str,
                description: str | None = None, epilog: str | None = None) -> argparse.ArgumentParser:
    """Register command ``name`` on ``subparsers`` and return its parser.

    ``handler`` (None for a command that only has subcommands) becomes ``args.func``, and
    ``args.command_prog`` the name errors are reported under (``"swaycam bench solver"``).
    """
    p = subparsers.add_parser(name, help=help, description=description or f"{help[0].upper()}{help[1:]}.",
                              epilog=epilog, formatter_class=HelpFormatter)
    p.set_defaults(func=handler, command_prog=p.prog)
    return p


# ---------------------------------------------------------------------------- option types
# Each returns the converted value or raises argparse.ArgumentTypeError, whose message
# argparse prints after "argument --name: ".

def number(lo: float = -math.inf, hi: float = math.inf, *, lo_open: bool = False, hi_open: bool = False,
           integer: bool = False) -> Callable[[str], float]:
    """A finite number (an int when ``integer``) in the range lo..hi; ``lo_open``/``hi_open``
    exclude an end. The range is stated in the error: ``5000 is outside (0, 1000]``."""

    def convert(text: str):
        try:
            v = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'a whole' if integer else 'a'} number") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{text} is not a finite number")
        if (v <= lo if lo_open else v < lo) or (v >= hi if hi_open else v > hi):
            raise argparse.ArgumentTypeError(f"{text} is outside {_range_text(lo, hi, lo_open, hi_open)}")
        return v

    convert.__name__ = "integer" if integer else "number"
    return convert


def _range_text(lo, hi, lo_open, hi_open) -> str:
    if hi == math.inf:
        return f"{'>' if lo_open else '>='} {lo:.10g}"
    return f"{'(' if lo_open else '['}{lo:.10g}, {hi:.10g}{')' if hi_open else ']'}"


def positive(hi: float = math.inf) -> Callable[[str], float]:
    """A number > 0 and <= ``hi``."""
    return number(0.0, hi, lo_open=True)


def count(lo: int = 1, hi: float = math.inf) -> Callable[[str], int]:
    """A whole number lo..hi (frames, samples, faces)."""
    return number(lo, hi, integer=True)


#: A fraction in [0, 1) (e.g. frame-time jitter).
fraction = number(0.0, 1.0, hi_open=True)
fraction.__name__ = "fraction"


def frame_rates(text: str) -> tuple[float, ...]:
    """A comma-separated list of frame rates (``24,30,60``); the range is checked where they are used."""
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of frame rates") from None


def size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` in pixels within the limits of ``swaycam run --size`` -> (width, height)."""
    from ..config import ConfigError, parse_size

    try:
        return parse_size(text)
    except ConfigError:
        raise argparse.ArgumentTypeError(f"expected WxH between 16x16 and 7680x4320 (e.g. 640x360), "
                                         f"got {text!r}") from None


def background(text: str) -> str:
    """A background: ``transparent``, ``green`` (``chroma``) or ``#rrggbb`` (returned as given)."""
    from ..config import ConfigError, parse_background

    try:
        parse_background(text, "")
    except ConfigError:
        raise argparse.ArgumentTypeError(f"{text!r} is not 'transparent', 'green' or '#rrggbb'") from None
    return text


def existing_file(text: str) -> str:
    """A path that must be an existing file (returned as given)."""
    p = Path(text).expanduser()
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text!r} does not exist")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is not a file")
    return str(p)


def existing_dir(text: str) -> str:
    """A path that must be an existing folder (returned as given)."""
    p = Path(text).expanduser()
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a folder")
    return str(p)


def _file_or_name(text: str, names: tuple[str, ...]) -> str:
    """``text`` when it is one of ``names``, else an existing file; a missing one close to a
    name says so (``'turn-tset' does not exist (did you mean 'turn-test'?)``)."""
    if text in names:
        return text
    if not Path(text).expanduser().exists():
        from avatars.errors import did_you_mean

        raise argparse.ArgumentTypeError(f"{text!r} does not exist{did_you_mean(text, names)}")
    return existing_file(text)


def avatar_spec(text: str) -> str:
    """An avatar: ``default`` / ``layered`` (the generated ones) or an existing file."""
    return _file_or_name(text, BUILTIN_AVATARS)


def track_spec(text: str) -> str:
    """A pose track: ``turn-test`` (the standard head turn) or an existing ``.jsonl`` file."""
    from ..pose_inputs.track import TURN_TEST

    return _file_or_name(text, (TURN_TEST,))


# ---------------------------------------------------------------------------- shared options

def add_avatar_option(p, *, repeat: bool = False, default_text: str = "the generated default avatar") -> None:
    """``--avatar FILE|default|layered`` (repeatable when ``repeat``)."""
    p.add_argument("--avatar", type=avatar_spec, action="append" if repeat else "store", metavar="AVATAR",
                   help=f"a .vrm/.glb/.gltf file, or 'default' / 'layered' (the generated avatars)"
                   f"{'; repeatable' if repeat else ''} (default: {default_text})")


def add_solver_option(p, *, default: str | None = None, repeat: bool = False, default_text: str | None = None) -> None:
    """``--solver`` with the choices of :data:`solver.modes.SOLVER_NAMES`."""
    from solver.modes import SOLVER_NAMES

    p.add_argument("--solver", choices=SOLVER_NAMES, default=default, action="append" if repeat else "store",
                   help=f"hair solver{'; repeatable' if repeat else ''} (default {default_text or default})")


def add_face_model_options(p) -> None:
    """``--model PATH`` and ``--num-faces N``: the MediaPipe face landmarker's settings."""
    p.add_argument("--model", type=existing_file, metavar="PATH",
                   help="face_landmarker.task (default: $SWAYCAM_FACE_MODEL or the cached, verified one)")
    p.add_argument("--num-faces", type=count(1), default=4, metavar="N",
                   help="faces MediaPipe reports; one is chosen (default 4)")


def add_motion_options(p, *, default: str, in_place_default: bool) -> None:
    """The body motion options (an argument group): ``--motion``, ``--in-place`` /
    ``--no-in-place``, ``--motion-layer``, ``--motion-speed``, ``--loop`` / ``--once``,
    ``--bone-map``, ``--bvh-scale``. Read them with :func:`motion_values`."""
    from ..rig.motion_options import LAYERS

    g = p.add_argument_group("body motion")
    g.add_argument("--motion", metavar="CLIP", help="body motion: FILE[#NAME[+NAME...]] (.vrma, .glb/.gltf with a "
                   "humanoid skeleton, .bvh; #NAME picks an animation, A+B plays a sequence), 'idle' (the "
                   "generated breathing and sway), 'turn-test' (the standard head turn, repeated), 'move-then-settle' "
                   "(the turn then 8 s still, the settle time shown), 'rest' or 'none' (default " + default + ")")
    g.add_argument("--in-place", dest="in_place", action="store_true", default=None,
                   help="remove the clip's horizontal root motion" + (" (default)" if in_place_default else ""))
    g.add_argument("--no-in-place", dest="in_place", action="store_false",
                   help="keep root motion" + ("" if in_place_default else " (default)"))
    g.add_argument("--motion-layer", choices=LAYERS, help="tracking on the clip's head: additive (on top, default) "
                   "or override (tracking alone turns neck and head)")
    g.add_argument("--motion-speed", type=positive(10), metavar="X", help="playback speed (default 1)")
    g.add_argument("--loop", dest="loop", action="store_true", default=None,
                   help="loop the (last) clip even if it is a one-shot")
    g.add_argument("--once", dest="loop", action="store_false", help="play the (last) clip once, then the idle")
    g.add_argument("--bone-map", type=existing_file, metavar="FILE",
                   help="JSON/TOML {VRM bone: joint name} for a clip whose naming is not recognised")
    g.add_argument("--bvh-scale", type=positive(), metavar="M", help="metres per BVH unit (default: guessed)")


def motion_values(args) -> dict:
    """The ``[motion]`` settings given on the command line (only those given)."""
    out = {}
    for key, attr in (("clip", "motion"), ("in_place", "in_place"), ("layer", "motion_layer"),
                      ("speed", "motion_speed"), ("loop", "loop"), ("bone_map", "bone_map"), ("bvh_scale", "bvh_scale")):
        v = getattr(args, attr, None)
        if v is not None:
            out[key] = v
    return out


def motion_setup(args, *, default: str, in_place_default: bool):
    """``--motion`` and its options -> :class:`runtime.rig.MotionSetup` or None ("none").

    Raises:
        UsageError: a bad option combination; AvatarError (ClipError): the clip cannot be loaded.
    """
    from ..config import ConfigError, motion_options
    from ..rig.motion import load_motion

    values = {"clip": default, "in_place": in_place_default, **motion_values(args)}
    try:
        options = motion_options({k: v for k, v in values.items() if k not in ("clip", "loop", "bone_map",
                                                                                "bvh_scale")}, "option")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return load_motion(values["clip"], options=options, bone_map=values.get("bone_map"),
                       bvh_scale=values.get("bvh_scale"), loop=values.get("loop"))


def add_json_option(p, what: str = "the result") -> None:
    """``--json``: print ``what`` as one JSON document on stdout, and nothing else there."""
    p.add_argument("--json", action="store_true", help=f"print {what} as one JSON document instead of text")


def add_out_option(p, *, what: str, metavar: str = "DIR", default: str | None = None) -> None:
    """``--out PATH``: where a command writes its files (a folder is created when missing)."""
    p.add_argument("--out", metavar=metavar, default=default,
                   help=f"write {what}" + (f" (default {default})" if default else ""))


# ---------------------------------------------------------------------------- resolving values

def avatar_path(spec: str | None) -> Path:
    """The file of an avatar spec: None or ``default`` -> the generated default avatar,
    ``layered`` -> the generated layered one (both generated on first use), else the path."""
    if spec in (None, "default", "layered"):
        from avatars.generate import default_avatar_path, layered_avatar_path

        return layered_avatar_path() if spec == "layered" else default_avatar_path()
    return Path(spec)


def load_pose_track(spec: str):
    """A pose track spec -> :class:`~tracking.pose_track.PoseTrack`: ``turn-test`` or a JSONL file.

    Raises:
        TrackingError: the file is not a pose track (the message names the line).
    """
    from ..pose_inputs.track import TURN_TEST, head_turn_track

    if spec == TURN_TEST:
        return head_turn_track()
    from tracking.track_io import load_track

    return load_track(spec)


def json_text(obj) -> str:
    """``obj`` as one indented JSON document and a newline: the ``--json`` output of every
    command. Dataclasses become objects, tuples lists, numpy scalars and arrays numbers and
    lists, paths strings."""
    return json.dumps(obj, indent=2, default=_plain) + "\n"


def print_json(obj) -> None:
    """:func:`json_text` of ``obj`` on stdout."""
    sys.stdout.write(json_text(obj))
    sys.stdout.flush()


def _plain(obj):
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist"):          # numpy scalars and arrays
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def cannot_write(path, exc: OSError) -> CommandError:
    """The one wording of a failed write: ``cannot write PATH: reason``."""
    return CommandError(f"cannot write {path}: {exc.strerror or exc}")


def writable_file(path, **options) -> Path:
    """``path`` checked before a command's work starts (:func:`runtime.writable.check_file`:
    not a folder, its folder created and writable); a CommandError in :func:`cannot_write`'s
    words otherwise, so a bad output path never waits for the work to be done."""
    from ..writable import check_file

    try:
        return check_file(path, **options)
    except OSError as exc:
        raise cannot_write(path, exc) from None


def writable_folder(path) -> Path:
    """The folder ``path`` created and checked writable before a command's work starts
    (:func:`runtime.writable.check_folder`), or a CommandError as :func:`writable_file`."""
    from ..writable import check_folder

    try:
        return check_folder(path)
    except OSError as exc:
        raise cannot_write(path, exc) from None


class Progress:
    """A one-line progress bar on a terminal stream; silent when it is not a terminal."""

    def __init__(self, stream=None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1

    def __call__(self, done: int, total: int | None) -> None:
        if not self.enabled or not total:
            return
        filled = min(self.width, done * self.width // total)
        if filled == self._last and done != total:
            return
        self._last = filled
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} frames")
        if done >= total:
            self.stream.write("\n")
            self._last = -1
        self.stream.flush()

    def close(self) -> None:
        """End a bar left unfinished (an interrupted run) with a newline."""
        if self.enabled and self._last >= 0:
            self.stream.write("\n")
            self.stream.flush()
            self._last = -1
