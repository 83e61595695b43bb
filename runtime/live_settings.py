"""The settings a running session changes: what the panel and the control service set while
the run goes on, apart from the frozen start-up :class:`runtime.config.RunConfig`.

    expressions   the ``[expressions]`` table: hotkeys, mode, fade (POST /hotkeys)
    calibration   the ``[calibration]`` ranges {blendshape: [lo, hi]} (POST /calibrate apply)
    hair          the ``[hair]`` table in effect on the drawn rig (POST /hair, a new avatar)
    start_hair    the ``[hair]`` table a newly loaded avatar starts with: the config's, then
                  the one saved last (POST /avatar, runtime/stage.py ``make_rig``)
    background    "transparent", "green" or "#rrggbb" (POST /background)
    config_path   the TOML file "save to config" writes (the --config file, else the first
                  save's ./swaycam.toml)

Threads: every value is a snapshot replaced whole under one lock; readers get copies, so no
caller ever holds the lock or a table another thread changes. Writers: service threads
(expressions, background: under :class:`runtime.panel.outputs_control.OutputControl`'s lock,
saving) and the render thread (calibration and hair: :class:`runtime.stage.Stage`, between
frames). Readers: any thread (the render thread for hotkeys and new rigs; service threads for
answers and saving). The open outputs themselves (virtual camera, recordings) are resources,
not settings: :class:`runtime.panel.outputs_control.OutputControl` holds them.
"""

from __future__ import annotations

import copy
import threading

from .config import RunConfig


class LiveSettings:
    """The run-time settings of one session (module doc), starting from ``cfg``'s."""

    def __init__(self, cfg: RunConfig):
        self._lock = threading.Lock()
        self._expressions = dict(cfg.expressions)
        self._calibration = dict(cfg.calibration)
        self._hair = dict(cfg.hair)
        self._start_hair = dict(cfg.hair)
        self._background = cfg.background
        self._config_path = cfg.config_path

    def _get(self, name: str):
        with self._lock:
            return copy.deepcopy(getattr(self, name))

    @property
    def expressions(self) -> dict:
        """The ``[expressions]`` table (a copy)."""
        return self._get("_expressions")

    @property
    def calibration(self) -> dict:
        """The ``[calibration]`` ranges (a copy)."""
        return self._get("_calibration")

    @property
    def hair(self) -> dict:
        """The ``[hair]`` table in effect on the drawn rig (a copy)."""
        return self._get("_hair")

    @property
    def start_hair(self) -> dict:
        """The ``[hair]`` table a newly loaded avatar starts with (a copy)."""
        return self._get("_start_hair")

    @property
    def background(self) -> str:
        return self._get("_background")

    @property
    def config_path(self) -> str | None:
        return self._get("_config_path")

    def set_expressions(self, table: dict) -> None:
        """Replace the ``[expressions]`` table. Raises SettingsError naming the key; nothing
        changes then."""
        from .panel.settings import check_expressions

        check_expressions(table)
        with self._lock:
            self._expressions = copy.deepcopy(table)

    def set_calibration(self, ranges: dict) -> None:
        """Replace the ``[calibration]`` ranges (the stage's, render thread). Raises
        SettingsError naming the blendshape; nothing changes then."""
        from .panel.settings import check_calibration

        check_calibration(ranges)
        with self._lock:
            self._calibration = copy.deepcopy(ranges)

    def set_hair(self, hair: dict) -> None:
        """Record the ``[hair]`` table in effect (the stage's, render thread, once the rig
        took it)."""
        with self._lock:
            self._hair = copy.deepcopy(hair)

    def set_background(self, background: str) -> None:
        """Record the background (already parsed and drawn)."""
        with self._lock:
            self._background = background

    def tables(self) -> dict[str, dict]:
        """The tables "save to config" writes: {"hair", "expressions", "calibration"}, one
        consistent snapshot."""
        with self._lock:
            return copy.deepcopy({"hair": self._hair, "expressions": self._expressions,
                                  "calibration": self._calibration})

    def saved(self, path: str, hair: dict) -> None:
        """The tables were written to ``path`` with ``hair``: new avatars start with it, and
        the next save writes the same file."""
        with self._lock:
            self._start_hair = copy.deepcopy(hair)
            self._config_path = str(path)


__all__ = ["LiveSettings"]
