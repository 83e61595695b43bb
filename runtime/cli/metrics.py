"""``swaycam metrics``: the hair-quality table for avatars and solvers."""

from __future__ import annotations

import sys

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
    existing_dir,
    existing_file,
    motion_setup,
    number,
    writable_folder,
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
    p.add_argument("--gravity", type=number(0.0), metavar="G",
                   help="gravity in m/s², a magnitude >= 0 pulling straight down, for every spring instead of "
                   "each file's own; "
                   "without --avatar the default set already adds a Godette run at 9.81")
    p.add_argument("--no-fps-check", action="store_true", help="skip the frame-rate consistency replays")
    p.add_argument("--hair-config", type=existing_file, metavar="FILE.toml",
                   help="the [hair] table of this config file for every row (spring parameters, linked sheets: "
                   "[hair.springs.\"Pattern\"] link = true)")
    p.add_argument("--sheets", choices=("auto", "off"), default="auto",
                   help="linked sheets: 'auto' (the try-on's sheets and the link settings; default) or 'off' "
                   "(none; the phase columns still measure the pairs 'auto' would link)")
    add_motion_options(p, default="none", in_place_default=False)
    g = p.add_argument_group("hairstyle try-on")
    g.add_argument("--hair", action="append", metavar="STYLE",
                   help="try this hairstyle on each avatar first (a style name in the hair folder or a hair file; "
                   "repeatable): its rows are the avatar with the fitted hair, with the attachment report (guides, "
                   "attached, joined, rejected) in the table; without --avatar the generated default avatar")
    g.add_argument("--hair-dir", type=existing_dir, metavar="DIR",
                   help="hair folder for --hair names (default: $SWAYCAM_HAIR_DIR and the shared assets' hair folder)")
    g.add_argument("--keep-own-hair", action="store_true", help="keep the avatar's own hair under the fitted style")
    p.epilog = ("With --motion FILE#A,B+C (a row per comma: A, then the sequence B then C), each row is the head "
                "still and the body playing the clip (loops repeated to 4 s), then 8 s at rest; the links-inside "
                "and depth columns are the hair against the body colliders and torso capsule during the clip. "
                "With --hair, each style is fitted (or reloaded from the fit cache) on each avatar and measured the "
                "same way: the whole avatar with its new hair.")


#: The default set's extra run: Godette's file sets no gravity on its springs.
EARTH_G = 9.81


def _hair_config(path) -> dict:
    """The ``[hair]`` table of the TOML file ``path`` (CommandError naming the file when it
    cannot be read or the table is not valid)."""
    import tomllib
    from pathlib import Path

    from ..rig.hair_params import parse_hair, parse_links

    try:
        hair = tomllib.loads(Path(path).read_text()).get("hair") or {}
        parse_hair(hair)
        parse_links(hair)
    except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
        raise CommandError(f"--hair-config {path}: {exc}") from None
    return hair


def _avatars(specs, gravity=None, *, styles=(), hair_dir=None, keep_own_hair=False, hair=None):
    """({row name: avatar, or (avatar, [hair] settings) when a gravity replaces the file's},
    {row name: attachment report} of the rows with a hairstyle tried on).

    With ``styles`` each avatar (default: the generated default avatar) is measured with
    each style fitted on it (:func:`runtime.tryon.fit_style`: the fit cache or a fit) instead
    of its own hair; a style that cannot be fitted is a CommandError with the try-on's message."""
    from avatars import load_avatar
    from avatars.assets import GODETTE, find_asset

    runs = [(s, gravity) for s in specs or ()]
    if not specs and styles:
        runs = [("default", gravity)]
    elif not specs:
        godette = find_asset(*GODETTE)
        if godette is not None:
            runs.append((str(godette), gravity))
            if gravity is None:
                runs.append((str(godette), EARTH_G))
        runs += [("default", gravity), ("layered", gravity)]
    loaded, fitted, out, attachments = {}, {}, {}, {}
    for s, _ in runs:
        if s not in loaded:
            loaded[s] = load_avatar(avatar_path(s))
    names = _row_names({s: a.meta.name for s, a in loaded.items()})
    for s, g in runs:
        a, name = loaded[s], names[s]
        for style in styles or (None,):
            avatar, row = a, name
            if style is not None:
                if (s, style) not in fitted:
                    fitted[s, style] = _fit(s, a, style, hair_dir, keep_own_hair)
                avatar, label, report = fitted[s, style]
                row = f"{name} + {label}"
            if g is not None:
                row = f"{row}, g = {g:g} m/s²"
            settings = dict(hair or {})
            if g is not None:
                settings["gravity"] = [0.0, -g, 0.0]
            out[row] = (avatar, settings) if settings else avatar
            if style is not None:
                attachments[row] = report
    return out, attachments


def _row_names(avatar_names: dict[str, str | None]) -> dict[str, str]:
    """{avatar spec: its rows' name}: the avatar's own name (the generated ones "swaycam
    default" / "swaycam layered", a nameless file its stem); names two specs share (two exports
    of one avatar) get the file name in brackets, or the whole path when that is shared too."""
    from pathlib import Path

    builtin = {"default": "swaycam default", "layered": "swaycam layered"}
    base = {s: builtin.get(s, n or Path(s).stem) for s, n in avatar_names.items()}
    names = dict(base)
    for label in (lambda s: Path(s).name, str):
        shared = {n for n in names.values() if list(names.values()).count(n) > 1}
        names = {s: f"{base[s]} ({label(s)})" if n in shared and s not in builtin else n for s, n in names.items()}
    return names


def _fit(spec, avatar, style: str, hair_dir, keep_own_hair: bool):
    """(avatar with ``style`` tried on, the style's label, its attachment report)."""
    from ..config import looks_like_path, tryon_settings
    from ..config_sections import TryOnSection
    from ..tryon import BaseAvatar, HairStyles, StyleError, fit_style

    try:
        path = HairStyles(hair_dir).resolve(style)
        result, _ = fit_style(BaseAvatar(avatar_path(spec), avatar), path,
                              tryon_settings(TryOnSection(hide_own_hair=not keep_own_hair)))
    except StyleError as exc:
        raise CommandError(f"hairstyle {exc}") from None
    g = result.guide_report
    label = path.stem if looks_like_path(style) else style
    return result.avatar, label, {"guides": g.candidates, "attached": g.attached, "joined": g.joined,
                                  "rejected": g.rejected}


def run(args) -> int:
    from tracking.track_io import load_track

    from ..eval.hair_quality import measure, write_report

    if args.track and args.motion not in (None, "none"):
        raise UsageError("--track and --motion: a motion row keeps the head still; give one of them")
    writable_folder(args.out)      # before the measurements: a bad --out fails now, not after them

    hair = _hair_config(args.hair_config) if args.hair_config else None
    avatars, attachments = _avatars(args.avatar, args.gravity, styles=args.hair or (), hair_dir=args.hair_dir,
                                    keep_own_hair=args.keep_own_hair, hair=hair)
    track = load_track(args.track) if args.track else None
    bare = [name for name, e in avatars.items()
            if not (a := e[0] if isinstance(e, tuple) else e).springs or a.head_node() < 0]
    rigid = [name for name in bare if name in attachments]
    for name in rigid:         # a style too short for any chain is held rigidly on the head
        print(f"swaycam metrics: {name}: no spring chain (the hair is held rigidly on the head); not measured",
              file=sys.stderr)
        del avatars[name]
    bare = [name for name in bare if name not in attachments]
    if bare or not avatars:
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
                   fps_check=not args.no_fps_check, motions=motions, sheets=args.sheets)
    title = f"pose track {args.track}" if args.track else None
    if motions:
        title = f"body motion {', '.join(motions)}: each clip (loops to 4 s), then 8 s at rest; head still"
    try:
        files = write_report(rows, args.out, title=title, attachments=attachments or None)
    except OSError as exc:
        raise cannot_write(args.out, exc) from None
    print(files["markdown"].read_text())
    print(f"written: {files['markdown']}, {files['json']}, " + ", ".join(str(p) for p in files["plots"]))
    return 0
