"""The ``[expressions]`` and ``[calibration]`` tables of the config (the panel's settings).

    [expressions]
    mode = "toggle"            # panel hotkeys and buttons: "toggle" (press on, press off) or "hold"
    fade_ms = 150              # fade in and out, milliseconds
    [expressions.keys]         # hotkeys (panel and window): expression name -> key name
    happy = "f1"               # pygame / browser key names, lower case: "f1", "j", "space"

    [calibration]              # per-user input ranges (swaycam calibrate, the panel's guided calibration)
    eyeBlinkLeft = [0.12, 0.64]   # blendshape -> [rest value, fully closed / open value]

Without ``[expressions.keys]`` the avatar's emotion expressions get F1, F2, ... in the order
of :data:`runtime.panel.expressions.EMOTIONS`, then its other non-preset expressions (F5 and
F11 are skipped: browsers reload and go fullscreen with them).
"""

from __future__ import annotations

import math

from ..errors import SettingsError
from ..keys import KEYS
from .expressions import DEFAULT_FADE_MS, EMOTIONS, MAX_FADE_MS

MODES = ("toggle", "hold")
#: longest expression name a hotkey may be given for (VRM names are short identifiers)
MAX_EXPRESSION_NAME = 64
#: Keys the window already uses (runtime/keys.py): never hotkeys.
RESERVED_KEYS = frozenset(KEYS)
DEFAULT_KEYS = ("f1", "f2", "f3", "f4", "f6", "f7", "f8", "f9", "f10", "f12")


def check_expressions(table: dict) -> None:
    """Raise SettingsError naming the key for a bad ``[expressions]`` table."""
    for key, value in (table or {}).items():
        if key == "mode":
            if value not in MODES:
                raise SettingsError(f"expressions.mode: {value!r} is not one of {', '.join(MODES)}")
        elif key == "fade_ms":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_FADE_MS:
                raise SettingsError(f"expressions.fade_ms: {value!r} is not a number in 0..{MAX_FADE_MS:g}")
        elif key == "keys":
            if not isinstance(value, dict):
                raise SettingsError("expressions.keys must be a table {expression = \"key\"}")
            seen: dict[str, str] = {}
            for name, k in value.items():
                if not _text(name, MAX_EXPRESSION_NAME):
                    raise SettingsError(f"expressions.keys: {str(name)[:40]!r} is not an expression name "
                                        f"(1..{MAX_EXPRESSION_NAME} printable characters)")
                if not isinstance(k, str) or not _text(k, 20) or k != k.strip():
                    raise SettingsError(f"expressions.keys.{name}: {str(k)[:40]!r} is not a key name "
                                        "(1..20 printable characters)")
                if k.lower() in RESERVED_KEYS:
                    raise SettingsError(f"expressions.keys.{name}: {k!r} is a window key already (runtime/keys.py)")
                if k.lower() in seen:
                    raise SettingsError(f"expressions.keys.{name}: {k!r} is also the key of {seen[k.lower()]}")
                seen[k.lower()] = name
        else:
            raise SettingsError(f"expressions.{key}: unknown setting (known: fade_ms, keys, mode)")


def _text(s, n: int) -> bool:
    """``s`` is 1..``n`` printable characters UTF-8 can hold (no control characters, DEL or
    lone surrogates)."""
    if not isinstance(s, str) or not 0 < len(s) <= n or not s.isprintable():
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_calibration(table: dict) -> None:
    """Raise SettingsError naming the key for a bad ``[calibration]`` table."""
    from tracking.expressions import BLENDSHAPE_INDEX

    for name, value in (table or {}).items():
        if name not in BLENDSHAPE_INDEX:
            raise SettingsError(f"calibration.{name}: not a blendshape name")
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in value)
                or not 0 <= value[0] < value[1] <= 1.5):
            raise SettingsError(f"calibration.{name}: {value!r} is not [lo, hi] with 0 <= lo < hi")


def hotkeys(table: dict, expression_names) -> dict[str, str]:
    """{key: expression name} for the avatar's ``expression_names``: the configured keys of
    the expressions it has, else the defaults (module doc)."""
    configured = (table or {}).get("keys")
    if configured:
        return {k.lower(): n for n, k in configured.items() if n in expression_names}
    from tracking.expressions import VRM_PRESETS

    order = [n for n in EMOTIONS if n in expression_names]
    order += [n for n in expression_names if n not in VRM_PRESETS and n not in order]
    return dict(zip(DEFAULT_KEYS, order))


def mode(table: dict) -> str:
    return (table or {}).get("mode", "toggle")


def fade_ms(table: dict) -> float:
    return float((table or {}).get("fade_ms", DEFAULT_FADE_MS))
