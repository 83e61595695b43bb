"""Hair solver settings from the config file (``[hair]``) and ``POST /hair``.

    [hair]                     # every spring
    k = 60.0                   # stiffness toward the rest arc, 1/s²
    c = 4.0                    # damping rate, 1/s
    gravity = [0.0, -2.0, 0.0] # m/s², avatar frame (+Y up)
    hit_radius = 0.02          # metres
    [hair.springs."boneGroup0/*"]   # springs whose name matches the pattern (fnmatch);
    k = 90.0                        # the first matching pattern wins, then the [hair] values

Unset values keep the avatar's own parameters mapped from its VRM file (DESIGN §4.3).
``swaycam inspect`` lists the spring names. Values are checked: finite, not negative, and
at most :data:`LIMITS` (k ≤ 1e7 1/s², c ≤ 1e4 1/s, |gravity| components ≤ 1000 m/s²,
hit_radius ≤ 1 m); the solver also refuses a k that its c cannot keep stable at 120 Hz
(:func:`solver.params.check_stable`).
"""

from __future__ import annotations

import math

from solver.params import SpringOverride

from ..errors import SettingsError

KEYS = ("k", "c", "gravity", "hit_radius")
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
    unknown = [k for k in table if k not in KEYS]
    if unknown:
        raise SettingsError(f"{where}: unknown hair setting {unknown[0]!r} (known: {', '.join(KEYS)}, springs)")
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
    settings = dict(settings)
    springs = settings.pop("springs", {}) or {}
    if not isinstance(springs, dict):
        raise SettingsError(f"{where}.springs: must be a table of spring-name patterns")
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


def unmatched_springs(settings: dict | None, names) -> list[str]:
    """The ``[hair.springs."PATTERN"]`` patterns that match none of the spring ``names`` (a
    typo, or a pattern written for another avatar), as warnings to show the user."""
    import fnmatch

    springs = (settings or {}).get("springs") or {}
    names = list(names)
    return [f"[hair.springs.{pattern!r}] matches no spring of this avatar (springs: {', '.join(names) or 'none'})"
            for pattern in springs if not any(fnmatch.fnmatchcase(n, str(pattern)) for n in names)]
