"""Run settings: defaults < TOML file (``--config``) < command-line options.

TOML keys are the long option names with ``_`` (``fps = 30``, ``output = ["window"]``,
``background = "#00ff00"``); sections ``[filter]``, ``[drive]``, ``[hair]`` and ``[motion]``
hold tracker filter, head drive, hair solver and body motion settings; ``[tryon]`` the
hairstyle try-on, with ``hair_dir`` the folder styles are looked up in (and the one
``POST /hairstyle`` may load from); ``[vmc]`` the VMC protocol; ``[lipsync]`` lip sync
from audio (``audio = "mic"``). ``[motion]``, ``[tryon]``,
``[vmc]`` and ``[filter]`` are parsed once into typed sections
(:mod:`runtime.config_sections`); ``[drive]`` and ``[hair]`` stay tables (checked here and
by :func:`runtime.rig.hair_params.parse_hair`). Degrees appear only here, at the edge.

A RunConfig is the frozen start-up configuration. What the panel and the service change while
the run goes on (expressions, calibration, hair, background) lives in
:class:`runtime.live_settings.LiveSettings`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import tomllib

from solver.modes import SOLVER_NAMES

from .clock import DEFAULT_MAX_SUBSTEPS
from .config_sections import FilterSection, LipSyncSection, MotionSection, TryOnSection, VmcSection
from .errors import ConfigError, SettingsError

FRAMINGS = ("bust", "full", "hair", "back")   # render.camera.FRAMINGS
INSPECT_MODES = ("mesh", "mesh+guides", "guides", "weights")   # render.inspection.INSPECT_MODES
ANTIALIAS = ("auto", "msaa", "fxaa", "off")   # render.antialias.MODES
#: the quality governor's settings (runtime.governor.PINS + RUNG_ORDER)
QUALITY = ("auto", "full", "tracker", "detail", "scale", "outlines", "rate")


@dataclass(frozen=True)
class RunConfig:
    """Everything ``swaycam run`` needs (see README, "Configuration")."""

    avatar: str | None = None          # None: the generated default avatar
    avatar_dir: str | None = None      # folder POST /avatar may load from
    source: str | None = None          # None: webcam 0 if present, else turn-test
    output: tuple[str, ...] = ()       # () : window if a display exists, else video under ./out
    fps: float | None = None           # None: 60 live (vsync), 30 offline
    size: tuple[int, int] = (1280, 720)
    background: str = "#202430"        # "transparent", "green" or "#rrggbb"
    solver: str = "rest-shape"
    mirror: bool = True
    framing: str = "bust"              # "bust", "full", "hair" (close-up on the hair), "back"
    inspect: str = "mesh"              # a fitted style's inspection view: "mesh", "mesh+guides", "guides"
    guide_roots: bool = False          # the inspection views show the guides' suggested roots
    antialias: str = "auto"            # "auto" (MSAA on GPUs, off on llvmpipe), "msaa", "fxaa", "off"
    record: str | None = None
    duration: float | None = None      # seconds; None: the source's own length (turn-test: 12 s)
    realtime: bool | None = None       # None: live for webcams, offline for files
    kiosk: bool = False
    recenter: bool = True              # the first tracked face (and in kiosk mode each new one) is the neutral pose
    overlays: bool = False
    hud: bool = False
    service: bool = False
    port: int = 8765
    service_token: str | None = None   # None: no token; "auto": generated and printed; else the token
    max_substeps: int = DEFAULT_MAX_SUBSTEPS   # live: substeps per frame before debt is dropped (200 ms)
    pose_delay_ms: float | None = None  # None: one camera frame, or the tracker's latency while frames follow poses
    frame_lock: bool = True            # live: draw when a tracked pose arrives (camera at the frame rate)
    face_model: str | None = None      # None: $SWAYCAM_FACE_MODEL or the cached download
    audio: str | None = None           # lip sync: None off; "auto" (the source file's audio track, else the
                                       # microphone), "mic" (the default input device) or an audio/video file
    hands: bool = False                # arms and hands from the webcam (tracking.hands, runtime.hands)
    hand_model: str | None = None      # None: $SWAYCAM_HAND_MODEL or the verified cached bundle (tracking.hand_model)
    pose_model: str | None = None      # None: $SWAYCAM_POSE_MODEL or the verified cached bundle
    lipsync: LipSyncSection = LipSyncSection()   # [lipsync]: mix, profile, min_db, max_db, compare, weights
    filter: FilterSection = FilterSection()
    drive: dict = field(default_factory=dict)
    hair: dict = field(default_factory=dict)
    motion: MotionSection = MotionSection()     # [motion]; clip "idle" unless said
    motion_dir: str | None = None      # folder POST /motion may load clips from
    vmc_send: tuple[str, ...] = ()     # VMC Performer targets HOST[:PORT] (runtime.vmc.sender)
    vmc_listen: str | None = None      # VMC receiver [HOST:]PORT (39539 marionette, 39540 assistant)
    vmc: VmcSection = VmcSection()     # [vmc]: divisor, names, role, face, head, delay_ms, hold_s, ease_s
    record_dir: str | None = None      # folder the panel's recordings go to (None: ./recordings)
    tryon: TryOnSection = TryOnSection()    # [tryon]: style, hide_own_hair, prewarm
    hair_dir: str | None = None        # hair styles folder (None: $SWAYCAM_HAIR_DIR and the shared assets')
    outlines: str = "auto"             # MToon outlines: "auto" (off on llvmpipe), "on", "off" (render.quality)
    detail: str = "auto"               # mesh detail: "auto" (reduced on llvmpipe), "full", "reduced" (render.detail)
    quality: str = "auto"              # live quality governor: "auto" (steps under load), "full" (never), or a step
                                       # pinned: tracker, detail, scale, outlines, rate (runtime.governor)
    tracker_nice: int = 0              # live: the tracking thread's nice value above the process's (-20..19;
                                       # negative needs CAP_SYS_NICE / RLIMIT_NICE, else logged and ignored)
    video_preset: str = "auto"         # x264 preset of video outputs: "auto" (live ultrafast, offline superfast) or one of X264_PRESETS
    track_ahead: int | None = None     # offline: frames tracked ahead on a worker (None: runtime.pipeline's; 0: serial)
    expressions: dict = field(default_factory=dict)  # [expressions]: keys {name: key}, mode, fade_ms (the panel)
    calibration: dict = field(default_factory=dict)  # [calibration]: {blendshape: [lo, hi]} per-user ranges
    #: the TOML file this config was read from (set by load_toml, not a setting): where the panel saves
    config_path: str | None = None

    @property
    def hair_style(self) -> str | None:
        """The hairstyle to try on: ``[tryon] style`` (None: the avatar's own hair)."""
        return self.tryon.style_name


def parse_size(text: str, where: str = "size") -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(text))
    if not m or int(m.group(1)) < 16 or int(m.group(2)) < 16 or int(m.group(1)) > 7680 or int(m.group(2)) > 4320:
        raise ConfigError(f"{where}: {text!r} is not WIDTHxHEIGHT between 16x16 and 7680x4320")
    return int(m.group(1)), int(m.group(2))


def parse_background(text: str, where: str = "background") -> tuple[float, float, float, float]:
    """RGBA in [0, 1] (sRGB) for "transparent", "green" (chroma key #00ff00, as the renderer draws it) or "#rrggbb"."""
    t = str(text).strip().lower()
    if t == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    if t in ("green", "chroma", "chroma-green"):
        return (0.0, 1.0, 0.0, 1.0)
    m = re.fullmatch(r"#?([0-9a-f]{6})", t)
    if not m:
        raise ConfigError(f"{where}: {text!r} is not 'transparent', 'green' or '#rrggbb'")
    v = int(m.group(1), 16)
    return ((v >> 16) / 255, ((v >> 8) & 255) / 255, (v & 255) / 255, 1.0)


_NUMBERS = ("fps", "duration", "port", "max_substeps", "pose_delay_ms", "tracker_nice")
_BOOLS = ("mirror", "realtime", "kiosk", "recenter", "overlays", "hud", "service", "frame_lock", "hands", "guide_roots")


def _choices() -> dict[str, tuple[str, ...]]:
    """The string keys with a fixed set of values, and those values (one table for both
    errors: a value not among them, a value of another type)."""
    return {"solver": tuple(SOLVER_NAMES), "framing": tuple(FRAMINGS), "inspect": tuple(INSPECT_MODES), "outlines": ("auto", "on", "off"),
            "detail": ("auto", "full", "reduced"), "video_preset": ("auto", *X264_PRESETS),
            "antialias": ANTIALIAS, "quality": QUALITY}


_STRINGS = ("avatar", "avatar_dir", "source", "background", "solver", "framing", "inspect", "antialias", "outlines", "detail", "quality", "video_preset", "record",
            "face_model", "motion_dir", "hair_dir", "record_dir", "service_token", "audio", "hand_model", "pose_model")
VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov", ".avi")
#: x264's speed presets, fastest first (render.sinks.video.PRESETS; here without importing the renderer)
X264_PRESETS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow")
#: What video_preset "auto" means (1280x720 here, CPU per frame / size of the 9 s selfie clip's
#: output): live, ultrafast (4.6 ms / 3.3 MB): the encoder shares two cores with tracking and
#: drawing, and veryfast (11.7 ms) lifted live capture-to-output p95 from ~40 to 76-89 ms;
#: offline, superfast (7.6 ms / 1.6 MB, PSNR 56.8 dB) rather than veryfast (11.7 ms / 0.6 MB,
#: 54.3 dB): docs/history/runtime-notes.md, issue 20.
AUTO_PRESET = {"live": "ultrafast", "offline": "superfast"}


def video_preset(cfg_preset: str, live: bool) -> str:
    """The x264 preset of a run's video outputs (``video_preset``; "auto": :data:`AUTO_PRESET`)."""
    return AUTO_PRESET["live" if live else "offline"] if cfg_preset == "auto" else cfg_preset
#: Why a transparent background cannot go into a video file or a virtual camera (both opaque).
NO_ALPHA = ("H.264 video and virtual cameras have no alpha, so the transparent background would come out "
            "black (use png:DIR to keep alpha, or background green for a chroma key)")


#: Allowed [drive] values (see runtime.rig.drive.DriveOptions).
DRIVE_RANGES = {"neck_share": (0.0, 1.0), "lean_share": (0.0, 2.0), "max_lean": (0.0, 0.5),
                "arms_down_deg": (0.0, 90.0)}
#: Longest run accepted, seconds (a year: keeps nanosecond times in int64).
MAX_DURATION_S = 365 * 24 * 3600.0


def _check_types(cfg: RunConfig, where: str) -> None:
    for name in _NUMBERS:
        v = getattr(cfg, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise ConfigError(f"{where} {name}: {v!r} is not a number")
        if v is not None and not math.isfinite(v):
            raise ConfigError(f"{where} {name}: {v!r} is not a finite number")
    for name in _BOOLS:
        v = getattr(cfg, name)
        if v is not None and not isinstance(v, bool):
            raise ConfigError(f"{where} {name}: {v!r} is not true/false")
    for name in _STRINGS:
        v = getattr(cfg, name)
        if v is not None and not isinstance(v, str):
            shown = str(v).lower() if isinstance(v, bool) else repr(v)      # TOML's spelling of true/false
            choices = _choices().get(name)
            raise ConfigError(f"{where} {name}: {shown} is not a string"
                              + (f" (one of {', '.join(chr(34) + c + chr(34) for c in choices)})" if choices else ""))
    if not all(isinstance(o, str) for o in cfg.output):
        raise ConfigError(f"{where} output: {list(cfg.output)!r} is not a list of strings")
    from .rig.drive import DriveOptions

    known = {f.name for f in fields(DriveOptions)}
    for key, value in (cfg.drive or {}).items():
        if key not in known:
            raise ConfigError(f"{where} drive.{key}: unknown setting (known: {', '.join(sorted(known))})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{where} drive.{key}: {value!r} is not a finite number")
        lo, hi = DRIVE_RANGES.get(key, (-math.inf, math.inf))
        if not lo <= value <= hi:
            raise ConfigError(f"{where} drive.{key}: {value} is outside {lo:g}..{hi:g}")
    from .rig.hair_params import parse_hair

    try:
        parse_hair(cfg.hair)
    except SettingsError as exc:
        raise ConfigError(f"{where} {exc}") from None
    cfg.motion.check(where)
    cfg.tryon.check(where)
    cfg.filter.check(where)
    from .panel.settings import check_calibration, check_expressions

    try:
        check_expressions(cfg.expressions)
        check_calibration(cfg.calibration)
    except SettingsError as exc:
        raise ConfigError(f"{where} {exc}") from None


def tryon_settings(tryon: TryOnSection):
    """The ``[tryon]`` section -> :class:`avatars.tryon.TryOnSettings` (``hide_own_hair``,
    default true: the avatar's meshes skinned only to the head and spring joints under it
    are hidden; the other settings are the core's defaults, which key the fit cache)."""
    from avatars.tryon import TryOnSettings

    return TryOnSettings(hide_own_hair=bool(tryon.hide_own_hair))


def motion_options(motion: dict, where: str = "option"):
    """A ``[motion]`` table -> :class:`runtime.rig.motion_options.MotionOptions` (validated: see
    :meth:`MotionSection.from_table`). Raises ConfigError naming the key."""
    return MotionSection.from_table(motion, where).options(where)


def validate(cfg: RunConfig, where: str = "option") -> RunConfig:
    _check_types(cfg, where)
    for name, choices in _choices().items():
        if getattr(cfg, name) not in choices:
            raise ConfigError(f"{where} {name}: {getattr(cfg, name)!r} is not one of {', '.join(choices)}")
    if cfg.fps is not None and not 1 <= cfg.fps <= 1000:
        raise ConfigError(f"{where} fps: {cfg.fps} is outside 1..1000")
    if cfg.duration is not None and not 0 < cfg.duration <= MAX_DURATION_S:
        raise ConfigError(f"{where} duration: must be > 0 seconds and at most a year, not {cfg.duration:g}")
    if cfg.avatar_dir is not None and not Path(cfg.avatar_dir).is_dir():
        raise ConfigError(f"{where} avatar_dir: {cfg.avatar_dir!r} is not a folder")
    if cfg.motion_dir is not None and not Path(cfg.motion_dir).is_dir():
        raise ConfigError(f"{where} motion_dir: {cfg.motion_dir!r} is not a folder")
    if cfg.hair_dir is not None and not Path(cfg.hair_dir).is_dir():
        raise ConfigError(f"{where} hair_dir: {cfg.hair_dir!r} is not a folder")
    if isinstance(cfg.tracker_nice, float) or not -20 <= cfg.tracker_nice <= 19:
        raise ConfigError(f"{where} tracker_nice: {cfg.tracker_nice!r} is not a whole number in -20..19")
    if not 1 <= cfg.max_substeps <= 120:
        raise ConfigError(f"{where} max_substeps: {cfg.max_substeps} is outside 1..120")
    if not 0 <= cfg.port <= 65535:
        raise ConfigError(f"{where} port: {cfg.port} is not a TCP port")
    if cfg.service_token is not None:
        from .service.security import make_token

        try:
            make_token(cfg.service_token)
        except SettingsError as exc:
            raise ConfigError(f"{where} service_token: {exc}") from None
    parse_background(cfg.background, f"{where} background")
    _check_vmc(cfg, where)
    cfg.lipsync.check(where)
    if cfg.audio not in (None, "auto", "mic") and not Path(cfg.audio).is_file():
        raise ConfigError(f"{where} audio: {cfg.audio!r} is not 'auto', 'mic' or an audio/video file")
    files = [o.partition(":") for o in cfg.output if o.partition(":")[0] in ("video", "png")]
    targets = [str(Path(t).expanduser().resolve()) for _, _, t in files if t]
    for t in targets:
        if targets.count(t) > 1:     # two writers on one file / folder would garble both
            raise ConfigError(f"{where} output: {t!r} is given twice")
    windows = [o for o in cfg.output if o.partition(":")[0] == "window"]
    if len(windows) > 1:
        raise ConfigError(f"{where} output: window is given twice (there is one window)")
    for out in cfg.output:
        kind, _, target = out.partition(":")
        if kind not in ("window", "vcam", "video", "png"):
            raise ConfigError(f"{where} output: {out!r} is not window, vcam[:DEVICE], video:PATH or png:DIR")
        if kind in ("video", "png") and not target:
            raise ConfigError(f"{where} output: {out!r} needs a path ({kind}:PATH)")
        if kind == "video" and Path(target).suffix.lower() not in VIDEO_SUFFIXES:
            raise ConfigError(f"{where} output: {target!r}: video files are H.264 in "
                              f"{'/'.join(VIDEO_SUFFIXES)} (use png:DIR to keep alpha)")
        if kind in ("video", "vcam") and cfg.background.strip().lower() == "transparent":
            raise ConfigError(f"{where} output: {out!r}: {NO_ALPHA}")
        if kind == "video":
            if cfg.size[0] % 2 or cfg.size[1] % 2:
                raise ConfigError(f"{where} size: {cfg.size[0]}x{cfg.size[1]}: H.264 video needs an even "
                                  "width and height")
    return cfg


def _check_vmc(cfg: RunConfig, where: str) -> None:
    from .vmc.receiver import parse_listen
    from .vmc.sender import parse_target

    try:
        for t in cfg.vmc_send:
            parse_target(t)
        if cfg.vmc_listen is not None:
            parse_listen(cfg.vmc_listen)
    except SettingsError as exc:
        raise ConfigError(f"{where} vmc: {exc}") from None
    cfg.vmc.check(where)


_INPUT_PATHS = ("avatar", "avatar_dir", "face_model", "source", "motion_dir", "hair_dir", "audio", "hand_model",
                "pose_model")


def _is_relative_file(name: str, value: str) -> bool:
    from .pose_inputs.track import TURN_TEST   # (pose_inputs reads RunConfig: imported here)

    if name == "source" and (value.isdigit() or value == TURN_TEST):
        return False
    if name == "avatar" and value in ("default", "layered"):
        return False
    if name == "audio" and value in ("auto", "mic"):
        return False
    return bool(value) and not Path(value).is_absolute()


def load_toml(path: str | Path) -> RunConfig:
    """Read a TOML config file into a RunConfig. Raises ConfigError naming the file and key.

    Relative input paths in the file (``avatar``, ``avatar_dir``, ``face_model``, a file
    ``source``) are read from the config file's folder; outputs stay relative to the working
    folder, like the command line's."""
    p = Path(path)
    if p.exists() and not p.is_file():
        raise ConfigError(f"{p}: not a regular file (a config file is TOML text)")
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file does not exist") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read the config file ({type(exc).__name__})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    known = {f.name: f for f in fields(RunConfig)}
    values = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in known or name == "config_path":
            raise ConfigError(f"{p}: unknown setting {key!r}")
        if name == "size":
            value = parse_size(value, f"{p}: size")
        elif name == "output":
            value = (value,) if isinstance(value, str) else tuple(value)
        elif name == "vmc_send":
            value = (value,) if isinstance(value, str) else tuple(value)
        elif name in ("filter", "drive", "hair", "motion", "tryon", "vmc", "expressions", "calibration", "lipsync") \
                and not isinstance(value, dict):
            raise ConfigError(f"{p}: [{name}] must be a table")
        elif name in _INPUT_PATHS and isinstance(value, str) and _is_relative_file(name, value):
            value = str(p.parent / value)
        if name == "motion":
            value = dict(value)
            for key in ("clip", "bone_map"):
                v = value.get(key)
                if isinstance(v, str) and v not in ("idle", "rest", "none") and not Path(v).is_absolute():
                    value[key] = str(p.parent / v)
            value = MotionSection.from_table(value, f"{p}:")
        elif name == "tryon":
            value = dict(value)
            v = value.get("style")
            if isinstance(v, str) and looks_like_path(v) and not Path(v).expanduser().is_absolute():
                value["style"] = str(p.parent / v)     # a file beside the config; a bare name stays a name
            value = TryOnSection.from_table(value, f"{p}:")
        elif name == "vmc":
            value = VmcSection.from_table(value, f"{p}:")
        elif name == "filter":
            value = FilterSection.from_table(value, f"{p}:")
        elif name == "lipsync":
            value = dict(value)
            v = value.get("profile")
            if isinstance(v, str) and not Path(v).expanduser().is_absolute():
                value["profile"] = str(p.parent / v)
            value = LipSyncSection.from_table(value, f"{p}:")
        values[name] = value
    try:
        cfg = RunConfig(**values, config_path=str(p))
    except TypeError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    return validate(cfg, f"{p}:")


def looks_like_path(style: str) -> bool:
    """A ``--hair`` / ``[tryon] style`` value that names a file (a folder separator or a file
    suffix) rather than a style name looked up in the hair folder."""
    from avatars.hair.source import STYLE_SUFFIXES

    return "/" in style or "\\" in style or Path(style).suffix.lower() in STYLE_SUFFIXES


def merge(base: RunConfig, overrides: dict) -> RunConfig:
    """Apply command-line values that were given (None means "not given")."""
    given = {k: v for k, v in overrides.items() if v is not None and k in {f.name for f in fields(RunConfig)}}
    return validate(replace(base, **given))
