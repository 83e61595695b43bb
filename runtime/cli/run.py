"""``swaycam run``: the main job (webcam or track -> avatar -> window / vcam / video)."""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import replace

from ..config import MAX_DURATION_S, QUALITY, ConfigError, RunConfig, load_toml, merge
from .args import (
    BUILTIN_AVATARS,
    Progress,
    UsageError,
    add_avatar_option,
    add_command,
    add_json_option,
    add_motion_options,
    add_solver_option,
    background,
    cannot_write,
    count,
    existing_dir,
    existing_file,
    motion_values,
    number,
    positive,
    size,
)

log = logging.getLogger(__name__)


def add_parser(sub) -> None:
    p = add_command(
        sub, "run", run, help="run the avatar: webcam (or a track) -> VRM -> window / virtual camera / video",
        description="Track the head (webcam, video, image, pose track or the built-in turn test), drive the "
        "avatar's head and hair at a fixed 120 Hz, and draw into a window, a virtual camera or a video file. "
        "With no webcam the built-in head-turn track plays; with no display a video is written under ./out.",
        epilog="window keys: r recenter, o overlays, h HUD, s switch solver, c compare solvers side by side, "
        "m next clip of the --motion file (then the idle), [ / ] previous / next hairstyle of the hair folder, "
        "1-9 hairstyle number N, 0 the avatar's own hair, space pause, p screenshot, q/esc quit")
    add_avatar_option(p)
    p.add_argument("--source", help="webcam index or /dev/videoN, a video/GIF/image/folder, a pose track "
                   ".jsonl, or 'turn-test' (default: webcam 0 if present, else turn-test)")
    p.add_argument("--output", action="append", metavar="OUT",
                   help="window | vcam[:DEVICE] | video:PATH.mp4 | png:DIR (repeat for several)")
    p.add_argument("--fps", type=number(1, 1000),
                   help="render rate, 1..1000 (default 60 live, synced to the display in a window, and 30 offline, "
                   "a file source played as fast as possible or, into a window, at its own speed)")
    p.add_argument("--size", type=size, metavar="WxH", help="output size in pixels (default 1280x720)")
    p.add_argument("--background", type=background, metavar="COLOR",
                   help="transparent | green | #rrggbb (default #202430)")
    add_solver_option(p, default_text="rest-shape")
    p.add_argument("--mirror", dest="mirror", action="store_true", default=None, help="selfie view (default)")
    p.add_argument("--no-mirror", dest="mirror", action="store_false", help="the avatar copies the camera view")
    p.add_argument("--framing", choices=("bust", "full", "hair", "back"),
                   help="camera framing: bust, full body, hair close-up, back view (default bust)")
    p.add_argument("--inspect", choices=("mesh", "mesh+guides", "guides", "weights"),
                   help="a fitted style's inspection view: the raw mesh (default), mesh + guides (cyan attached "
                   "to the scalp, green joined, orange rejected), guides only, the skin weights of one chain "
                   "(key g cycles, . the chain)")
    p.add_argument("--guide-roots", dest="guide_roots", action="store_true", default=None,
                   help="the inspection views show the guides' suggested roots (key t)")
    p.add_argument("--antialias", choices=("auto", "msaa", "fxaa", "off"),
                   help="anti-aliasing: 4x MSAA, an FXAA pass, or none (default auto: MSAA on GPUs, off on "
                   "software OpenGL, where both cost more than a frame's budget)")
    p.add_argument("--quality", choices=QUALITY,
                   help="live quality governor: auto (default: under load, steps down tracker rate, mesh detail, a "
                   "window's render scale, outlines, a window's rate, and back up when the load goes), full "
                   "(never steps), or a step pinned (it and every step before it)")
    p.add_argument("--tracker-nice", type=int, choices=range(-20, 20), metavar="N",
                   help="live: the tracking thread's nice value above the process's, default 0 (a negative value "
                   "needs CAP_SYS_NICE or RLIMIT_NICE, else it is logged and ignored)")
    p.add_argument("--config", type=existing_file, metavar="FILE.toml",
                   help="TOML settings file (command-line options win)")
    p.add_argument("--record", metavar="POSES.jsonl", help="record the tracked head poses")
    p.add_argument("--duration", type=positive(MAX_DURATION_S), metavar="SECONDS",
                   help="seconds to run (default: the source's length)")
    p.add_argument("--realtime", dest="realtime", action="store_true", default=None,
                   help="play a file source live, in real time (default: offline, every frame)")
    p.add_argument("--kiosk", action="store_true", default=None,
                   help="fullscreen, no overlays, recenter on a new face, idle pose when nobody is there")
    p.add_argument("--no-recenter", dest="recenter", action="store_false", default=None,
                   help="keep the tracker's neutral pose (facing the camera) instead of taking the first "
                   "tracked face as neutral, and in kiosk mode each new one (r and POST /recenter still recenter)")
    p.add_argument("--overlays", action="store_true", default=None, help="show springs, colliders, head axes")
    p.add_argument("--hud", action="store_true", default=None, help="show fps, tracker latency, substeps")
    p.add_argument("--service", action="store_true", default=None, help="start the local control service")
    p.add_argument("--port", type=count(0, 65535), help="control service port on 127.0.0.1 (default 8765)")
    p.add_argument("--service-token", metavar="TOKEN",
                   help="require 'Authorization: Bearer TOKEN' from clients other than the panel; 'auto' "
                   "generates one and prints it")
    p.add_argument("--avatar-dir", type=existing_dir, metavar="DIR", help="folder POST /avatar may load avatars from")
    p.add_argument("--motion-dir", type=existing_dir, metavar="DIR", help="folder POST /motion may load clips from")
    p.add_argument("--record-dir", metavar="DIR",
                   help="folder the panel's recordings (POST /record) go to (default ./recordings)")
    p.add_argument("--face-model", type=existing_file, metavar="PATH",
                   help="MediaPipe face_landmarker.task to use (default: $SWAYCAM_FACE_MODEL or the verified "
                   "cached download)")
    p.add_argument("--hands", action="store_true", default=None,
                   help="arms and hands from the webcam: MediaPipe's pose and hand landmarkers on the face's frames "
                   "(models: --hand-model/--pose-model, or assembled once from MediaPipe's npm packages; "
                   "python -m tracking.hand_model --ensure)")
    p.add_argument("--hand-model", type=existing_file, metavar="PATH", help="a hand_landmarker.task (default: "
                   "$SWAYCAM_HAND_MODEL or the verified cached bundle)")
    p.add_argument("--pose-model", type=existing_file, metavar="PATH", help="a pose_landmarker.task (default: "
                   "$SWAYCAM_POSE_MODEL or the verified cached bundle)")
    p.add_argument("--audio", nargs="?", const="auto", metavar="mic|FILE",
                   help="lip sync from audio: 'mic' the default microphone, FILE an audio/video file's track "
                   "(analysed offline); alone: the source file's own audio track, else the microphone. "
                   "Calibrate with 'swaycam calibrate --audio'; [lipsync] in the config sets the mix")
    p.add_argument("--vmc-send", action="append", metavar="HOST[:PORT]",
                   help="send the avatar over the VMC protocol to a Marionette (VSeeFace, Warudo and others; default port "
                   "39539; repeat for several)")
    p.add_argument("--vmc-listen", nargs="?", const="39539", metavar="[HOST:]PORT",
                   help="receive VMC: on 39539 another app drives the avatar (Marionette), on 39540 its face data "
                   "joins the camera's (Assistant); listens on 127.0.0.1 unless HOST is given")
    add_motion_options(p, default="idle", in_place_default=True)
    g = p.add_argument_group("hairstyle try-on")
    g.add_argument("--hair", metavar="STYLE", help="try this hairstyle on the avatar: a style name in the hair folder "
                   "or a hair file (.obj with MakeHuman .mhmat/.mhclo, .glb/.gltf/.vrm with one mesh); fitted, "
                   "rigged and cached before the run starts (default: the avatar's own hair)")
    g.add_argument("--hair-dir", type=existing_dir, metavar="DIR", help="hair folder: where --hair names, the "
                   "hairstyle keys and POST /hairstyle find styles (default: $SWAYCAM_HAIR_DIR and the shared "
                   "assets' hair folder)")
    g.add_argument("--hide-own-hair", dest="hide_own_hair", action="store_true", default=None,
                   help="hide the avatar's own hair under a fitted style: meshes skinned only to the head and "
                   "the spring joints under it, or its triangles cut out of a mesh it shares with the face or body "
                   "(default; the log says what was hidden)")
    g.add_argument("--keep-own-hair", dest="hide_own_hair", action="store_false",
                   help="keep the avatar's own hair under a fitted style")
    add_json_option(p, "the exit summary")


class FirstFrameLog:
    """The session's ``on_frame`` hook: logs (INFO, shown with ``-v``) once, after the first
    frame was drawn and sent to the outputs (in a window: swapped, on screen), how many seconds
    after the command started (:data:`runtime.cli.STARTED`) that was."""

    def __init__(self) -> None:
        self.done = False

    def __call__(self, info, rig) -> None:
        if not self.done:
            self.done = True
            from . import STARTED

            log.info("first frame sent %.2f s after the command started", time.perf_counter() - STARTED)


def config_from_args(args) -> RunConfig:
    base = load_toml(args.config) if args.config else RunConfig()
    values = {k: getattr(args, k, None) for k in (
        "avatar", "source", "fps", "background", "solver", "mirror", "framing", "inspect", "guide_roots", "antialias",
        "record", "duration",
        "realtime", "kiosk", "recenter", "overlays", "hud", "service", "port", "avatar_dir", "face_model", "motion_dir",
        "record_dir", "hair_dir", "vmc_listen", "service_token", "audio", "hands", "hand_model", "pose_model",
        "quality", "tracker_nice")}
    if getattr(args, "vmc_send", None):
        values["vmc_send"] = tuple(args.vmc_send)
    motion = base.motion
    if motion.in_place is None:                  # run: root motion removed unless --no-in-place
        motion = replace(motion, in_place=True)
    values["motion"] = replace(motion, **motion_values(args))
    tryon = base.tryon
    if args.hair is not None:
        tryon = replace(tryon, style=args.hair)
    if args.hide_own_hair is not None:
        tryon = replace(tryon, hide_own_hair=args.hide_own_hair)
    values["tryon"] = tryon
    if values["avatar"] in BUILTIN_AVATARS:
        from .args import avatar_path

        values["avatar"] = str(avatar_path(values["avatar"]))
    if args.output:
        values["output"] = tuple(args.output)
    if args.size:
        values["size"] = args.size
    return merge(base, values)


def preflight(cfg: RunConfig) -> None:
    """Before anything loads: a warning on stderr for each option this run would ignore
    (:func:`runtime.preflight.ignored_options`); a CommandError for a ``--record`` file that
    cannot be written."""
    from render.platform import has_display

    from ..pose_inputs.open import webcam_available
    from ..preflight import check_run_files, ignored_options

    for note in ignored_options(cfg, display=has_display(), webcam=webcam_available):
        print(f"swaycam run: warning: {note}", file=sys.stderr, flush=True)
    try:
        check_run_files(cfg)
    except OSError as exc:
        raise cannot_write(cfg.record, exc) from None


def run(args) -> int:
    from avatars import AvatarError
    from tracking.errors import TrackingError

    try:
        cfg = config_from_args(args)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    preflight(cfg)
    from ..session import RunError, Session

    try:
        progress = Progress()
        try:
            # with --json, stdout carries the one JSON document: the run's notes go to stderr
            say_to = sys.stderr if args.json else sys.stdout
            with Session(cfg, say=lambda s: print(s, file=say_to, flush=True), progress=progress,
                         on_frame=FirstFrameLog()) as session:
                result = session.run()
        finally:
            progress.close()
    except (AvatarError, TrackingError, ConfigError, RunError) as exc:
        print(f"swaycam run: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        print(f"swaycam run: cannot write{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        name = type(exc).__name__
        if name in ("ContextError", "VirtualCameraUnavailable"):
            print(f"swaycam run: {exc}", file=sys.stderr)
            return 1
        raise
    s = result.summary
    if args.json:
        print(json.dumps({"frames": result.frames, "outputs": result.outputs, "seconds": round(result.duration_s, 3),
                          **s}))
    else:
        lat = (f", latency p50 {s['latency_ms_p50']} ms p95 {s['latency_ms_p95']} ms"
               if s.get("latency_ms_p50") is not None else "")
        trk = f", tracker p50 {s['tracker_ms_p50']} ms" if s.get("tracker_ms_p50") is not None else ""
        print(f"{result.frames} frames in {result.duration_s:.1f} s{lat}{trk}, "
              f"{s['substeps_per_frame']} substeps/frame, dropped {s['dropped_frames']} frames / "
              f"{s['dropped_substeps']} substeps" + (" (interrupted)" if result.interrupted else ""))
        vmc = s.get("vmc")
        if vmc is not None:
            print(f"VMC: {vmc['datagrams']} datagrams, {vmc['states']} states, {vmc['dropped']} dropped "
                  f"({vmc['malformed']} malformed, {vmc['bad_types']} bad types, {vmc['non_finite']} non-finite, "
                  f"{vmc['unknown_bones']} unknown bones, {vmc['refused_names']} refused names)")
        if result.tracked_frames is not None:
            print(f"face found in {result.face_frames} of {result.tracked_frames} tracked frames"
                  + ("" if result.face_frames else " (no face: the avatar held its neutral pose)"))
        for o in result.outputs:
            if o.startswith(("video:", "png:")):
                print(f"output: {o.split(':', 1)[1]}")
    return 128 + int(result.signal) if result.interrupted else 0
