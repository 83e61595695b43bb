"""The typed tables of :class:`runtime.config.RunConfig`: ``[motion]``, ``[tryon]``, ``[vmc]``
and ``[filter]``, each a frozen dataclass parsed once from its TOML table.

:meth:`from_table` refuses unknown keys and values of the wrong type (ConfigError naming the
key, e.g. ``swaycam.toml: motion.speed: 'x' is not a finite number``); :meth:`check` checks
values (``validate`` runs it on every config, command-line values included). A ``None``
field is a key the table left out: the consumer's own default applies (the one place that
default is stated is named on each field).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from .errors import ConfigError


def _kind_error(where: str, section: str, key: str, value, kind: type) -> ConfigError | None:
    """The ConfigError for ``value`` not being of ``kind`` (str, bool, float, int), or None."""
    if kind is bool and not isinstance(value, bool):
        return ConfigError(f"{where} {section}.{key}: {value!r} is not true/false")
    if kind is str and not isinstance(value, str):
        return ConfigError(f"{where} {section}.{key}: {value!r} is not a string")
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
        return ConfigError(f"{where} {section}.{key}: {value!r} is not a finite number")
    return None


#: [motion] keys and their types (see runtime.rig.motion_options.MotionOptions).
MOTION_KEYS = {"clip": str, "layer": str, "fade_s": float, "speed": float, "in_place": bool, "rest_align": bool,
               "after": str, "bone_map": str, "bvh_scale": float, "idle_amplitude": float, "loop": bool}
#: The [motion] keys that are :class:`runtime.rig.motion_options.MotionOptions` fields.
MOTION_OPTION_KEYS = ("layer", "fade_s", "speed", "in_place", "rest_align", "after", "idle_amplitude")


@dataclass(frozen=True)
class MotionSection:
    """``[motion]``: the body motion of a run.

    Attributes:
        clip: "idle" (the generated idle), "rest", "none" or ``FILE[#Name[+Name...]]``.
        layer, fade_s, speed, in_place, rest_align, after, idle_amplitude: the playback
            (:class:`runtime.rig.motion_options.MotionOptions`; None: its default; ``swaycam run``
            sets ``in_place`` true unless the file says otherwise).
        bone_map: a JSON/TOML {VRM bone: joint name} file for a clip whose naming is not
            recognised; ``bvh_scale``: metres per BVH unit (None: guessed); ``loop``: loop
            the last clip (None: as the clip says). See :func:`runtime.rig.motion.load_motion`.
    """

    clip: str = "idle"
    layer: str | None = None
    fade_s: float | None = None
    speed: float | None = None
    in_place: bool | None = None
    rest_align: bool | None = None
    after: str | None = None
    idle_amplitude: float | None = None
    bone_map: str | None = None
    bvh_scale: float | None = None
    loop: bool | None = None

    @classmethod
    def from_table(cls, table: dict, where: str = "option") -> "MotionSection":
        """The section of a ``[motion]`` table. Raises ConfigError naming the key."""
        for key in table or {}:
            if key not in MOTION_KEYS:
                raise ConfigError(f"{where} motion.{key}: unknown setting (known: {', '.join(sorted(MOTION_KEYS))})")
        section = cls(**dict(table or {}))
        section.check(where)
        return section

    def check(self, where: str = "option") -> None:
        """Raise ConfigError naming the key for a value of the wrong type or range."""
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                err = _kind_error(where, "motion", f.name, value, MOTION_KEYS[f.name])
                if err is not None:
                    raise err
        self.options(where)

    def options(self, where: str = "option"):
        """The playback keys as :class:`runtime.rig.motion_options.MotionOptions` (the keys left out
        at its defaults). Raises ConfigError for a bad value."""
        from .rig.errors import MotionError
        from .rig.motion_options import MotionOptions

        given = {k: getattr(self, k) for k in MOTION_OPTION_KEYS if getattr(self, k) is not None}
        try:
            return MotionOptions(**given)
        except MotionError as exc:
            raise ConfigError(f"{where} {exc}") from None


#: [tryon] keys and their types.
TRYON_KEYS = {"style": str, "hide_own_hair": bool, "prewarm": bool}


@dataclass(frozen=True)
class TryOnSection:
    """``[tryon]``: the hairstyle try-on.

    Attributes:
        style: a style name in the hair folder or a hair file (None, "" or "none": the
            avatar's own hair).
        hide_own_hair: hide the avatar's meshes skinned only to the head and the spring
            joints under it (:func:`runtime.config.tryon_settings`).
        prewarm: fit every style of the hair folder into the cache while idle (None: in
            kiosk mode).
    """

    style: str | None = None
    hide_own_hair: bool = True
    prewarm: bool | None = None

    @classmethod
    def from_table(cls, table: dict, where: str = "option") -> "TryOnSection":
        """The section of a ``[tryon]`` table. Raises ConfigError naming the key."""
        for key in table or {}:
            if key not in TRYON_KEYS:
                raise ConfigError(f"{where} tryon.{key}: unknown setting (known: {', '.join(sorted(TRYON_KEYS))})")
        section = cls(**dict(table or {}))
        section.check(where)
        return section

    def check(self, where: str = "option") -> None:
        """Raise ConfigError naming the key for a value of the wrong type."""
        for key, kind in TRYON_KEYS.items():
            value = getattr(self, key)
            if value is not None and not isinstance(value, kind):
                what = "true/false" if kind is bool else "a string"
                raise ConfigError(f"{where} tryon.{key}: {value!r} is not {what}")

    @property
    def style_name(self) -> str | None:
        """The style to try on (None: the avatar's own hair)."""
        return None if self.style in (None, "", "none") else str(self.style)


VMC_KEYS = ("divisor", "names", "role", "face", "head", "delay_ms", "hold_s", "ease_s")


@dataclass(frozen=True)
class VmcSection:
    """``[vmc]``: the VMC protocol's settings.

    Attributes:
        divisor: send every n-th drawn frame (1..1000). names: the expression names sent,
            "vrm0" or "vrm1" (runtime.vmc.names). role: "auto" (port 39540 is Assistant,
            else Marionette), "marionette" or "assistant".
        face, head, delay_ms, hold_s, ease_s: the receiver
            (:class:`runtime.vmc.VmcInputOptions`; None: its default).
    """

    divisor: int = 1
    names: str = "vrm0"
    role: str = "auto"
    face: str | None = None
    head: str | None = None
    delay_ms: float | None = None
    hold_s: float | None = None
    ease_s: float | None = None

    @classmethod
    def from_table(cls, table: dict, where: str = "option") -> "VmcSection":
        """The section of a ``[vmc]`` table. Raises ConfigError naming the key."""
        for k in table or {}:
            if k not in VMC_KEYS:
                raise ConfigError(f"{where} [vmc] {k}: unknown setting (known: {', '.join(VMC_KEYS)})")
        section = cls(**dict(table or {}))
        section.check(where)
        return section

    def check(self, where: str = "option") -> None:
        """Raise ConfigError naming the key for a bad value."""
        from .vmc.input import FACE_MODES, HEAD_MODES, ROLES
        from .vmc.names import NAME_STYLES

        d = self.divisor
        if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 1000:
            raise ConfigError(f"{where} [vmc] divisor: {d!r} is not a whole number in 1..1000")
        for k, allowed in (("names", NAME_STYLES), ("role", ROLES), ("face", FACE_MODES), ("head", HEAD_MODES)):
            v = getattr(self, k)
            if v is not None and v not in allowed:
                raise ConfigError(f"{where} [vmc] {k}: {v!r} is not one of {', '.join(allowed)}")
        for k in ("delay_ms", "hold_s", "ease_s"):
            x = getattr(self, k)
            x = 0.0 if x is None else x
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not (x >= 0 and x < 1e6):
                raise ConfigError(f"{where} [vmc] {k}: {x!r} must be a number >= 0")

    def input_options(self):
        """The receiver's :class:`runtime.vmc.VmcInputOptions` (the keys left out at its defaults)."""
        from .vmc import VmcInputOptions

        return VmcInputOptions(**{k: getattr(self, k) for k in ("delay_ms", "hold_s", "ease_s", "face", "head")
                                  if getattr(self, k) is not None})


@dataclass(frozen=True)
class FilterSection:
    """``[filter]``: the pose filter.

    Attributes:
        extrapolate: extrapolate the newest poses instead of interpolating one camera frame
            back (None: :class:`tracking.pose_filter.PoseFilterOptions`' default).
        max_rate_deg_s: the fastest plausible head turn between two camera frames, degrees per
            second (> 0; None: the default, 1000); faster faces are false detections unless
            they persist (tracking/pose_filter.py, "Gate").
        confirm_frames: faces in a row that must agree before a face with nothing to vouch
            for it is used (1..30; 1 turns the persistence test off; None: the default, 2).
    """

    extrapolate: bool | None = None
    max_rate_deg_s: float | None = None
    confirm_frames: int | None = None

    @classmethod
    def from_table(cls, table: dict, where: str = "option") -> "FilterSection":
        """The section of a ``[filter]`` table. Raises ConfigError naming the key."""
        known = ("extrapolate", "max_rate_deg_s", "confirm_frames")
        for k in table or {}:
            if k not in known:
                raise ConfigError(f"{where} filter.{k}: unknown setting (known: {', '.join(known)})")
        section = cls(**dict(table or {}))
        section.check(where)
        return section

    def check(self, where: str = "option") -> None:
        """Raise ConfigError for a value of the wrong type or out of its range."""
        if self.extrapolate is not None and not isinstance(self.extrapolate, bool):
            raise ConfigError(f"{where} filter.extrapolate: {self.extrapolate!r} is not true/false")
        r = self.max_rate_deg_s
        if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r)
                              or r <= 0):
            raise ConfigError(f"{where} filter.max_rate_deg_s: {r!r} is not a number of degrees per second > 0")
        n = self.confirm_frames
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 30):
            raise ConfigError(f"{where} filter.confirm_frames: {n!r} is not a whole number in [1, 30]")


#: [lipsync] keys and their types (runtime.lipsync; tracking.audio.classifier.LipSyncOptions).
LIPSYNC_KEYS = {"mix": str, "profile": str, "min_db": float, "max_db": float, "compare": str, "camera_weight": float,
                "audio_weight": float}


@dataclass(frozen=True)
class LipSyncSection:
    """``[lipsync]``: lip sync from audio (``--audio``).

    Attributes:
        mix: how the audio's visemes meet the camera's mouth (:data:`runtime.lipsync.mix.MIX_MODES`;
            None: "auto", the louder and surer source wins).
        profile: a vowel profile file (``swaycam calibrate --audio``; None: the user's saved
            one, else the bundled default: :func:`runtime.lipsync.profile_path`).
        min_db, max_db: the volume gate and full-open level, dBFS; compare: "l2", "l1" or
            "cosine" (None: :class:`tracking.audio.classifier.LipSyncOptions`' defaults).
        camera_weight, audio_weight: bias of each source in the "auto" mix (None: 1).
    """

    mix: str | None = None
    profile: str | None = None
    min_db: float | None = None
    max_db: float | None = None
    compare: str | None = None
    camera_weight: float | None = None
    audio_weight: float | None = None

    @classmethod
    def from_table(cls, table: dict, where: str = "option") -> "LipSyncSection":
        """The section of a ``[lipsync]`` table. Raises ConfigError naming the key."""
        for k, v in (table or {}).items():
            if k not in LIPSYNC_KEYS:
                raise ConfigError(f"{where} [lipsync] {k}: unknown setting (known: {', '.join(LIPSYNC_KEYS)})")
            err = _kind_error(where, "lipsync", k, v, LIPSYNC_KEYS[k])
            if err is not None:
                raise err
        section = cls(**dict(table or {}))
        section.check(where)
        return section

    def check(self, where: str = "option") -> None:
        """Raise ConfigError naming the key for a bad value."""
        from .lipsync.mix import MixOptions

        try:
            MixOptions(**{k: getattr(self, k) for k in ("mix", "camera_weight", "audio_weight")
                          if getattr(self, k) is not None})
            self.analysis_options()
        except ValueError as exc:
            raise ConfigError(f"{where} [lipsync]: {exc}") from None

    def analysis_options(self):
        """The :class:`tracking.audio.classifier.LipSyncOptions` (left-out keys at their defaults)."""
        from tracking.audio.classifier import LipSyncOptions

        return LipSyncOptions(**{k: getattr(self, k) for k in ("min_db", "max_db", "compare")
                                 if getattr(self, k) is not None})

    def mix_options(self):
        """The :class:`runtime.lipsync.mix.MixOptions`."""
        from .lipsync.mix import MixOptions

        return MixOptions(**{k: getattr(self, k) for k in ("mix", "camera_weight", "audio_weight")
                             if getattr(self, k) is not None})


__all__ = ["FilterSection", "LIPSYNC_KEYS", "LipSyncSection", "MOTION_KEYS", "MotionSection", "TRYON_KEYS", "TryOnSection", "VMC_KEYS", "VmcSection"]
