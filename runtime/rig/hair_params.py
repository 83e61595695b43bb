"""Hair solver settings from the config file (``[hair]``) and ``POST /hair``.

    [hair]                     # every spring
    k = 60.0                   # stiffness toward the rest arc, 1/s²
    c = 4.0                    # damping rate, 1/s
    gravity = [0.0, -2.0, 0.0] # m/s², avatar frame (+Y up)
    hit_radius = 0.02          # metres
    [hair.springs."boneGroup0/*"]   # springs whose name matches the pattern (fnmatch);
    k = 90.0                        # the first matching pattern wins, then the [hair] values
    [hair.springs."Inner*"]         # linked sheets (solver/sheets.py): link these springs to
    link = true                     # their neighbours (true: the pattern is the group; or a
    link_rate = 40.0                # group name; false: no links, the try-on's neither);
    link_stretch = 0.15             # sheet rate 1/s, stretch and squish caps (fractions
    link_squish = 0.3               # of the rest distance); shear rate 1/s (sideways:
    link_shear_rate = 10.0          # neighbours out of phase)

The wind (``[hair.wind]``), ``wind_drag``, ``limit`` and ``fit_limits`` are read by
:mod:`runtime.rig.hair_external`.

Unset values keep the avatar's own parameters mapped from its VRM file (docs/design.md §4.3).
``swaycam inspect`` lists the spring names. Values are checked: finite, not negative, and
at most :data:`LIMITS` (k ≤ 1e7 1/s², c ≤ 1e4 1/s, |gravity| components ≤ 1000 m/s²,
hit_radius ≤ 1 m); the solver also refuses a k that its c cannot keep stable at 120 Hz
(:func:`solver.params.check_stable`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from solver.params import SpringOverride

from ..errors import SettingsError

KEYS = ("k", "c", "gravity", "hit_radius")
#: The linked-sheet keys (:func:`parse_links`; fixed when the chain set is built).
LINK_KEYS = ("link", "link_rate", "link_stretch", "link_squish", "link_shear_rate")
#: Largest accepted sheet rate (1/s) and stretch cap (fraction).
LINK_LIMITS = {"link_rate": 1e4, "link_stretch": 10.0, "link_squish": 1.0, "link_shear_rate": 1e4}
#: Largest accepted value of each setting (gravity: of each component's magnitude).
LIMITS = {"k": 1e7, "c": 1e4, "gravity": 1000.0, "hit_radius": 1.0}


def _number(value, where: str, *, minimum: float = 0.0, maximum: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SettingsError(f"{where}: {value!r} is not a finite number")
    if value < minimum:
        raise SettingsError(f"{where}: {value:g} is below {minimum:g}")
    if value > maximum:
        raise SettingsError(f"{where}: {value:g} is above {maximum:g}")
    return float(value)


def _override(table: dict, where: str) -> SpringOverride:
    from .hair_external import SPRING_KEYS    # wind_drag, limit: read by runtime.rig.hair_external

    unknown = [k for k in table if k not in KEYS and k not in SPRING_KEYS and k not in LINK_KEYS]
    if unknown:
        raise SettingsError(f"{where}: unknown hair setting {unknown[0]!r} (known: {', '.join(KEYS + LINK_KEYS)}, "
                            "springs)")
    g = table.get("gravity")
    if g is not None:
        if not isinstance(g, (list, tuple)) or len(g) != 3:
            raise SettingsError(f"{where}.gravity: {g!r} is not three numbers [x, y, z]")
        lim = LIMITS["gravity"]
        g = tuple(_number(x, f"{where}.gravity", minimum=-lim, maximum=lim) for x in g)
    return SpringOverride(
        k=None if "k" not in table else _number(table["k"], f"{where}.k", maximum=LIMITS["k"]),
        c=None if "c" not in table else _number(table["c"], f"{where}.c", maximum=LIMITS["c"]),
        g=g,
        hit_radius=None if "hit_radius" not in table else _number(table["hit_radius"], f"{where}.hit_radius",
                                                                  maximum=LIMITS["hit_radius"]),
    )


def parse_hair(settings: dict | None, where: str = "hair") -> dict[str, SpringOverride] | None:
    """``[hair]`` settings -> solver overrides {pattern: SpringOverride} (None when empty).

    Raises:
        SettingsError (a ValueError): an unknown key, a non-numeric or negative value; the
            message names it.
    """
    if not settings:
        return None
    if not isinstance(settings, dict):
        raise SettingsError(f"{where}: must be a table of {', '.join(KEYS)}")
    from .hair_external import TOP_KEYS, parse_external

    parse_external(settings, where)             # wind, wind_drag, limit, fit_limits: checked there
    settings = {k: v for k, v in settings.items() if k not in TOP_KEYS}
    springs = settings.pop("springs", {}) or {}
    if not isinstance(springs, dict):
        raise SettingsError(f"{where}.springs: must be a table of spring-name patterns")
    if len(springs) > MAX_SPRING_PATTERNS:
        raise SettingsError(f"{where}.springs: {len(springs)} patterns are over the {MAX_SPRING_PATTERNS} allowed")
    out: dict[str, SpringOverride] = {}
    base = _override(settings, where)
    for pattern, table in springs.items():
        if not isinstance(table, dict):
            raise SettingsError(f"{where}.springs.{pattern}: must be a table of {', '.join(KEYS)}")
        ov = _override(table, f"{where}.springs.{pattern}")
        # a spring-specific table inherits what it leaves unset from [hair]
        out[str(pattern)] = SpringOverride(
            k=ov.k if ov.k is not None else base.k, c=ov.c if ov.c is not None else base.c,
            g=ov.g if ov.g is not None else base.g,
            hit_radius=ov.hit_radius if ov.hit_radius is not None else base.hit_radius)
    if any(v is not None for v in (base.k, base.c, base.g, base.hit_radius)):
        out["*"] = base
    return out or None


def _link_setting(table: dict, where: str):
    from solver.sheets import LinkSetting

    link = table.get("link")
    if link is not None and not isinstance(link, (bool, str)):
        raise SettingsError(f"{where}.link: {link!r} is not true, false or a group name")
    vals = {k: None if k not in table else _number(table[k], f"{where}.{k}", maximum=LINK_LIMITS[k])
            for k in LINK_KEYS[1:]}
    return LinkSetting(link=link, rate=vals["link_rate"], stretch=vals["link_stretch"], squish=vals["link_squish"],
                       shear_rate=vals["link_shear_rate"])


def parse_links(settings: dict | None, where: str = "hair") -> dict | None:
    """The linked-sheet settings of ``[hair]`` -> {pattern: :class:`solver.sheets.LinkSetting`}
    (None when there are none): ``link``, ``link_rate`` (1/s), ``link_stretch``,
    ``link_squish``, ``link_shear_rate`` (1/s) per ``[hair.springs."PATTERN"]`` table; the
    ``[hair]`` table's own values apply to every spring (pattern ``*``) and are inherited by
    the spring tables.

    Raises:
        SettingsError (a ValueError): a value of the wrong kind or out of range, named.
    """
    if not settings or not isinstance(settings, dict):
        return None
    springs = settings.get("springs") or {}
    base = {k: settings[k] for k in LINK_KEYS if k in settings}
    out = {}
    if isinstance(springs, dict):
        for pattern, table in springs.items():
            if isinstance(table, dict) and any(k in table for k in LINK_KEYS):
                out[str(pattern)] = _link_setting({**base, **{k: table[k] for k in LINK_KEYS if k in table}},
                                                  f"{where}.springs.{pattern}")
    if base:
        out["*"] = _link_setting(base, where)
    return out or None


def unmatched_springs(settings: dict | None, names) -> list[str]:
    """The ``[hair.springs."PATTERN"]`` patterns that match none of the spring ``names`` (a
    typo, or a pattern written for another avatar), as warnings to show the user."""
    import fnmatch

    springs = (settings or {}).get("springs") or {}
    names = list(names)
    return [f"[hair.springs.{pattern!r}] matches no spring of this avatar (springs: {', '.join(names) or 'none'})"
            for pattern in springs if not any(fnmatch.fnmatchcase(n, str(pattern)) for n in names)]


@dataclass(frozen=True)
class ResolvedHair:
    """``[hair]`` settings resolved for one avatar's springs (:func:`resolve_hair`): the
    override that wins for each spring under its exact (glob-escaped) name, and the warnings.

    Attributes:
        names: the spring names it was resolved for.
        overrides: {escaped name: SpringOverride} (first matching pattern of the settings), or None.
        warnings: :func:`unmatched_springs` of the settings.
    """

    names: tuple[str, ...]
    overrides: dict | None
    warnings: tuple[str, ...]


#: ``[hair.springs]`` patterns one table may have (an avatar has tens of springs; each
#: pattern is an fnmatch compile and a match against every spring)
MAX_SPRING_PATTERNS = 256
#: patterns resolved per step between two calls of the gate (:func:`resolve_hair`)
_STEP = 32


def resolve_hair(settings: dict | None, names, *, gate=None) -> ResolvedHair:
    """Parse ``settings`` and match every pattern against the spring ``names`` once: the
    costly part of a retune (3,000 patterns x the springs: fnmatch calls), done on the
    caller's thread (a service thread), so the render thread only writes one override per
    spring (runtime/controller.py ``set_hair``). Same result as :func:`parse_hair` given to
    the solver (:func:`solver.params.override_for`: the first matching pattern wins).
    ``gate``: called before every :data:`_STEP` patterns (the render thread's idle time:
    :class:`runtime.commands.RenderIdle`), or None.

    Raises:
        SettingsError: as :func:`parse_hair`.
    """
    import fnmatch

    names = tuple(names)
    overrides = parse_hair(settings)
    per = None
    unmatched: list[str] = []
    if overrides is not None:
        winner: dict[str, object] = {}
        for i, (pattern, ov) in enumerate(overrides.items()):
            if gate is not None and i % _STEP == 0:
                gate()
            hits = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
            if not hits:
                unmatched.append(pattern)
            for n in hits:
                winner.setdefault(n, ov)               # the first matching pattern wins
        per = {_glob_escape(n): winner[n] for n in names if n in winner}
    springs = set((settings or {}).get("springs") or {})
    warnings = tuple(f"[hair.springs.{p!r}] matches no spring of this avatar (springs: {', '.join(names) or 'none'})"
                     for p in unmatched if p in springs)
    return ResolvedHair(names, per or None, warnings)


def _glob_escape(name: str) -> str:
    """An fnmatch pattern matching exactly ``name``."""
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in name)

