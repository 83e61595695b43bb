"""``swaycam compare-render AVATAR``: swaycam beside three-vrm 3.5.5 (headless Chromium),
the side-by-side picture and the measures (render/eval/compare.py)."""

from __future__ import annotations

from pathlib import Path

from .args import (
    CommandError,
    add_command,
    add_json_option,
    add_out_option,
    cannot_write,
    number,
    print_json,
    size,
    writable_file,
)

_DESCRIPTION = """Draw AVATAR at rest with swaycam (headless EGL) and with pixiv's three-vrm 3.5.5
(three.js r180 in Debian's headless Chromium, software WebGL), at the same camera, light,
background, size and MToon time, and measure three-vrm's image against ours: SSIM and the
mean colour difference over the silhouette, and the silhouette IoU. The picture has one row
per time: swaycam | three-vrm | the difference x4.

AVATAR is 'godette' (the shared test assets' Godette), 'default' or 'layered' (the
generated avatars), 'uv-animation' (the generated MToon UV-animation sample, framed whole,
at 0, 0.25 and 1 s), or a .vrm/.glb file.

Needs Chromium (Debian: apt-get install chromium) and npm (the three-vrm packages are
installed on first use into ~/.cache/swaycam). Example:

    swaycam compare-render godette --out godette.png"""


def add_parser(sub) -> None:
    p = add_command(sub, "compare-render", run, help="render an avatar with swaycam and with three-vrm side by side",
                    description=_DESCRIPTION)
    p.add_argument("avatar", metavar="AVATAR", help="godette | default | layered | uv-animation | FILE")
    add_out_option(p, what="the side-by-side PNG to FILE", metavar="FILE",
                   default="compare-render-AVATAR.png")
    p.add_argument("--size", type=size, metavar="WxH", help="image size in pixels (default 480x480)")
    p.add_argument("--framing", choices=("bust", "full"),
                   help="camera framing (default bust; full for uv-animation)")
    p.add_argument("--time", type=number(0.0, 1e6), action="append", metavar="SECONDS",
                   help="MToon UV animation time; repeatable (default 0; uv-animation: 0, 0.25, 1)")
    p.add_argument("--antialias", action="store_true",
                   help="4x MSAA on both sides (default: none on either, so shading is compared pixel for pixel)")
    add_json_option(p, "the measures")


def run(args) -> int:
    from dataclasses import replace

    from PIL import Image

    from avatars.eval.node import ReferenceUnavailable
    from render.eval.compare import CompareOptions, builtin_case, compare_cases

    try:
        case = builtin_case(args.avatar)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from None
    if not Path(case.path).is_file():
        raise CommandError(f"{case.path} does not exist")
    out = writable_file(args.out.replace("AVATAR", case.label))   # before drawing: a bad --out fails now
    if args.framing:
        case = replace(case, framing=args.framing)
    if args.time:
        case = replace(case, times=tuple(sorted(args.time)))
    options = CompareOptions(antialias=args.antialias)
    if args.size:
        options = replace(options, size=tuple(args.size))
    try:
        (result,) = compare_cases([case], options)
    except ReferenceUnavailable as exc:
        raise CommandError(str(exc)) from None
    except RuntimeError as exc:
        raise CommandError(str(exc).splitlines()[0]) from None
    import numpy as np

    picture = np.concatenate([result.side_by_side(k) for k in range(len(case.times))], axis=0)
    try:
        Image.fromarray(picture).save(out)
    except OSError as exc:
        raise cannot_write(out, exc) from None
    rows = result.rows()
    if args.json:
        print_json({"avatar": case.label, "file": str(case.path), "image": str(out), "antialias": args.antialias,
                    "size": list(options.size), "reference": result.info, "results": rows})
        return 0
    from avatars.eval.node import THREE_VRM_VERSION

    print(f"{case.label}: swaycam | three-vrm {THREE_VRM_VERSION} (three.js r{result.info.get('three', '?')}, "
          f"{result.info.get('renderer', '?')}) | difference x4 -> {out}")
    print(f"{'t (s)':>7s} {'SSIM':>7s} {'colour diff':>11s} {'channel diff':>12s} {'IoU':>7s}")
    for r in rows:
        print(f"{r['t']:7.2f} {r['ssim']:7.4f} {r['color_diff']:11.2f} {r['channel_diff']:12.2f} {r['iou']:7.4f}")
    return 0
