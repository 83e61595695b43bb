"""``--source`` -> a pose input for the loop (see :mod:`runtime.pose_inputs`).

    (none)            webcam 0 when one exists, else the built-in head-turn track
    turn-test         the standard head-turn test (docs/design.md §4.5): 4 s of motion, 8 s still
    0, 1, /dev/videoN a webcam (live)
    FILE.jsonl        a recorded pose track (avatar frame)
    video/GIF/image/folder
                      tracked with MediaPipe, offline (as fast as possible, deterministic)
                      unless ``--realtime`` plays it live
"""

from __future__ import annotations

import logging
import sys
from dataclasses import replace
from pathlib import Path

from avatars.errors import did_you_mean
from tracking.errors import SourceError, TrackingError
from tracking.face_tracker import FaceTrackerOptions
from tracking.head_pose import HeadPoseOptions
from tracking.pose_filter import PoseFilterOptions
from tracking.frame_sources import IMAGE_SUFFIXES, open_source
from tracking.track_io import load_track

from ..clock import NS_PER_S
from ..config import RunConfig
from .base import PoseInput
from .idle import IdlePose
from .live import LiveInput
from .offline import OfflineTracking
from .track import TURN_TEST, TrackInput, head_turn_track

log = logging.getLogger(__name__)

#: A still image (or a single-pose track) is shown this long unless --duration says otherwise.
STILL_SECONDS = 5.0
STILL_FPS = 25.0


def webcam_available(index: int = 0) -> bool:
    """True when a webcam device exists (Linux: /dev/videoN; elsewhere: OpenCV opens it)."""
    if sys.platform.startswith("linux"):
        return Path(f"/dev/video{index}").exists()
    import cv2

    cap = cv2.VideoCapture(index)
    try:
        return bool(cap.isOpened())
    finally:
        cap.release()


def _pose_options(cfg: RunConfig) -> PoseFilterOptions:
    opts = PoseFilterOptions(head=HeadPoseOptions(mirror=cfg.mirror), recenter_at_start=cfg.recenter)
    if cfg.pose_delay_ms is not None:
        opts = replace(opts, delay_ns=int(cfg.pose_delay_ms * 1e6))
    if cfg.filter.extrapolate is not None:      # [filter] extrapolate = true: no interpolation delay needed
        opts = replace(opts, extrapolate=cfg.filter.extrapolate)
    if cfg.filter.max_rate_deg_s is not None:   # the detection gate (tracking/pose_filter.py)
        opts = replace(opts, max_rate_deg_s=float(cfg.filter.max_rate_deg_s))
    if cfg.filter.confirm_frames is not None:
        opts = replace(opts, confirm_frames=cfg.filter.confirm_frames)
    return opts


def _tracker_options(cfg: RunConfig) -> FaceTrackerOptions:
    """The face tracker's options; with ``--hands`` it runs the pose and hand landmarkers too."""
    if not cfg.hands:
        return FaceTrackerOptions(model_path=cfg.face_model)
    from tracking.hands import HandTrackerOptions

    return FaceTrackerOptions(model_path=cfg.face_model, hands=True, hand_options=HandTrackerOptions(
        hand_model=cfg.hand_model, pose_model=cfg.pose_model, mirror=cfg.mirror))


def open_vmc_input(cfg: RunConfig, *, metrics=None) -> tuple[PoseInput, int | None]:
    """``--vmc-listen``: a :class:`runtime.vmc.VmcInput` (marionette: the sender drives the
    avatar; assistant — on 39540 or with ``[vmc] role = "assistant"`` — the sender's face on
    top of the ``--source`` input). Raises TrackingError when the address cannot be bound."""
    from ..vmc import ASSISTANT_PORT, VmcInput, VmcReceiver, parse_listen

    v = cfg.vmc
    host, port = parse_listen(cfg.vmc_listen)
    assistant = v.role == "assistant" or (v.role == "auto" and port == ASSISTANT_PORT)
    opts = v.input_options()
    inner, dur = None, (None if cfg.duration is None else int(cfg.duration * NS_PER_S))
    if assistant:
        inner, dur = open_pose_input(replace(cfg, vmc_listen=None), metrics=metrics)
    try:
        receiver = VmcReceiver(host, port)
    except OSError as exc:
        if inner is not None:
            inner.close()
        raise TrackingError(str(exc.strerror or exc)) from None
    log.info("VMC: listening on %s:%d as %s", host, receiver.address[1], "assistant" if assistant else "marionette")
    if metrics is not None:
        metrics.watch("vmc", receiver.stats.as_dict)      # GET /status, the HUD, the --json summary
    inp = VmcInput(receiver, options=opts, inner=inner, record=None if assistant else cfg.record)
    if cfg.kiosk:
        inp = IdlePose(inp)
    return inp, dur


def open_pose_input(cfg: RunConfig, *, metrics=None) -> tuple[PoseInput, int | None]:
    """The pose input for ``cfg.source`` and the run's duration.

    Returns:
        (input, duration in ns or None). ``input.status().live`` says whether frames are paced
        in real time; the duration is None for a live run that lasts until the source ends
        or the user quits. Under ``cfg.kiosk`` the input is wrapped in :class:`IdlePose`.
        The input is open (close it, or use it as a context manager) but not started.

    Raises:
        TrackingError: the source cannot be opened (the message names it).
    """
    if cfg.vmc_listen is not None:
        inp, dur = open_vmc_input(cfg, metrics=metrics)
        return _with_voice(cfg, inp, None), dur
    from ..lipsync.input import open_voice

    voice = open_voice(cfg)
    try:
        inp, dur = _open_source(cfg, metrics, voice)
    except BaseException:
        if voice is not None:
            voice.close()
        raise
    return _with_voice(cfg, inp, voice), dur


def _with_voice(cfg: RunConfig, inp: PoseInput, voice) -> PoseInput:
    """``inp`` carrying the ``--audio`` voice (:class:`runtime.lipsync.input.VoiceInput`)."""
    if voice is None and cfg.audio is not None:       # a VMC input: the voice is opened here
        from ..lipsync.input import open_voice

        try:
            voice = open_voice(cfg)
        except BaseException:
            inp.close()
            raise
    if voice is None:
        return inp
    from ..lipsync.input import VoiceInput

    return VoiceInput(inp, voice)


def _open_source(cfg: RunConfig, metrics, voice) -> tuple[PoseInput, int | None]:
    """(see :func:`open_pose_input`) the input of ``cfg.source``; ``voice`` goes to its recording."""
    spec = cfg.source
    if spec is None:
        spec = "0" if webcam_available(0) else TURN_TEST
        log.info("source: %s", "webcam 0" if spec == "0" else "the built-in head-turn track (no webcam found)")
    dur = None if cfg.duration is None else int(cfg.duration * NS_PER_S)
    if spec == TURN_TEST or spec.endswith(".jsonl"):
        if cfg.record:
            raise TrackingError(f"--record {cfg.record}: the source {spec!r} is already a pose track; record "
                                "from a webcam or a video/image source")
        track = head_turn_track() if spec == TURN_TEST else load_track(spec)
        if track.header.frame != "avatar":
            raise TrackingError(f"{spec}: a {track.header.frame}-frame track; record with 'swaycam track' "
                                "(avatar frame) to drive an avatar")
        live = bool(cfg.realtime)
        inp = TrackInput(track, live=live)
        if dur is None and not live:
            dur = inp.end_ns - inp.start_ns
            if dur <= 0:  # a single pose: hold it
                dur = int(STILL_SECONDS * NS_PER_S)
                log.warning("%s holds a single pose; showing it for %g s (set --duration)", spec, STILL_SECONDS)
    else:
        is_cam = spec.isdigit() or spec.startswith("/dev/video")
        realtime = bool(cfg.realtime) if cfg.realtime is not None else is_cam
        still = Path(spec).suffix.lower() in IMAGE_SUFFIXES
        repeat = int(round((cfg.duration or STILL_SECONDS) * STILL_FPS)) if still else 1
        try:
            source = open_source(spec, realtime=realtime and not is_cam, repeat=repeat, fps=STILL_FPS)
        except SourceError as exc:    # 'turn-tset': a mistyped built-in name rather than a file
            hint = "" if is_cam or Path(spec).exists() else did_you_mean(Path(spec).name, (TURN_TEST,))
            if hint:
                raise SourceError(f"{exc}{hint}") from None
            raise
        kind = LiveInput if is_cam or realtime else OfflineTracking
        extra = {}
        if kind is OfflineTracking:
            from ..pipeline import DEFAULT_DEPTH

            extra["ahead"] = DEFAULT_DEPTH if cfg.track_ahead is None else int(cfg.track_ahead)
        else:   # no delay asked for: read the newest pose while frames follow the camera
            extra["follow_newest"] = cfg.pose_delay_ms is None and not cfg.filter.extrapolate
            extra["tracker_nice"] = int(cfg.tracker_nice)
        try:
            inp = kind(source, tracker=_tracker_options(cfg), pose=_pose_options(cfg),
                       metrics=metrics, record=cfg.record, voice=None if voice is None else voice.timeline, **extra)
        except BaseException:
            source.close()   # the tracker (model) or the recording could not be opened
            raise
        if kind is OfflineTracking:
            if dur is None:
                info = source.info
                if info.frame_count and info.fps:
                    dur = int(round(info.frame_count * NS_PER_S / info.fps))
                else:
                    dur = 10 * NS_PER_S
    if cfg.kiosk:
        inp = IdlePose(inp)
    return inp, dur
