"""``swaycam calibrate SOURCE``: the panel's guided neutral / blink / mouth calibration from the
command line; the ranges are saved as the config's ``[calibration]`` table.
``swaycam calibrate --audio``: the vowel profile of lip sync from audio (runtime/lipsync)."""

from __future__ import annotations

import sys

from .args import (
    CommandError,
    UsageError,
    add_command,
    add_face_model_options,
    add_json_option,
    positive,
    print_json,
    writable_file,
)

_DESCRIPTION = """Measure your blink and mouth ranges, as the panel's Calibrate card does: look straight and
relax, then blink, then open the mouth wide. The ranges ([calibration] blendshape = [lo, hi]) are
written into the config file ('swaycam run --config FILE' then uses them).

    swaycam calibrate 0                            webcam 0, guided: follow the prompts
    swaycam calibrate clip.mp4                     a clip: every phase over the whole clip
    swaycam calibrate clip.mp4 --guided            a clip recorded following the guided prompts
    swaycam calibrate poses.jsonl --phase neutral=0:2 --phase blink=2:5 --phase mouth=5:8

    swaycam calibrate --audio                      lip sync: say each vowel into the microphone
    swaycam calibrate --audio --take a=a.wav --take i=i.wav ...   or from files (a i u e o silence)

SOURCE is a webcam index or /dev/video*, a video, GIF, image folder, or a pose track (.jsonl).
With --audio the vowel profile (A, I, U, E, O and silence) is saved to --voice-profile
(default: the cache's voice_profile.json, which 'swaycam run --audio' then uses).
Phases are windows in seconds from the first frame. Guided (the default for a webcam): each
phase gets GET-READY seconds, then --seconds are collected. lo = the neutral phase's median,
hi = the blink / mouth phase's 95th percentile (at least lo + 0.2)."""


def add_parser(sub) -> None:
    p = add_command(sub, "calibrate", run, help="guided blink and mouth calibration; saved to the config",
                    description=_DESCRIPTION)
    p.add_argument("source", metavar="SOURCE", nargs="?", help="webcam index or /dev/video*, video, GIF, image "
                   "folder, or a pose track (.jsonl); not with --audio")
    g = p.add_argument_group("lip sync from audio")
    g.add_argument("--audio", action="store_true", help="calibrate the vowel profile of lip sync instead: "
                   "from the microphone (guided) or from --take files")
    g.add_argument("--take", action="append", default=[], metavar="VOWEL=FILE",
                   help="a take of VOWEL (a, i, u, e, o or silence) from an audio/video file (repeatable; "
                   "vowels without one keep the current profile's)")
    g.add_argument("--voice-profile", metavar="PATH", help="where the profile is saved (default: "
                   "$SWAYCAM_VOICE_PROFILE or the cache's voice_profile.json)")
    p.add_argument("--config", metavar="FILE", default="swaycam.toml",
                   help="the TOML config to write [calibration] into (created when missing; default swaycam.toml)")
    p.add_argument("--no-save", action="store_true", help="only print the ranges")
    p.add_argument("--guided", action="store_true", help="the guided schedule on a file too (default for webcams)")
    p.add_argument("--seconds", type=positive(60), default=3.0, metavar="S",
                   help="seconds collected per guided phase (default 3)")
    p.add_argument("--phase", action="append", default=[], metavar="NAME=A:B",
                   help="collect phase NAME (neutral, blink, mouth) from A to B seconds (repeatable)")
    p.add_argument("--no-mirror", action="store_true", help="do not mirror (as swaycam run --no-mirror)")
    add_face_model_options(p)
    add_json_option(p, "the ranges and frames per phase")


def _phase(text: str) -> tuple[str, tuple[float, float]]:
    from ..panel.calibration import PHASES

    name, _, span = text.partition("=")
    a, _, b = span.partition(":")
    try:
        lo, hi = float(a), float(b)
    except ValueError:
        raise UsageError(f"--phase {text!r}: expected NAME=A:B (seconds), e.g. blink=2:5") from None
    if name not in PHASES:
        raise UsageError(f"--phase {text!r}: NAME must be one of {', '.join(PHASES)}")
    if not 0 <= lo < hi:
        raise UsageError(f"--phase {text!r}: need 0 <= A < B")
    return name, (lo, hi)


def _track_samples(path: str):
    from tracking.track_io import load_track

    tr = load_track(path)
    t0 = int(tr.t_ns[0]) if len(tr) else 0
    for i in range(len(tr)):
        yield (int(tr.t_ns[i]) - t0) / 1e9, tr.blendshapes[i], bool(tr.found[i])


def _tracked_samples(src, args):
    """(t s, blendshapes, found) of each frame: the tracker + pose filter, as swaycam run."""
    from tracking.face_tracker import FaceTracker, FaceTrackerOptions
    from tracking.head_pose import HeadPoseOptions
    from tracking.pose_filter import PoseFilter, PoseFilterOptions
    from tracking.pose_track import PoseSample

    pf = PoseFilter(PoseFilterOptions(head=HeadPoseOptions(mirror=not args.no_mirror), delay_ns=0))
    sample = PoseSample()
    t0 = None
    with FaceTracker(FaceTrackerOptions(model_path=args.model, num_faces=args.num_faces)) as tracker:
        for frame in src:
            obs = tracker.process_frame(frame)
            pf.push(obs)
            pf.sample(obs.timestamp_ns, out=sample)
            t0 = frame.timestamp_ns if t0 is None else t0
            yield (frame.timestamp_ns - t0) / 1e9, sample.blendshapes, bool(obs.found and sample.found)


def calibrate(args, say) -> dict:
    """The ranges of ``args`` (see the parser) and the frames of each phase."""
    from ..panel.calibration import PHASES, PROMPTS, collect, guided_windows

    phases = dict(_phase(t) for t in args.phase)
    is_track = args.source.lower().endswith(".jsonl")
    live = False
    if not is_track:
        from tracking.frame_sources import open_source

        src = open_source(args.source)
        live = bool(src.info.live)
    if args.guided or live:
        windows = {**guided_windows(args.seconds), **phases}
    else:
        whole = (0.0, float("inf"))
        windows = {p: phases.get(p, whole) for p in PHASES}
    cue = (lambda p: say(f"{p}: {PROMPTS[p]} ({windows[p][1] - windows[p][0]:g} s)")) if live else None
    if is_track:
        c = collect(_track_samples(args.source), windows)
    else:
        with src:
            c = collect(_tracked_samples(src, args), windows, on_phase=cue)
    try:
        ranges = c.ranges()
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return {"source": args.source, "frames": c.counts(),
            "windows": {p: [a, None if b == float("inf") else b] for p, (a, b) in windows.items()},
            "calibration": ranges}


def calibrate_audio(args, say, *, stream_factory=None) -> dict:
    """``--audio``: the vowel profile from --take files or guided microphone takes, saved."""
    from tracking.audio.calibration import class_name, profiles_from_takes
    from tracking.audio.profiles import ProfileError
    from tracking.audio.source import decode_audio
    from tracking.errors import TrackingError

    from ..lipsync import load_profiles, profile_path

    target = args.voice_profile or str(profile_path())
    writable_file(target)
    try:
        base = load_profiles()
        if args.take:
            takes = {}
            for t in args.take:
                key, _, path = t.partition("=")
                try:
                    class_name(key)
                except ValueError as exc:
                    raise UsageError(f"--take {t!r}: {exc}") from None
                takes[key] = decode_audio(path, base.mfcc.sample_rate)
        else:
            from tracking.audio.classifier import LipSyncAnalyzer
            from tracking.audio.source import MicrophoneStream

            from ..lipsync.calibrate import TakeRecorder, guided_takes

            rec = TakeRecorder()
            kw = {} if stream_factory is None else {"stream_factory": stream_factory}
            with MicrophoneStream(LipSyncAnalyzer(base), on_window=rec, **kw) as mic:
                takes = guided_takes(mic, rec, seconds=args.seconds, say=say)
        prof = profiles_from_takes(takes, mfcc=base.mfcc, base=base)
        prof.save(target)
    except (ProfileError, TrackingError, OSError) as exc:
        raise CommandError(str(exc)) from None
    return {"voice_profile": target, "windows": {c: len(v) for c, v in prof.samples.items()},
            "takes": sorted(takes)}


def run(args) -> int:
    from ..panel.config_file import save_tables

    if args.audio:
        if args.source is not None:
            raise UsageError("calibrate --audio takes no SOURCE (use --take VOWEL=FILE for files)")
        out = calibrate_audio(args, say=lambda s: print(s, file=sys.stderr, flush=True))
        if args.json:
            print_json(out)
            return 0
        print(f"voice profile ({', '.join(out['takes'])}) -> {out['voice_profile']}")
        for c, n in out["windows"].items():
            print(f"  {c:<8} {n} windows")
        return 0
    if args.source is None:
        raise UsageError("calibrate needs a SOURCE (or --audio)")
    if args.take:
        raise UsageError("--take needs --audio")

    if not args.no_save:        # before collecting: a config that cannot be written fails now
        writable_file(args.config)
    out = calibrate(args, say=lambda s: print(s, file=sys.stderr, flush=True))
    if not args.no_save:
        try:
            save_tables(args.config, {"calibration": out["calibration"]})
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"cannot write {args.config}: {exc.strerror or exc}") from None
        out["config"] = args.config
    if args.json:
        print_json(out)
        return 0
    frames = ", ".join(f"{p} {n}" for p, n in out["frames"].items())
    print(f"{out['source']}: frames with a face per phase: {frames}")
    for name, (lo, hi) in out["calibration"].items():
        print(f"  {name:<14} {lo:.4f} .. {hi:.4f}")
    if "config" in out:
        print(f"[calibration] -> {out['config']}")
    return 0
