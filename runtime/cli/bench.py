"""``swaycam bench TARGET``: benchmarks (never timed tests). Medians and p95; noisy machine.

The measuring code lives with what it measures (:mod:`solver.eval.bench`,
:mod:`render.eval.bench`, :mod:`tracking.eval.bench`, :mod:`runtime.eval.loop_bench`); the options of every
target are declared here, once, with the shared types of :mod:`runtime.cli.args`.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from solver.modes import SolverMode

from ..config import X264_PRESETS
from ..eval.live_modes import DEFAULT_LIVE_MODES, LIVE_MODES

from .args import (
    CommandError,
    UsageError,
    add_avatar_option,
    add_command,
    add_face_model_options,
    add_json_option,
    add_solver_option,
    avatar_path,
    background,
    cannot_write,
    count,
    existing_file,
    json_text,
    positive,
    print_json,
    size,
    writable_file,
)

_DESCRIPTION = """Measurements, not tests: medians and p95 on whatever machine runs them.

    swaycam bench solver     µs per substep and per 60 fps frame, per chain set
    swaycam bench render     ms per frame (draw, readback) and fps per avatar and size
    swaycam bench tracker    MediaPipe ms per frame at 640x360 and 1280x720
    swaycam bench loop       offline speed (× real time) and live capture-to-output latency
    swaycam bench tryon      hairstyle fit + rig and cached reload s per style; frame periods of a
                             live run while styles are switched
    swaycam bench panel      render-loop fps at 1280x720 with and without a connected panel preview
    swaycam bench all        every one with its default options

Every target takes --json (one JSON document on stdout instead of the table) and --out FILE
(the same JSON written to FILE as well). 'swaycam bench TARGET --help' lists its options."""

#: Benchmark targets, in the order ``bench all`` runs them.
TARGETS = ("solver", "render", "tracker", "loop", "tryon", "panel")


def add_parser(sub) -> None:
    p = add_command(sub, "bench", None, help="benchmarks: solver, render, tracker, loop, or all",
                    description=_DESCRIPTION)
    targets = p.add_subparsers(dest="target", metavar="TARGET", required=True)
    parsers = {}

    s = parsers["solver"] = add_command(
        targets, "solver", run_target, help="hair solver µs per substep and per 60 fps frame, per chain set",
        description="Cost of one substep and of one 60 fps frame (2 substeps), median and p95 in microseconds, "
        "on Godette (when the shared assets are present), the generated default and layered avatars and "
        "synthetic hair caps of 64, 256 and 1024 joints, the head following the standard head turn: the kernel "
        "alone, and for the avatars the whole substep with the runtime's posing and the whole 60 fps frame "
        "(2 substeps, draw pose, skinning matrices).")
    s.add_argument("--samples", type=count(2), metavar="N",
                   help="timed substeps per set (default: solver.eval.bench.SAMPLES, 4000)")
    add_solver_option(s, default=SolverMode.REST_SHAPE.value)
    s.add_argument("--reference", action="store_true",
                   help="also time three-vrm 3.5.5 (Node.js) on each set and report the ratio")
    s.add_argument("--set", action="append", metavar="NAME",
                   help="only this set; repeatable (godette, default, layered, synthetic-64, synthetic-256, "
                   "synthetic-1024)")
    s.add_argument("--motion", metavar="CLIP",
                   help="the avatars' bodies play this clip (FILE[#NAME], 'idle') while the head turns: the "
                   "substep and frame with pose then include clip sampling (default: no body motion)")
    s.add_argument("--sheets", nargs="?", const="-", metavar="FILE.toml",
                   help="instead: one 60 fps frame with linked sheets against without, interleaved, on Godette (when "
                   "the shared assets are present), the default and layered avatars with the [hair] link settings "
                   "of FILE and on each --hair style fitted")
    s.add_argument("--hair", action="append", metavar="STYLE", help="with --sheets: a try-on style to fit and time")

    r = parsers["render"] = add_command(
        targets, "render", run_target, help="renderer ms per frame (draw, readback) and fps per avatar and size",
        description="Per avatar, size and case (mesh detail x readback path): draw until the GPU is done, "
        "synchronous readback, and whole frames as an offline run draws them (draw + readback of the previous "
        "frame on the readback thread, or through the PBO double buffer); the cases take turns in rounds in "
        "one process, after a few warm-up frames.")
    add_avatar_option(r, repeat=True, default_text="default and layered")
    r.add_argument("--size", type=size, action="append", metavar="WxH",
                   help="framebuffer size; repeatable (default 640x360, 1280x720, 1920x1080)")
    r.add_argument("--frames", type=count(1), default=30, metavar="N",
                   help="timed frames per block (default 30)")
    r.add_argument("--rounds", type=count(1), default=3, metavar="N",
                   help="blocks per case, the cases in turn (default 3)")
    r.add_argument("--samples", type=count(0, 32), metavar="N",
                   help="MSAA samples (default: 4 with MSAA)")
    r.add_argument("--antialias", choices=("auto", "msaa", "fxaa", "off"), default="auto",
                   help="anti-aliasing (default auto: MSAA on GPUs, off on llvmpipe)")
    r.add_argument("--outlines", choices=("auto", "on", "off"), default="auto",
                   help="MToon outlines (default auto: on with GPUs, off on llvmpipe; the run config's outlines key)")
    r.add_argument("--detail", choices=("auto", "full", "reduced"), action="append", default=None,
                   help="mesh detail; repeatable, the cases alternate in one process (default auto: full with "
                        "GPUs, reduced on llvmpipe; the run config's detail key)")
    r.add_argument("--readback", choices=("thread", "pbo"), action="append", default=None,
                   help="readback path; repeatable (default thread: frames in flight on headless EGL, as "
                        "offline runs; pbo: the PBO double buffer)")
    r.add_argument("--background", type=background, default="chroma", metavar="COLOR",
                   help="transparent | green | #rrggbb (default green, the chroma key)")
    r.add_argument("--backend", default="auto", choices=("auto", "egl", "window"),
                   help="OpenGL context (default auto)")

    t = parsers["tracker"] = add_command(
        targets, "tracker", run_target, help="MediaPipe tracker ms per frame (median, p95) at 640x360 and 1280x720",
        description="The face tracker's time per frame on a clip's frames fitted to 640x360 and 1280x720 "
        "(aspect ratio kept, centred on black; median and p95, after 5 warm-up frames per size): ours (adaptive face count, probe frames included) "
        "against raw MediaPipe with num_faces=1 and ours with the face count fixed, the three in turn on each "
        "frame, and the per-frame difference ours - raw (median, p95, mean, on probe frames).")
    t.add_argument("--clip", type=existing_file, metavar="FILE",
                   help="video/GIF to time (default: the shared selfie clip)")
    t.add_argument("--frames", type=count(6), default=100, metavar="N", help="frames read per size, the 5 warm-up frames included (default 100)")
    t.add_argument("--hands", action="store_true", help="also time the tracker with --hands (pose and hand "
                   "landmarkers on the same frames) against the face alone")
    add_face_model_options(t)

    lp = parsers["loop"] = add_command(
        targets, "loop", run_target, help="whole loop: offline × real time, live capture-to-output latency",
        description="Offline: 'swaycam run' on a file source, every frame tracked, simulated, drawn and encoded "
        "(speed = media duration / wall time). Live: the same file played in real time through the live path; "
        "capture-to-output latency p50/p95, render fps, tracker latency, drops.")
    lp.add_argument("--source", type=existing_file, metavar="FILE",
                    help="a video file (default: the shared selfie clip)")
    add_avatar_option(lp)
    lp.add_argument("--size", type=size, default=(1280, 720), metavar="WxH", help="output size (default 1280x720)")
    lp.add_argument("--rounds", type=count(1), default=2, metavar="N",
                    help="offline: rounds of serial / pipelined / pose-track replay runs, alternating (default 2)")
    lp.add_argument("--no-offline", action="store_true", help="skip the offline runs")
    lp.add_argument("--no-live", action="store_true", help="skip the live runs")
    lp.add_argument("--camera-fps", type=positive(240), default=30.0, metavar="FPS",
                    help="live: the clip's frames delivered as a camera at this rate (default 30, the output rate)")
    lp.add_argument("--live-output", choices=("video", "vcam"), default="video",
                    help="live: into an mp4 (x264 in its own process) or a virtual camera (a backend converting "
                    "to I420 as a v4l2loopback device costs the sender; default video)")
    lp.add_argument("--video-preset", choices=X264_PRESETS, default=None,
                    help="x264 preset of the offline runs' mp4 (default: the run's, video_preset)")
    lp.add_argument("--no-table", action="store_true", help="skip the interpolation delay / extrapolation table")
    lp.add_argument("--load", type=count(0, 16), default=0, metavar="N",
                    help="N CPU-burning helper processes (one core busy each) started and stopped by the bench, "
                    "running through the offline and live runs (default 0)")
    lp.add_argument("--live-rounds", type=count(1), default=1, metavar="R",
                    help="live: rounds of the live modes, interleaved (A B A B: a burst of load lands on every mode "
                    "alike); medians over the rounds (default 1)")
    lp.add_argument("--live-mode", action="append", choices=tuple(LIVE_MODES), metavar="MODE",
                    help="live: a mode to run, repeatable (default: " + ", ".join(DEFAULT_LIVE_MODES) + "). "
                    + "; ".join(f"{k}: {v[0]}" for k, v in LIVE_MODES.items()))
    lp.add_argument("--live-seconds", type=positive(600), default=None, metavar="S",
                    help="live: seconds per run (default: the clip's length)")

    ty = parsers["tryon"] = add_command(
        targets, "tryon", run_target, help="hairstyle try-on: fit + rig s per style, cached reload, a live switch",
        description="Per style: seconds to fit + rig (the try-on and the runtime's rig with its warm-up; median, "
        "p95 of --repeats fresh runs) and to reload it from the fit cache (+ the rig). Then a live switch: "
        "'swaycam run --realtime' at --fps into a video file while every style is asked for in turn (as the "
        "keys and POST /hairstyle do), first with an empty fit cache (fits in the fitter process), then "
        "cached: the frame periods before any switch, while a fit is in flight and at the frame that swaps "
        "the new avatar in. Target: no frame period above two frame periods.")
    add_avatar_option(ty, default_text="the generated default avatar")
    ty.add_argument("--style", action="append", metavar="STYLE",
                    help="a style name or hair file; repeatable (default: every style of the hair folder)")
    ty.add_argument("--repeats", type=count(1), default=5, metavar="N", help="fresh fits per style (default 5)")
    ty.add_argument("--source", metavar="SOURCE", default="turn-test",
                    help="the live run's source: 'turn-test' or a video file (tracked live) (default turn-test)")
    ty.add_argument("--fps", type=count(1, 240), default=30, metavar="N", help="live render rate (default 30)")
    ty.add_argument("--size", type=size, default=(640, 360), metavar="WxH",
                    help="live output size (default 640x360: what this machine draws at 30 fps with software GL)")
    ty.add_argument("--no-live", action="store_true", help="only the fit and reload times")
    ty.add_argument("--no-fits", action="store_true", help="only the live switch")
    ty.add_argument("--no-contact", action="store_true", help="skip the per-vertex contact cost per frame")
    ty.add_argument("--no-pacing", action="store_true", help="the switch's own steps in this process do not wait "
                    "for the render thread's idle time (to measure what that wait buys)")
    v = parsers["vmc"] = add_command(
        targets, "vmc", run_target, help="VMC: µs to build and send a frame's bundle, and to receive one",
        description="Per avatar: building one frame's VMC bundle, building + sending it over UDP to 127.0.0.1, "
        "receiving one (parse, validate, coalesce) and taking it into the input's record buffer (median, p95).")
    add_avatar_option(v, repeat=True, default_text="default and layered")
    v.add_argument("--frames", type=count(10), default=2000, metavar="N", help="timed frames (default 2000)")

    pn = parsers["panel"] = add_command(
        targets, "panel", run_target, help="the panel's preview: render-loop fps with and without a client",
        description="An offline run of the head turn with the control service, drawn as fast as possible with no "
        "output, in alternating blocks of frames with and without a client reading GET /preview.mjpg: frame "
        "time median / p95 and fps per condition, and the fps ratio (target: the preview costs <= 5 %% fps).")
    add_avatar_option(pn)
    pn.add_argument("--size", type=size, default=(1280, 720), metavar="WxH", help="output size (default 1280x720)")
    pn.add_argument("--seconds", type=count(4, 600), default=24, metavar="S",
                    help="seconds of the head turn replayed at 30 fps (default 24)")
    pn.add_argument("--no-output", action="store_true",
                    help="no output readback (default: every frame is read back into a sink that drops it, as a "
                    "virtual camera or video output would; without it software GL may defer a frame's work to the "
                    "preview's readback)")

    a = parsers["all"] = add_command(targets, "all", run_all, help="every benchmark with its default options")
    a.set_defaults(target_parsers=parsers)
    for q in parsers.values():
        add_json_option(q, "the results")
        q.add_argument("--out", type=Path, metavar="FILE", help="also write the results as JSON to FILE")


# ---------------------------------------------------------------------------- the targets
# Each measures with its options and returns the JSON-able result; with ``text`` it also
# prints its table on stdout.

def _solver(args, text: bool) -> dict:
    from avatars.clips.head_turn import head_turn_rotation
    from solver.eval.bench import SAMPLES, default_sets, run_solver_bench

    from ..eval.rig_bench import posed_rig, posed_rig_with
    from ..rig import load_motion

    if args.reference:
        from avatars.eval.node import ReferenceUnavailable
        from solver.eval.reference import ensure_installed

        try:
            ensure_installed()      # before any set runs: fail in a second, not after a minute
        except ReferenceUnavailable as exc:
            raise UsageError(f"--reference: {exc}") from None
    sets = None
    if args.set:
        known = dict(default_sets())
        unknown = [n for n in args.set if n not in known]
        if unknown:
            raise UsageError(f"--set: unknown set {', '.join(unknown)} (sets here: {', '.join(known)})")
        sets = [(n, known[n]) for n in args.set]
    if args.sheets is not None:
        return _run_sheet_bench(args, sys.stdout if text else io.StringIO())
    setup = load_motion(args.motion) if args.motion else None
    rig = posed_rig_with(setup) if setup is not None else posed_rig
    return run_solver_bench(motion=head_turn_rotation, samples=args.samples or SAMPLES, solver=args.solver,
                            reference=args.reference, rig=rig, sets=sets,
                            stream=sys.stdout if text else io.StringIO())


def _render(args, text: bool) -> dict:
    from render.eval.bench import DEFAULT_SIZES, format_table, run_render_bench

    result = run_render_bench([avatar_path(a) for a in args.avatar or ("default", "layered")],
                              sizes=args.size or DEFAULT_SIZES, frames=args.frames, rounds=args.rounds,
                              samples=args.samples, readbacks=tuple(args.readback or ("thread",)),
                              antialias=args.antialias, outlines=args.outlines,
                              details=tuple(args.detail or ("auto",)),
                              background=args.background, backend=args.backend)
    if text:
        print(format_table(result))
    return result


def _tracker(args, text: bool) -> dict:
    from avatars.assets import SELFIE_CLIP, asset_path
    from tracking.eval.bench import bench_tracker_vs_raw
    from tracking.frame_sources import open_source

    clip = args.clip or str(asset_path(*SELFIE_CLIP))
    with open_source(clip) as src:
        images = [f.image for _, f in zip(range(args.frames), src)]
    rows = bench_tracker_vs_raw(images, model_path=args.model, num_faces=args.num_faces)
    if text:
        print(f"tracker on {clip} ({len(images)} frames per size; ours: num_faces={args.num_faces}, adaptive; "
              "raw: MediaPipe alone, num_faces=1; fixed: ours, num_faces fixed); ms median / p95:")
        for r in rows:
            p = r["policy_frames"]
            on_probe = r["ours_minus_raw_probe_median_ms"]
            print(f"  {r['width']}x{r['height']}: ours {r['ours_median_ms']} / {r['ours_p95_ms']}, raw "
                  f"{r['raw_median_ms']} / {r['raw_p95_ms']}, fixed {r['fixed_median_ms']} / {r['fixed_p95_ms']}")
            print(f"    ours - raw per frame: median {r['ours_minus_raw_median_ms']}, "
                  f"p95 {r['ours_minus_raw_p95_ms']}, mean {r['ours_minus_raw_mean_ms']} ms; on probe frames (median) "
                  f"{'-' if on_probe is None else on_probe} ms")
            if r["probe"] is None:
                print(f"    frames: not adaptive (num_faces={r['num_faces']}): every frame ran one landmarker")
            else:
                print(f"    frames: one face {p['one']}, many {p['many']}, fallbacks {p['fallback']}; "
                      f"probes {p['probe']} ({r['probe']})")
            print(f"    a face found in {r['face_frames']} of {r['frames']} timed frames")
            if r["face_frames"] * 2 < r["frames"]:
                print("    warning: no face in most frames: these times are MediaPipe's face search, "
                      "not tracking (use a clip with a face in view)")
    result = {"clip": clip, "frames_per_size": len(images), "num_faces": args.num_faces, "unit": "milliseconds",
              "sizes": rows}
    if getattr(args, "hands", False):
        from tracking.eval.bench import bench_hands

        hands = bench_hands(images, model_path=args.model)
        result["hands"] = hands
        if text:
            print("with --hands (pose + hand landmarkers on the same frames), ms median / p95:")
            for r in hands:
                print(f"  {r['width']}x{r['height']}: face only {r['face_median_ms']} / {r['face_p95_ms']}, with hands "
                      f"{r['hands_median_ms']} / {r['hands_p95_ms']} (+{r['added_median_ms']} per frame; CPU "
                      f"{r['face_cpu_median_ms']} -> {r['hands_cpu_median_ms']}); arms in "
                      f"{r['arm_frames']}, hands in {r['hand_frames']} of {r['frames']} frames")
    return result


def _loop(args, text: bool) -> dict:
    from avatars.assets import SELFIE_CLIP, asset_path

    from ..eval.loop_bench import bench_live_rounds, bench_offline_modes, delay_table

    if args.no_offline and args.no_live and args.no_table:
        raise UsageError("--no-offline, --no-live and --no-table together leave nothing to run")
    if (not args.no_offline or not args.no_live) and (args.size[0] % 2 or args.size[1] % 2):
        raise UsageError(f"--size {args.size[0]}x{args.size[1]}: the runs encode H.264, which needs an even "
                         "width and height")
    src = args.source or str(asset_path(*SELFIE_CLIP))
    avatar = str(avatar_path(args.avatar)) if args.avatar else None
    out: dict = {}
    if not args.no_offline:
        o = out["offline"] = bench_offline_modes(src, avatar=avatar, size=args.size, rounds=args.rounds,
                                                 video_preset=args.video_preset, load=args.load)
        if text:
            print(f"offline {args.size[0]}x{args.size[1]}, {args.rounds} runs each (median; slowest x); x real time "
                  "of the whole run and of its frames (after the set-up):")
            print(f"  {'path':<11}{'x real time':>12}{'slowest':>9}{'frames x':>10}{'set-up s':>10}{'ms/frame':>10}"
                  f"{'CPU ms/frame':>14}{'ffmpeg CPU':>12}{'x on 2 idle cores':>19}")
            for m in ("serial", "pipelined", "replay"):
                r = o[m]
                print(f"  {m:<11}{r['x_realtime']:>12}{r['x_realtime_p95_low']:>9}{r['frames_x_realtime']:>10}"
                      f"{r['setup_s']:>10}{r['ms_per_frame']:>10}"
                      f"{r['cpu_ms_per_frame']:>14}{r['ffmpeg_cpu_ms_per_frame']:>12}{r['x_realtime_2_cores']:>19}")
            print(f"  mp4 sha256 (load {args.load}): " + "; ".join(f"{m} {', '.join(d[:12] for d in o[m]['sha256'])}"
                                                               for m in ("serial", "pipelined", "replay")))
    if not args.no_live:
        modes = args.live_mode or list(DEFAULT_LIVE_MODES)

        def shown(m, k, lv):
            if not text:
                return
            into = ("a stand-in virtual camera (what a v4l2loopback device costs the sender: the I420 "
                    "conversion; no device)" if lv["output"] == "vcam" else lv["output"])
            q = lv.get("quality") or {}
            steps = ", ".join(f"{s['rung']} {'down' if s['down'] else 'up'} @{s['frame']}" for s in q.get("steps", []))
            print(f"live {lv['size']} into {into}, {lv['camera_fps'] or 'clip-rate'} fps camera, load {args.load}, "
                  f"round {k + 1}, {LIVE_MODES[m][0]}: fps {lv['fps']}, dropped {lv['dropped_frames']}, "
                  f"locked {lv['locked_pct']} %; quality steps: {steps or 'none'}; ms p50 / p95:")
            for st, v in lv["stages_ms"].items():
                print(f"  {st:<22}{v['p50']!s:>8} / {v['p95']!s:<8}")

        live = out["live"] = bench_live_rounds(src, modes, rounds=args.live_rounds, load=args.load, on_run=shown,
                                               avatar=avatar, size=args.size, camera_fps=args.camera_fps,
                                               output=args.live_output, duration_s=args.live_seconds)
        if text and args.live_rounds > 1:
            print(f"live, load {args.load}: medians of {args.live_rounds} interleaved rounds")
            print(f"  {'mode':<14}{'fps':>7}{'dropped':>9}{'capture->output p50':>21}{'p95':>7}  governor (per round)")
            for m, r in live["modes"].items():
                c = r["stages_ms"]["capture_to_output"]
                chosen = " | ".join(",".join(q["active"]) or "full" for q in r["quality"])
                print(f"  {m:<14}{r['fps']!s:>7}{r['dropped_frames']!s:>9}{c['p50']!s:>21}{c['p95']!s:>7}  {chosen}")
    if not args.no_table:
        rows = out["delay_table"] = delay_table(src)
        if text:
            print("pose filter: interpolation delay vs extrapolation (30 fps camera and render, tracker 12 ms):")
            print(f"  {'mode':<12}{'delay ms':>9}{'lag ms':>8}{'jitter deg':>12}{'held %':>8}")
            for r in rows:
                print(f"  {r['mode']:<12}{r['delay_ms']:>9}{r['lag_ms']:>8}{r['jitter_deg']:>12}{r['held_pct']:>8}")
    return out


def _tryon(args, text: bool) -> dict:
    from avatars.hair import list_styles

    from ..eval.tryon_bench import bench_fits, bench_live_switch

    styles = args.style or list(list_styles())
    if not styles:
        raise CommandError("no hairstyles: give --style FILE or set $SWAYCAM_HAIR_DIR")
    path = avatar_path(args.avatar)
    out: dict = {"avatar": str(path), "styles": styles}
    if not args.no_fits:
        out["fits"] = bench_fits(path, styles, repeats=args.repeats)
        if text:
            print(f"fit + rig on {path.name} ({args.repeats} runs; seconds, median / p95):")
            print(f"  {'style':<12}{'chains':>7}{'fit':>16}{'rig':>16}{'fit + rig':>16}{'cached + rig':>16}")
            for r in out["fits"]:
                if "error" in r:
                    print(f"  {r['style']:<12} cannot be fitted: {r['error']}")
                    continue
                cols = "".join(f"{r[k]['median']:>9.3f} / {r[k]['p95']:<5.3f}"
                               for k in ("fit_s", "rig_s", "fit_rig_s", "cached_rig_s"))
                print(f"  {r['style']:<12}{r['chains']:>7}{cols}")
    if not args.no_contact:
        from ..eval.tryon_bench import bench_contact

        out["contact"] = bench_contact(path, styles)
        if text:
            print("per-vertex hair contact, headless render (process CPU ms per frame, median; wall ms; "
                  "contact_frame µs):")
            for r in out["contact"]:
                print(f"  {r['style']:<12}{r['hair_vertices']:>6} vertices {r['size']}  off {r['cpu_ms_off']:.2f}  "
                      f"on {r['cpu_ms_on']:.2f}  (wall {r['wall_ms_off']:.1f} / {r['wall_ms_on']:.1f})  "
                      f"{r['contact_frame_us']:.0f} µs")
    if not args.no_live:
        live = out["live"] = bench_live_switch(styles, avatar=str(path) if args.avatar else None, source=args.source,
                                               fps=float(args.fps), size=args.size, paced=not args.no_pacing)
        if text:
            b, f, w = live["baseline_ms"], live["in_flight_ms"], live["swap_frame_ms"]
            print(f"live switch ({live['source']}, {live['size']}, {live['fps']:g} fps"
                  f"{'' if live['paced'] else ', not paced'}; frame period "
                  f"{live['frame_period_ms']} ms, limit {live['limit_ms']} ms):")
            print(f"  frame period ms, median / p95 / max:  before switching {b['median']} / {b['p95']} / {b['max']};"
                  f"  fit in flight {f['median']} / {f['p95']} / {f['max']} ({f['n']} frames);  swap frame "
                  f"{w['median']} / {w['p95']} / {w['max']}")
            print(f"  longest frame period during switches: {live['longest_during_switches_ms']} ms "
                  f"({'within' if live['within_limit'] else 'ABOVE'} the limit)")
            for r in live["switches"]:
                how = ("cached, " if r["cached"] else f"fitted {r['fit_seconds']:.2f} s, ") if r["style"] else ""
                what = r["error"] or f"{how}rig {r['rig_seconds']} s, swap {r['swap_ms']} ms"
                print(f"  {r['phase']:<7}{str(r['style'] or 'own hair'):<12}{r['seconds']:>7.2f} s  longest period "
                      f"{r['longest_period_ms']} ms at {r['longest_at_s']} s  ({what})")
    return out


def _vmc(args, text: bool) -> dict:
    from ..eval.vmc_bench import bench_vmc

    out = {"unit": "microseconds", "avatars": [bench_vmc(str(avatar_path(a)), frames=args.frames)
                                               for a in args.avatar or ("default", "layered")]}
    if text:
        for r in out["avatars"]:
            print(f"{r['avatar']}: {r['bones']} bones, {r['expressions']} expressions, {r['bundle_bytes']} bytes; "
                  f"build {r['build']['median_us']} µs (p95 {r['build']['p95_us']}), build+send "
                  f"{r['build_and_send']['median_us']} µs, receive {r['receive']['median_us']} µs "
                  f"(p95 {r['receive']['p95_us']}), take {r['take_into_buffer']['median_us']} µs")


def _panel(args, text: bool) -> dict:
    from ..eval.panel_bench import bench_panel

    out = bench_panel(size=args.size, seconds=float(args.seconds),
                      avatar=str(avatar_path(args.avatar)) if args.avatar else None, output=not args.no_output)
    if text:
        for k in ("without_panel", "with_panel"):
            r = out[k]
            hk = r["preview_hook"]
            print(f"{k.replace('_', ' '):<14} {out['size']}: frame {r['median_ms']} ms median, {r['p95_ms']} ms p95, "
                  f"{r['fps']} fps ({r['n']} frames); preview hook {hk['median_ms']} ms median, {hk['p95_ms']} ms "
                  f"p95, {hk['total_ms']} ms in all")
        print(f"fps ratio {out['fps_ratio']} (cost {out['fps_cost_pct']} %), median ratio {out['median_ratio']}, "
              f"preview frames read {out['preview_frames_read']}, encoded {out['preview_frames_encoded']}, "
              f"received {out['preview_frames_received']}")
    return out


MEASURE = {"solver": _solver, "render": _render, "tracker": _tracker, "loop": _loop, "tryon": _tryon,
           "vmc": _vmc, "panel": _panel}

#: What a failing benchmark raises besides CommandError, AvatarError and TrackingError
#: (reported as one line, exit code 1; ``bench all`` goes on with the next target).
#: ZeroDivisionError and IndexError: statistics over a clip without usable frames.
FAILURES = (ValueError, OSError, ZeroDivisionError, IndexError)


def _measure(target: str, args) -> dict:
    try:
        return MEASURE[target](args, text=not args.json)
    except CommandError:
        raise
    except FAILURES as exc:
        raise CommandError(str(exc)) from None


def _write(path: Path | None, result: dict) -> None:
    if path is None:
        return
    try:
        path.write_text(json_text(result))
    except OSError as exc:
        raise cannot_write(path, exc) from None


def run_target(args) -> int:
    if args.out is not None:       # before the benchmark: a bad --out fails now, not after it
        writable_file(args.out)
    result = _measure(args.target, args)
    if args.json:
        print_json(result)
    _write(args.out, result)
    return 0


def run_all(args) -> int:
    from avatars import AvatarError
    from tracking.errors import TrackingError

    if args.out is not None:
        writable_file(args.out)
    results, rc = {}, 0
    for target in TARGETS:
        if not args.json:
            print(f"== {target}", flush=True)
        options = args.target_parsers[target].parse_args([])
        options.json = args.json
        try:
            results[target] = _measure(target, options)
        except (CommandError, AvatarError, TrackingError) as exc:
            print(f"{options.command_prog}: {exc}", file=sys.stderr)
            rc = 1
    if args.json:
        print_json(results)
    _write(args.out, results)
    return rc


def _run_sheet_bench(args, stream) -> dict:
    """``swaycam bench solver --sheets [FILE.toml]``: what linked sheets cost per 60 fps frame
    (:func:`solver.eval.sheet_bench.bench_sheets`: with and without, interleaved in one run),
    on the generated default and layered avatars with the ``[hair]`` link settings of FILE
    (none: the try-on's sheets only), on Godette with them too when the shared assets are present
    (its springs are authored: links only where FILE turns them on), and on the generated default
    avatar with each ``--hair`` style fitted (the try-on's sheets, on by default)."""
    from avatars import load_avatar
    from avatars.assets import GODETTE, find_asset
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
    godette = find_asset(*GODETTE)
    if godette is not None:
        sets.insert(0, ("godette", load_avatar(godette), links))
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
