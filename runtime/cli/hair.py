"""``swaycam hair``: hairstyle try-on (docs/design.md §9) from the command line.

    swaycam hair fit HAIR --avatar AVATAR --out OUT.vrm [--json]   fit, rig, export VRM 1.0
    swaycam hair fit --own --avatar AVATAR --out OUT.vrm          re-rig the avatar's own hair
    swaycam hair guides HAIR [--avatar AVATAR] --out GUIDES.json  the fitted guide curves (docs/guides.md)
    swaycam hair list                                             styles in the hair folders
    swaycam hair bench [STYLE ...] [--avatar A] [--json]          fit + rig and cached reload, s
    swaycam hair metrics [STYLE ...] [--avatar A] [--json]        the hair-quality table
    swaycam hair corpus --out DIR [STYLE ...]                     write the procedural test styles
    swaycam hair audit [--avatar A ...] [--out DIR]               every style x avatar: a static page

HAIR is a file (.obj with MakeHuman .mhmat/.mhclo beside it, .glb/.gltf/.vrm with
``--mesh``/``--node``/``--spring``) or a style name looked up in the hair folders
(``$SWAYCAM_HAIR_DIR``, then the shared assets' ``hair``). AVATAR defaults to the generated
default avatar. ``--json`` prints one object: ``guides`` {candidates, attached, joined,
rejected}, ``chains``, ``joints``, ``hair_vertices``, ``seconds`` (and the rest of the report).
Results are cached per (avatar, style, settings); ``--no-cache`` fits again.
Exit codes: 0 fitted, 1 unusable input or a hair that cannot be fitted, 2 usage.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("hair", help="hairstyle try-on: fit a hair mesh to an avatar, rig it, export VRM 1.0",
                       description=__doc__.split("\n\n")[0])
    hs = p.add_subparsers(dest="hair_command", metavar="ACTION")
    f = hs.add_parser("fit", help="fit and rig a hairstyle on an avatar; write a VRM 1.0 file")
    f.add_argument("hair", nargs="?", help="hair file or style name (not with --own)")
    f.add_argument("--own", action="store_true", help="re-rig the avatar's own hair (its hair meshes, or its hair cut "
                   "out of a mesh it shares with the face or body) with the try-on rig")
    f.add_argument("--avatar", help="target avatar (.vrm/.glb, or default / layered: the generated avatars; "
                   "default: the generated default avatar)")
    f.add_argument("--out", help="the VRM 1.0 file to write")
    f.add_argument("--json", action="store_true", help="print one JSON object")
    f.add_argument("--mesh", help="the hair mesh's name inside a .glb/.vrm hair file")
    f.add_argument("--node", help="the name of the node drawing the hair inside a .glb/.vrm hair file")
    f.add_argument("--spring", help="the spring whose mesh pieces are the hair (inside a .glb/.vrm)")
    f.add_argument("--color", help="hair colour #rrggbb (default: the style's)")
    f.add_argument("--keep-own-hair", action="store_true", help="do not hide the avatar's own hair meshes")
    f.add_argument("--max-chains", type=int, default=24, help="most spring chains (default 24)")
    f.add_argument("--no-cache", action="store_true", help="fit again even when a cached result exists")
    f.set_defaults(func=run_fit, command_prog=f.prog)
    g = hs.add_parser("guides", help="write a fitted style's guide curves (points, state, scalp triangle) as JSON",
                      description="Fit HAIR on AVATAR (or take the cached fit) and write every candidate guide: its "
                      "points (metres, the avatar's rest frame), state (attached, joined, rejected), scalp triangle "
                      "and barycentric weights, parent of a joined fragment. Schema: avatars/tryon/guides.schema.json "
                      "(docs/guides.md).")
    g.add_argument("hair", help="hair file or style name")
    g.add_argument("--avatar", help="target avatar (a file, or default / layered: the generated avatars; "
                   "default: the generated default avatar)")
    g.add_argument("--out", required=True, help="the JSON file to write ('-': standard output)")
    g.add_argument("--no-cache", action="store_true", help="fit again even when a cached result exists")
    g.set_defaults(func=run_guides, command_prog=g.prog)
    ls = hs.add_parser("list", help="the styles in the hair folders")
    ls.set_defaults(func=run_list, command_prog=ls.prog)
    c = hs.add_parser("corpus", help="write the procedural test hairstyles (CC0) as OBJ + .mhmat into a folder",
                      description="Write swaycam's procedural hairstyles (avatars/hair/procedural.py: long, layered, "
                      "braid, bun, afro, twin tails, crop, closed cap; each made for another head size and unit) "
                      "as DIR/<name>/<name>.obj with a .mhmat; use them with --hair-dir DIR or $SWAYCAM_HAIR_DIR.")
    c.add_argument("styles", nargs="*", help="style names (default: all)")
    c.add_argument("--out", required=True, help="the folder to write")
    c.set_defaults(func=run_corpus, command_prog=c.prog)
    for name, func, what in (("bench", run_bench, "seconds to fit + rig and to reload cached"),
                             ("metrics", run_metrics, "hair quality on the standard head turn")):
        b = hs.add_parser(name, help=what)
        b.add_argument("styles", nargs="*", help="style names or files (default: every style found)")
        b.add_argument("--avatar", help="target avatar (a file, or default / layered: the generated avatars; "
                       "default: the generated default avatar)")
        b.add_argument("--json", action="store_true", help="print JSON")
        if name == "bench":
            b.add_argument("--repeats", type=int, default=3, help="runs per style (median)")
        else:
            b.add_argument("--solver", action="append", help="rest-shape, legacy (repeatable; default both)")
        b.set_defaults(func=func, command_prog=b.prog)
    _add_audit(hs)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1], command_prog=p.prog)


_AUDIT = """Fit every style of the hair folders (and swaycam's procedural corpus) on every given avatar,
measure each fit on the standard head turn and a fast body clip with the quality matrix, draw it
front and back, and write a static page: OUT/index.html (sortable, a filter for styles with
rejected guides, each row with the command that opens it live).

Per style and avatar: guides (candidates, attached, joined, rejected), vertices missed, chains,
edge stretch over the head turn and the clip (p99 and worst edge), hair inside the head and the
colliders, fit time, thumbnails. The cells are the matrix's (OUT/matrix: one file per finished
cell, so an interrupted audit goes on where it stopped); fit records in OUT/fits, thumbnails in
OUT/thumbs, the rows in OUT/audit.json.

    swaycam hair audit
    swaycam hair audit --avatar default --style bob01 --style proc_braid --duration 1 --settle 2
    swaycam hair audit --avatar default --avatar layered --avatar assets:vrm/Godette_vrm_v4.vrm"""


def _add_audit(hs) -> None:
    from .args import add_command, add_json_option, count, frame_rates, number

    a = add_command(hs, "audit", run_audit, help="every style x avatar fitted, measured and drawn: a static page",
                    description=_AUDIT)
    a.add_argument("--avatar", action="append", metavar="AVATAR", help="a file, a folder, or default / layered / "
                   "godette; repeatable (default: default, layered and godette when the shared assets have her)")
    a.add_argument("--hair-dir", action="append", metavar="DIR", help="a hair folder; repeatable (default: "
                   "$SWAYCAM_HAIR_DIR and the shared assets' hair folder)")
    a.add_argument("--no-corpus", action="store_true", help="leave out the procedural corpus (swaycam hair corpus)")
    a.add_argument("--style", action="append", metavar="NAME", help="only this style; repeatable (default: all)")
    a.add_argument("--clip", metavar="CLIP", help="the fast body clip: FILE#Name, or none (default "
                   "assets:anim/ual/AnimationLibrary_Godot_Standard.gltf#Sprint_Loop)")
    a.add_argument("--rates", type=frame_rates, metavar="FPS,...", help="render rates of the fps identity (default 30,120)")
    a.add_argument("--duration", type=number(0.0, 3600.0, lo_open=True), metavar="S",
                   help="seconds of motion (default as swaycam metrics: the 4 s head turn, the clip repeated to 4 s)")
    a.add_argument("--settle", type=number(2.0, 3600.0), metavar="S", help="seconds still after the motion (default 8)")
    a.add_argument("--out", metavar="DIR", default="out/audit", help="the audit folder (default out/audit)")
    a.add_argument("--workers", type=count(1, 4096), metavar="N", help="worker processes (default: the core count)")
    a.add_argument("--retry-failed", action="store_true", help="measure stored failed cells again")
    a.add_argument("--no-thumbnails", action="store_true", help="draw no thumbnails (no OpenGL needed)")
    add_json_option(a, "the totals and every row")


def _avatar_path(arg: str | None) -> Path:
    """``--avatar`` as every other command reads it: None or ``default`` -> the generated
    default avatar, ``layered`` -> the generated layered one, else the file."""
    from .args import avatar_path

    return avatar_path(arg)


def _style_path(arg: str) -> Path:
    from avatars.hair import find_style

    p = Path(arg)
    return p if p.exists() or p.suffix else find_style(arg)


def _settings(args):
    from avatars.tryon import TryOnSettings

    color = None
    if args.color:
        h = args.color.lstrip("#")
        if len(h) != 6:
            raise ValueError(f"--color {args.color!r} is not #rrggbb")
        color = tuple(int(h[i:i + 2], 16) / 255.0 for i in (0, 2, 4))
    if args.max_chains < 1:
        raise ValueError(f"--max-chains must be at least 1, not {args.max_chains}")
    return TryOnSettings(hide_own_hair=not args.keep_own_hair, color=color, max_chains=args.max_chains)


def run_fit(args) -> int:
    from avatars import AvatarError, load_avatar
    from avatars.hair import load_hair
    from avatars.tryon import try_on
    from avatars.tryon.cache import cached_try_on
    from avatars.vrm1 import save_vrm1

    from ..writable import check_file

    t0 = time.perf_counter()
    try:
        if args.out:           # before the fit: a bad --out fails now, naming it
            check_file(args.out)
    except OSError as exc:
        print(f"swaycam hair fit: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    try:
        settings = _settings(args)
        avatar_path = _avatar_path(args.avatar)
        if args.own == bool(args.hair):
            raise ValueError("give a HAIR file or style, or --own (the avatar's own hair), not both")
        style = avatar_path if args.own else _style_path(args.hair)
        if args.own:
            from avatars.tryon.own_hair import own_hair_source

            target = load_avatar(avatar_path)
            result, hit = try_on(target, own_hair_source(target), settings), False
        elif args.mesh or args.node or args.spring:   # a mesh inside an avatar file (the target itself: a rebuild)
            source = load_hair(style, mesh=args.mesh, node=args.node, spring=args.spring)
            result, hit = try_on(load_avatar(avatar_path), source, settings), False
        else:
            result, hit = cached_try_on(avatar_path, style, settings, use_cache=not args.no_cache)
        if result.avatar is None:
            raise ValueError("; ".join(result.fit.problems) or "the hair could not be fitted")
    except (AvatarError, ValueError, OSError) as exc:
        print(f"swaycam hair fit: {exc}", file=sys.stderr)
        return 1
    if args.out:
        try:
            save_vrm1(result.avatar, args.out)
        except OSError as exc:
            print(f"swaycam hair fit: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    summary = result.summary()
    summary.update(seconds=round(time.perf_counter() - t0, 4), fit_seconds=round(result.seconds, 4), cached=hit,
                   out=str(args.out) if args.out else None)
    if args.json:
        print(json.dumps(summary))
    else:
        g = summary["guides"]
        print(f"{Path(style).stem} on {avatar_path.name}: {g['candidates']} candidate guides, {g['attached']} attached, "
              f"{g['joined']} joined, {g['rejected']} rejected; {summary['chains']} chains, {summary['joints']} joints, "
              f"{summary['hair_vertices']} hair vertices; {summary['seconds']:.2f} s{' (cached)' if hit else ''}")
        from avatars.tryon.pipeline import own_hair_text

        f = summary["fit"]
        print(f"  placed by {f['method']}: inner surface {f['inner_median_mm']:.1f} mm median, {f['inner_p95_mm']:.1f} mm "
              f"p95 from the head ({100 * f['scalp_covered']:.0f} % of the scalp covered)")
        print(f"  the avatar's own hair: {own_hair_text(summary['own_hair'])}")
        for note in summary["notes"]:
            print(f"  note: {note}")
        if args.out:
            print(f"wrote {args.out}")
    return 0


def run_guides(args) -> int:
    from avatars import AvatarError
    from avatars.tryon import TryOnSettings
    from avatars.tryon.cache import cached_try_on
    from avatars.tryon.guide_export import to_json

    from ..writable import check_file

    try:
        if args.out != "-":
            check_file(args.out)
    except OSError as exc:
        print(f"swaycam hair guides: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    try:
        avatar_path = _avatar_path(args.avatar)
        style = _style_path(args.hair)
        result, _ = cached_try_on(avatar_path, style, TryOnSettings(), use_cache=not args.no_cache)
        if result.avatar is None:
            raise ValueError("; ".join(result.fit.problems) or "the hair could not be fitted")
    except (AvatarError, ValueError, OSError) as exc:
        print(f"swaycam hair guides: {exc}", file=sys.stderr)
        return 1
    doc = json.dumps(to_json(result.guide_set, style=Path(style).stem, avatar=avatar_path.name), separators=(",", ":"))
    if args.out == "-":
        print(doc)
        return 0
    try:
        Path(args.out).write_text(doc, encoding="utf-8")
    except OSError as exc:
        print(f"swaycam hair guides: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    c = result.guide_set.counts()
    print(f"{Path(style).stem}: {c['candidates']} guides ({c['attached']} attached, {c['joined']} joined, "
          f"{c['rejected']} rejected) -> {args.out}")
    return 0


def _styles(names: list[str]) -> list[Path]:
    from avatars.hair import hair_folders

    if names:
        return [_style_path(n) for n in names]
    found = []
    for folder in hair_folders():
        if folder.is_dir():
            found += sorted(p for p in folder.glob("*/*.obj") if p.parent.name == p.stem)
    return found


def run_list(args) -> int:
    from avatars.hair import hair_folders

    styles = _styles([])
    for p in styles:
        print(f"{p.stem}\t{p}")
    if not styles:
        print(f"no styles in {', '.join(str(f) for f in hair_folders())}", file=sys.stderr)
        return 1
    return 0


def run_corpus(args) -> int:
    from avatars.hair.procedural import write_corpus

    try:
        paths = write_corpus(args.out, args.styles or None)
    except (ValueError, OSError) as exc:
        print(f"swaycam hair corpus: {exc}", file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0


def run_bench(args) -> int:
    from avatars.eval.fit_bench import bench_tryon

    rows = bench_tryon(_avatar_path(args.avatar), [str(p) for p in _styles(args.styles)], repeats=args.repeats)
    failed = [r for r in rows if "problems" in r]
    for r in failed:
        print(f"swaycam hair bench: {r['style']}: {'; '.join(r['problems'])}", file=sys.stderr)
    rows = [r for r in rows if "problems" not in r]
    if failed and not rows:
        return 1
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(f"{'style':<14}{'fit+rig s':>10}{'max':>8}{'cached s':>10}{'max':>8}{'chains':>8}{'vertices':>10}")
        for r in rows:
            print(f"{r['style']:<14}{r['fit_rig_s']:>10.3f}{r['fit_rig_s_max']:>8.3f}{r['cached_s']:>10.4f}"
                  f"{r['cached_s_max']:>8.4f}{r['chains']:>8}{r['hair_vertices']:>10}")
    return 1 if failed else 0


def run_metrics(args) -> int:
    from avatars import load_avatar
    from avatars.hair import load_hair
    from avatars.tryon import TryOnSettings, build_head, try_on
    from solver.eval.tryon_quality import measure_tryon

    avatar = load_avatar(_avatar_path(args.avatar))
    rows, failed = [], []
    for style in _styles(args.styles):
        res = try_on(avatar, load_hair(style), TryOnSettings())
        if res.avatar is None:
            print(f"swaycam hair metrics: {style.stem}: {'; '.join(res.fit.problems)}", file=sys.stderr)
            failed.append(style.stem)
            continue
        head = build_head(res.avatar, hide=(res.hair_instance,))
        for solver in args.solver or ["rest-shape", "legacy"]:
            run = measure_tryon(res, solver=solver, head=head)
            g = res.guide_report
            rows.append({"style": style.stem, "attached_pct": 100.0 * g.attached_share, **run.row()})
    if failed and not rows:        # nothing measured: no empty table, exit code 1
        return 1
    if args.json:
        print(json.dumps(rows, indent=1))
        return 1 if failed else 0
    cols = ("style", "solver", "chains", "attached_pct", "stretch_p99_pct", "stretch_worst_pct", "all_edges_p99_pct",
            "all_edges_worst_pct", "settle_mm", "tip_swing_mm", "scalp_drift_m", "head_depth_mm", "collider_depth_mm")
    print("\t".join(cols))
    for r in rows:
        print("\t".join(f"{r[c]:.4g}" if isinstance(r[c], float) else str(r[c]) for c in cols))
    return 1 if failed else 0


def run_audit(args) -> int:
    from ..eval.audit.plan import FAST_CLIP, RATES, AuditSpec
    from ..eval.audit.run import run_audit as audit
    from ..eval.matrix.axes import Settings, SpecError
    from ..eval.matrix.executors import PoolExecutor
    from ..eval.matrix.progress import Progress
    from ..schedule import sigterm_as_interrupt
    from .args import UsageError, print_json, writable_folder

    try:
        settings = Settings(rates=args.rates or RATES, jittered=(), duration_s=args.duration,
                            settle_s=8.0 if args.settle is None else args.settle)
        spec = AuditSpec(**({"avatars": tuple(args.avatar)} if args.avatar else {}),
                         hair_dirs=tuple(args.hair_dir) if args.hair_dir else None, corpus=not args.no_corpus,
                         styles=tuple(args.style or ()), clip=None if args.clip == "none" else (args.clip or FAST_CLIP),
                         settings=settings)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    writable_folder(args.out)
    guard = sigterm_as_interrupt()
    try:
        with guard:
            summary = audit(spec, args.out, PoolExecutor(args.workers), progress=lambda n: Progress(n, sys.stderr),
                            thumbnails=not args.no_thumbnails, retry_failed=args.retry_failed)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        print(f"swaycam hair audit: interrupted; the finished cells are in {args.out}", file=sys.stderr)
        return 128 + (guard.received or 2)
    t = summary.totals
    if args.json:
        print_json(summary.as_dict())
    else:
        from ..eval.audit.page import headline

        m = summary.matrix
        print(f"{headline(t)}")
        print(f"{m.total} cells: {m.cached} cached, {m.computed} computed ({m.failed} failed); "
              f"{summary.thumbs_drawn} thumbnails drawn; {summary.seconds:.1f} s; page {summary.page}")
        if summary.thumb_note:
            print(f"note: {summary.thumb_note}", file=sys.stderr)
    return 1 if t["errors"] else 0
