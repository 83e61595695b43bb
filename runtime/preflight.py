"""A run's set-up checked before anything loads: options that would have no effect here
(warnings, so nothing is silently ignored) and the files the run writes besides its outputs
(``--record``: a bad path fails at once, not after the avatar and the hairstyle are ready).

The outputs themselves are checked by :func:`runtime.outputs.plan_outputs` when the session
opens, and the option values by :func:`runtime.config.validate`; this module only looks at
combinations of options that are each valid.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .config import RunConfig

#: Options that only configure the control service (``--service``), as (setting, option).
SERVICE_OPTIONS = (("avatar_dir", "--avatar-dir"), ("motion_dir", "--motion-dir"), ("record_dir", "--record-dir"),
                   ("service_token", "--service-token"))


def resolved_source(cfg: RunConfig, webcam: Callable[[], bool]) -> str:
    """The ``--source`` the run will open: the given one, else webcam 0 when ``webcam()``
    says one exists, else the built-in head turn (as :func:`runtime.pose_inputs.open_pose_input`)."""
    from .pose_inputs.track import TURN_TEST

    if cfg.source is not None:
        return cfg.source
    return "0" if webcam() else TURN_TEST


def is_pose_track(source: str) -> bool:
    """A source that is already tracked: ``turn-test`` or a ``.jsonl`` pose track."""
    from .pose_inputs.track import TURN_TEST

    return source == TURN_TEST or source.endswith(".jsonl")


def has_window(cfg: RunConfig, display: bool) -> bool:
    """The run draws into a window: ``--output window``, or no ``--output`` and a display."""
    if cfg.output:
        return any(o.partition(":")[0] == "window" for o in cfg.output)
    return display


def ignored_options(cfg: RunConfig, *, display: bool, webcam: Callable[[], bool]) -> list[str]:
    """What ``cfg`` asks for that this run would not do, one sentence each (the CLI prints
    them as warnings on stderr): service settings without ``--service``, tracker settings
    with a source that is already a pose track, ``--kiosk`` without a window.

    Args:
        display: a display exists (:func:`render.platform.has_display`).
        webcam: whether webcam 0 exists (asked only when no ``--source`` is given).
    """
    notes = []
    if not cfg.service:
        given = [option for name, option in SERVICE_OPTIONS if getattr(cfg, name) is not None]
        if cfg.port != RunConfig.port:
            given.append("--port")
        if given:
            notes.append(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} ignored without --service "
                         "(only the control service uses " + ("it" if len(given) == 1 else "them") + ")")
    if cfg.vmc_listen is None:
        source = resolved_source(cfg, webcam)
        if is_pose_track(source):
            what = f"the source {source!r} is a pose track (already tracked)" if cfg.source is not None else \
                f"without a webcam the source is {source!r}, a pose track (already tracked)"
            if cfg.face_model is not None:
                notes.append(f"--face-model is ignored: {what}; the face model tracks webcams, videos and images")
            if not cfg.recenter:
                notes.append(f"--no-recenter is ignored: {what}, its poses are played as recorded")
    if cfg.kiosk and not has_window(cfg, display):
        why = "no display: DISPLAY / WAYLAND_DISPLAY is not set" if not display else "no window output"
        notes.append(f"--kiosk without a window ({why}): nothing is shown fullscreen (the kiosk's idle pose "
                     "when nobody is there still applies)")
    return notes


def check_run_files(cfg: RunConfig) -> None:
    """The files a run writes besides its outputs (``--record``), checked now.

    Raises:
        OSError: naming the file (:func:`runtime.writable.check_file`).
    """
    from .writable import check_file

    if cfg.record:
        check_file(Path(cfg.record))
