"""The ``[hair]`` settings of what acts on the hair from outside its springs: the wind, each
spring's wind response, its angle limit and the speed limits of its anchor.

    [hair]
    fit_limits = true              # the try-on auto-rig's root-bend cones become limits
    cover_mesh = true              # hit radii raised to cover the drawn hair (solver/drawn.py; on by default)
    wind_drag = 1.0                # every spring's wind response, 1/s (acceleration per m/s)
    speed_limit = 0.25             # anchor speed above which its excess motion carries the chain, m/s
    rotation_speed_limit = 200.0   # likewise for the anchor's angular speed, degrees/s (inf: off)
    [hair.wind]                    # global wind (solver.wind)
    direction = [1.0, 0.0, 0.3]    # where it blows to, avatar frame (+Y up, the avatar faces +Z)
    strength = 6.0                 # mean speed, m/s (at most 40)
    gusts = 0.4                    # gust share of the mean, 0..1
    seed = 7                       # the gusts' seed (the same seed, the same gusts)
    ramp_s = 0.5                   # seconds a change eases in over
    [hair.springs."Bang*"]
    wind_drag = 0.5
    limit = { kind = "cone", angle = 25 }                  # degrees; kind cone | hinge | none
    limit = { kind = "spherical", angle = 30, yaw = 15 }   # pitch (angle) and yaw, degrees
    speed_limit = 1.0              # this spring's own anchor speed limit, m/s

The speed limits (:mod:`solver.kernels.inertia`, ``BuildOptions.speed_limit`` and
``rotation_speed_limit_deg``) are numbers > 0, ``inf`` turning one off; left out, the
solver's defaults (:data:`solver.build_options.SPEED_LIMIT`, 0.25 m/s, and
:data:`~solver.build_options.ROTATION_SPEED_LIMIT_DEG`, 200 °/s). They are fixed when the
chain set is built (start, avatar, solver or style switch); ``POST /hair`` keeps them.

A config limit wins over the file's (the VRMC_springBone_limit draft, ``angleLimit``) and the
fit's (:mod:`solver.limits`); ``kind = "none"`` runs the spring without a limit. Degrees here,
radians in the solver (docs/design.md §3). Every value is checked: SettingsError names the
setting and the value.
"""

from __future__ import annotations

import math

from avatars.model import JointLimit
from solver.errors import HairParamsError
from solver.limits import MAX_WIND_RESPONSE
from solver.wind import Wind

from ..errors import SettingsError

#: keys of a [hair] / [hair.springs."P"] table this module reads
SPRING_KEYS = ("wind_drag", "limit", "speed_limit", "rotation_speed_limit")
#: the speed-limit keys and their BuildOptions fields, units
SPEED_KEYS = {"speed_limit": ("speed_limit", "m/s"), "rotation_speed_limit": ("rotation_speed_limit_deg", "degrees/s")}
#: keys of the [hair] table alone
TOP_KEYS = ("wind", "fit_limits", "cover_mesh")
WIND_KEYS = ("direction", "strength", "gusts", "seed", "ramp_s")
LIMIT_KEYS = ("kind", "angle", "yaw")
#: largest limit angle accepted, degrees (the draft reads more as 180; yaw as 90)
MAX_LIMIT_DEG = 180.0


def parse_wind(table, where: str = "hair.wind") -> Wind:
    """A ``[hair.wind]`` table (or a POST /wind body's wind fields) -> :class:`solver.wind.Wind`.

    Raises:
        SettingsError: not a table, an unknown key, a value out of range (named).
    """
    if not isinstance(table, dict):
        raise SettingsError(f"{where}: must be a table of {', '.join(WIND_KEYS)}")
    unknown = [k for k in table if k not in WIND_KEYS]
    if unknown:
        raise SettingsError(f"{where}: unknown wind setting {unknown[0]!r} (known: {', '.join(WIND_KEYS)})")
    try:
        return Wind(**{k: (tuple(v) if k == "direction" and isinstance(v, list) else v) for k, v in table.items()})
    except (HairParamsError, TypeError) as exc:
        raise SettingsError(f"{where}: {str(exc).replace('wind.', '')}") from None


def _limit(table, where: str) -> JointLimit | None:
    if not isinstance(table, dict):
        raise SettingsError(f"{where}: must be a table {{kind, angle, yaw}}")
    unknown = [k for k in table if k not in LIMIT_KEYS]
    if unknown:
        raise SettingsError(f"{where}: unknown limit setting {unknown[0]!r} (known: {', '.join(LIMIT_KEYS)})")
    kind = table.get("kind")
    if kind == "none":
        return None
    if kind not in ("cone", "hinge", "spherical"):
        raise SettingsError(f"{where}.kind: {kind!r} is not one of cone, hinge, spherical, none")
    vals = {}
    for key in ("angle", "yaw"):
        v = table.get(key, 0.0 if key == "yaw" else None)
        if key == "yaw" and kind != "spherical" and key in table:
            raise SettingsError(f"{where}.yaw: only a spherical limit has a yaw")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or not 0.0 <= v <= MAX_LIMIT_DEG:
            raise SettingsError(f"{where}.{key}: {v!r} is not an angle in [0, {MAX_LIMIT_DEG:g}] degrees")
        vals[key] = math.radians(float(v))
    return JointLimit(kind=kind, angle=vals["angle"], yaw=vals["yaw"], source="config")


def _drag(v, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or not 0.0 <= v <= MAX_WIND_RESPONSE:
        raise SettingsError(f"{where}: {v!r} is not a number in [0, {MAX_WIND_RESPONSE:g}] (1/s)")
    return float(v)


def _speed(v, where: str, unit: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or not v > 0.0:
        raise SettingsError(f"{where}: {v!r} is not a speed limit > 0 {unit} (inf: off)")
    return float(v)


def parse_speed_limits(settings: dict | None, where: str = "hair") -> dict:
    """The speed limits of a ``[hair]`` table: {"speed_limit": {pattern: m/s} | None,
    "rotation_speed_limit_deg": {pattern: degrees/s} | None} (the
    :class:`solver.build_options.BuildOptions` fields; the first matching pattern wins, a
    spring table inherits what it leaves unset from [hair], whose own value is pattern ``*``).

    Raises:
        SettingsError: a value that is not a number > 0 (``inf``: off), named.
    """
    settings = settings or {}
    springs = settings.get("springs") or {}
    out = {}
    for key, (field, unit) in SPEED_KEYS.items():
        base = None if key not in settings else _speed(settings[key], f"{where}.{key}", unit)
        per: dict = {}
        for pattern, table in (springs.items() if isinstance(springs, dict) else ()):
            if isinstance(table, dict) and key in table:
                per[str(pattern)] = _speed(table[key], f"{where}.springs.{pattern}.{key}", unit)
        if base is not None:
            per["*"] = base
        out[field] = per or None
    return out


def parse_external(settings: dict | None, where: str = "hair") -> dict:
    """The external settings of a ``[hair]`` table: {"wind": Wind | None, "fit_limits": bool,
    "limits": {pattern: JointLimit | None} | None, "wind_drag": {pattern: float} | None} —
    the :class:`solver.build_options.BuildOptions` fields and the wind (the first matching
    pattern wins; a spring table inherits what it leaves unset from [hair], as
    :func:`runtime.rig.hair_params.parse_hair`).

    Raises:
        SettingsError: a bad value (named).
    """
    settings = settings or {}
    wind = None if settings.get("wind") is None else parse_wind(settings["wind"], f"{where}.wind")
    fit = settings.get("fit_limits", False)
    if not isinstance(fit, bool):
        raise SettingsError(f"{where}.fit_limits: {fit!r} is not true or false")
    cover = settings.get("cover_mesh", True)
    if not isinstance(cover, bool):
        raise SettingsError(f"{where}.cover_mesh: {cover!r} is not true or false")
    base_drag = None if "wind_drag" not in settings else _drag(settings["wind_drag"], f"{where}.wind_drag")
    base_limit = ("limit" in settings, None if "limit" not in settings else _limit(settings["limit"], f"{where}.limit"))
    limits: dict = {}
    drags: dict = {}
    springs = settings.get("springs") or {}
    for pattern, table in (springs.items() if isinstance(springs, dict) else ()):
        if not isinstance(table, dict):
            continue                          # parse_hair names it
        w = f"{where}.springs.{pattern}"
        if "wind_drag" in table:
            drags[str(pattern)] = _drag(table["wind_drag"], f"{w}.wind_drag")
        elif base_drag is not None:
            drags[str(pattern)] = base_drag
        if "limit" in table:
            limits[str(pattern)] = _limit(table["limit"], f"{w}.limit")
        elif base_limit[0]:
            limits[str(pattern)] = base_limit[1]
    if base_drag is not None:
        drags["*"] = base_drag
    if base_limit[0]:
        limits["*"] = base_limit[1]
    return {"wind": wind, "fit_limits": fit, "limits": limits or None, "wind_drag": drags or None,
            "cover_mesh": cover, **parse_speed_limits(settings, where)}


def build_fields(settings: dict | None) -> dict:
    """The :class:`solver.build_options.BuildOptions` fields of ``settings`` ([hair]):
    {"limits", "wind_drag", "fit_limits", "cover_mesh"} and, when set, "speed_limit",
    "rotation_speed_limit_deg" (left out otherwise: the solver's defaults). Raises SettingsError."""
    ext = parse_external(settings)
    speeds = {f: ext[f] for f, _ in SPEED_KEYS.values() if ext[f] is not None}
    return {"limits": ext["limits"], "wind_drag": ext["wind_drag"], "fit_limits": ext["fit_limits"],
            "cover_mesh": ext["cover_mesh"], **speeds}


def start_wind(chains, settings: dict | None) -> None:
    """A new chain set starts with the settings' wind at full strength (no ramp: a run or a
    replay that starts with wind is the same from its first substep)."""
    from dataclasses import replace

    from solver.wind import set_wind

    ext = parse_external(settings)
    if chains is not None and ext["wind"] is not None:
        set_wind(chains, replace(ext["wind"], ramp_s=0.0))


def retune(chains, old: dict | None, new: dict | None) -> dict:
    """Apply ``new`` [hair] settings' external part to a running chain set in place (limits and
    wind responses repacked, state untouched; the wind eased to the new one over its ramp).
    A ``new`` table without ``wind`` keeps the wind of ``old``. Returns ``new`` with that wind
    kept. Raises SettingsError (nothing changed then)."""
    from solver.limits import repack
    from solver.wind import set_wind

    new = dict(new or {})
    if "wind" not in new and old and "wind" in old:
        new["wind"] = old["wind"]
    ext = parse_external(new)
    if chains is None:
        return new
    try:
        repack(chains, ext["limits"], ext["wind_drag"], ext["fit_limits"])
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    before = parse_external(old)["wind"] if old else None
    if ext["wind"] != before:
        set_wind(chains, ext["wind"] if ext["wind"] is not None else Wind(strength=0.0))
    return new


def set_rig_wind(rig, wind: Wind | None = None, impulse=None) -> dict:
    """POST /wind on the render thread: ease ``rig``'s wind to ``wind`` (None: keep it) and/or
    add an ``impulse`` (3,) m/s at the next substep; the wind is kept in the rig's [hair]
    settings (``hair_params["wind"]``), so a solver switch or a saved config keeps it.
    Returns {"wind": the setting, "now": the wind of the last substep (m/s)}."""
    from solver.wind import impulse as push
    from solver.wind import set_wind, wind_of

    chains = rig.chains
    if wind is not None:
        rig.hair_params = {**rig.hair_params, "wind": wind.as_dict()}
        if chains is not None:
            set_wind(chains, wind)
    if impulse is not None and chains is not None:
        push(chains, impulse)
    current = rig.hair_params.get("wind")
    return {"wind": current, "now": [] if chains is None else [float(x) for x in wind_of(chains)]}

