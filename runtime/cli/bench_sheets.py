"""``swaycam bench solver --sheets [FILE.toml]``: what linked sheets cost per 60 fps frame
(:func:`solver.eval.sheet_bench.bench_sheets`: with and without, interleaved in one run), on
the generated default and layered avatars with the ``[hair]`` link settings of FILE (none:
the try-on's sheets only) and on the generated default avatar with each ``--hair`` style
fitted (the try-on's sheets, on by default)."""

from __future__ import annotations


def run_sheet_bench(args, stream) -> dict:
    from avatars import load_avatar
    from avatars.clips.head_turn import head_turn_rotation
    from solver.eval.bench import SAMPLES
    from solver.eval.sheet_bench import bench_sheets

    from ..rig.hair_params import parse_links
    from .args import avatar_path
    from .metrics import _fit, _hair_config

    hair = _hair_config(args.sheets) if args.sheets not in (None, "", "-") else {}
    links = parse_links(hair)
    base = load_avatar(avatar_path("default"))
    sets = [("default", base, links), ("layered", load_avatar(avatar_path("layered")), links)]
    for style in args.hair or ():
        sets.append((f"default + {style}", _fit("default", base, style, None, False)[0], None))
    out = {}
    print(f"{'set':24} {'links':>5} {'joints':>6} {'off frame µs':>13} {'on frame µs':>12} {'ratio':>6}", file=stream)
    for name, avatar, lk in sets:
        r = bench_sheets(avatar, head_turn_rotation, links=lk, samples=args.samples or SAMPLES)
        out[name] = r
        print(f"{name:24} {r['links']:5d} {r['joints']:6d} {r['off_frame_us']['median']:13.1f} "
              f"{r['on_frame_us']['median']:12.1f} {r['ratio']:6.2f}", file=stream)
    return {"sheets": out}
