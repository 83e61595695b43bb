"""One matrix cell measured: a pure, seeded function of its inputs -> (row, timing).

The measures are those of ``swaycam metrics`` for the same (avatar, style, clip, solver),
computed through the same public functions with the same arguments, so a cell's numbers
equal the metrics table's (``tests/runtime/eval/test_matrix_cell.py`` asserts it):

- ``turn-test``: :func:`solver.eval.measure.standard_run` on
  :func:`avatars.clips.head_turn.head_turn_rotation` (``duration_s`` of motion, default 4 s,
  then ``settle_s`` still); the fps replays play :func:`runtime.pose_inputs.head_turn_track`
  for the motion seconds;
- a body clip or ``idle``: the head still, the body playing the clip through the runtime's
  rig (:func:`runtime.eval.hair_quality.motion_pose`) for
  :func:`runtime.eval.hair_quality.motion_window_s` (or ``duration_s``), then at rest; the
  fps replays play a still head track and the same clip;
- a fitted style (``hairstyle`` not ``none``): the avatar with the style fitted
  (:meth:`runtime.eval.matrix.inputs.Inputs.fitted`), measured as above, plus the try-on's
  attachment report and, on the head turn, the try-on's own measures
  (:func:`solver.eval.tryon_quality.measure_tryon`: scalp drift of the chain roots from their
  skinned scalp triangles, hair vertices inside the head mesh). Those need the head-only
  motion of :func:`solver.eval.tryon_quality.run_hair`, so body-clip rows leave them empty.

The fps identity (:func:`runtime.replay.check_fps` over the settings' rates and jittered
runs) is the largest position (m) or velocity (m/s) difference of any run from the first
rate at common substeps; 0.0 means bit-identical. Wall-clock numbers (the solver's µs per
substep and per frame, the cell's seconds) go to the timing dict, never to the row.
A failure (an unreadable file, a style that cannot be fitted) is a row with ``status``
"error" and the message; a cell with nothing to measure (an avatar without spring bones or
humanoid head, a style too short for any chain: held rigidly on the head, which ``swaycam
metrics`` leaves out) is a row with ``status`` "skipped" and the reason. It never raises.
"""

from __future__ import annotations

import os
import socket
import time
import traceback

import numpy as np

from .axes import Cell
from .inputs import PROCESS_INPUTS, Inputs

#: Measured columns of a row taken from :class:`solver.eval.measure.RunMetrics`.
RUN_COLUMNS = (
    "chains", "joints", "hair_vertices", "hair_edges", "stretch_p99_pct", "stretch_worst_pct", "settle_mm",
    "root_drift_mm", "link_inside_pairs", "link_max_depth_mm", "link_max_depth_beyond_rest_mm", "vertex_inside",
    "vertex_max_depth_mm", "vertex_max_depth_beyond_rest_mm", "tip_rest_arc_mm", "tip_swing_mm",
)
TIMING_COLUMNS = ("substep_us_median", "substep_us_p95", "frame_update_us_median", "frame_update_us_p95")
ATTACHMENT_COLUMNS = ("guides", "attached", "joined", "rejected")
TRYON_COLUMNS = ("scalp_drift_mm", "head_inside", "head_depth_mm", "head_inside_rest", "head_depth_rest_mm")
FPS_COLUMNS = ("fps_labels", "fps_frames", "fps_substeps", "fps_position_diff", "fps_velocity_diff")
#: Names ``swaycam metrics`` gives the generated avatars.
AVATAR_NAMES = {"default": "swaycam default", "layered": "swaycam layered"}
#: A clip cell's head: still (identity rotation).
STILL = np.array([0.0, 0.0, 0.0, 1.0])


class NotMeasured(ValueError):
    """The cell has no hair dynamics to measure (module doc): a "skipped" row, keeping what
    ``row`` holds (a fitted style's attachment report)."""

    def __init__(self, message: str, row: dict | None = None):
        super().__init__(message)
        self.row = row


def _plain(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    return v


def empty_row(cell: Cell) -> dict:
    """The identity columns of ``cell`` and every measured column empty (None)."""
    row = {"key": cell.key, "avatar": cell.avatar, "hairstyle": cell.hairstyle, "clip": cell.clip,
           "solver": cell.solver, "status": "ok", "error": None, "name": None, "clip_label": None,
           "motion_s": None, "settle_s": float(cell.settings.settle_s)}
    for k in RUN_COLUMNS + ATTACHMENT_COLUMNS + TRYON_COLUMNS + ("fps_identity",):
        row[k] = None
    for k in FPS_COLUMNS:
        row[k] = []
    return row


def error_row(cell: Cell, message: str, status: str = "error") -> dict:
    row = empty_row(cell)
    row.update(status=status, error=message)
    return row


def measure_cell(cell: Cell, inputs: Inputs | None = None, *, paths: dict[str, str] | None = None
                 ) -> tuple[dict, dict]:
    """Measure ``cell`` (module doc) -> (row, timing). ``inputs``: the loaded-object cache
    (default: this process's). ``paths`` ({local path: original path}) rewrites file names in
    an error message (inputs shipped to this machine). Never raises for a cell's failure."""
    inputs = inputs or PROCESS_INPUTS
    t0 = time.perf_counter()
    timing = {"key": cell.key, "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        row = _measure(cell, inputs, timing)
    except NotMeasured as exc:
        row = {**(exc.row or empty_row(cell)), "status": "skipped", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - a failing cell is a row, never a crashed run
        message = f"{type(exc).__name__}: {exc}"
        for local, original in (paths or {}).items():
            message = message.replace(local, original)
        row = error_row(cell, message)
        timing["traceback"] = traceback.format_exc(limit=8)
    timing["seconds"] = time.perf_counter() - t0
    return row, timing


def _measure(cell: Cell, inputs: Inputs, timing: dict) -> dict:
    from pathlib import Path

    from avatars.clips.head_turn import head_turn_rotation
    from solver.eval.measure import standard_run
    from tracking.pose_track import synthetic_track

    from ...pose_inputs.track import head_turn_track
    from ...replay import check_fps
    from ...rig.hair_params import parse_hair
    from ..hair_quality import motion_pose, motion_window_s

    s = cell.settings
    row = empty_row(cell)
    t = time.perf_counter()
    avatar = inputs.avatar(cell.avatar_input)
    name = AVATAR_NAMES.get(cell.avatar, avatar.meta.name or Path(cell.avatar_input.path).stem)
    fitted = None
    if cell.hair_input is not None:
        fitted = inputs.fitted(cell.avatar_input, cell.hair_input, cell.hairstyle)
        timing.update(fit_cached=fitted.cached, fit_s=fitted.seconds)
        avatar = fitted.result.avatar
        name = f"{name} + {fitted.label}"
        row.update(fitted.report)
        if not avatar.springs:
            raise NotMeasured(f"{name}: no spring chain (the hair is held rigidly on the head); not measured", row)
    if not avatar.springs or avatar.head_node() < 0:
        raise NotMeasured(f"{name}: no spring bones or no humanoid head; nothing to measure")
    timing["load_s"] = time.perf_counter() - t
    overrides = parse_hair(None)
    t = time.perf_counter()
    if cell.clip == "turn-test":
        motion_s = 4.0 if s.duration_s is None else float(s.duration_s)
        m = standard_run(avatar, head_turn_rotation, solver=cell.solver, name=name, motion_s=motion_s,
                         still_s=float(s.settle_s), overrides=overrides)
        track, setup, label = head_turn_track(), None, "turn-test"
    else:
        setup = inputs.motion(cell.clip_input, cell.clip, cell.clip_names)
        motion_s = motion_window_s(setup) if s.duration_s is None else float(s.duration_s)
        label = setup.label
        name = f"{name} · {label}"
        m = standard_run(avatar, head_turn_rotation, solver=cell.solver, name=name, motion_s=motion_s,
                         still_s=float(s.settle_s), overrides=overrides, pose=motion_pose(avatar, setup, motion_s))
        track = synthetic_track(lambda _t: STILL, duration_s=motion_s + 1.0, source="synthetic:still")
    timing["measure_s"] = time.perf_counter() - t
    row.update(name=name, clip_label=label, motion_s=motion_s)
    metrics = m.row()
    row.update({k: _plain(metrics[k]) for k in RUN_COLUMNS})
    timing.update({k: _plain(metrics[k]) for k in TIMING_COLUMNS})
    t = time.perf_counter()
    runs = check_fps(avatar, track, solver=cell.solver, duration_ns=int(round(motion_s * 1e9)), hair=None,
                     motion=setup, rates=s.rates, jittered=s.jittered)
    timing["fps_s"] = time.perf_counter() - t
    row.update(fps_labels=[r.label for r in runs], fps_frames=[int(r.frames) for r in runs],
               fps_substeps=[int(r.substeps) for r in runs],
               fps_position_diff=[float(r.max_position_diff) for r in runs],
               fps_velocity_diff=[float(r.max_velocity_diff) for r in runs])
    row["fps_identity"] = max(max(row["fps_position_diff"]), max(row["fps_velocity_diff"]))
    if fitted is not None and cell.clip == "turn-test":
        from solver.eval.tryon_quality import measure_tryon

        t = time.perf_counter()
        run = measure_tryon(fitted.result, solver=cell.solver, head=fitted.head, motion_s=motion_s,
                            still_s=float(s.settle_s))
        timing["tryon_s"] = time.perf_counter() - t
        row.update(scalp_drift_mm=1e3 * float(run.scalp_drift_m), head_inside=int(run.head_inside),
                   head_depth_mm=float(run.head_depth_mm), head_inside_rest=int(run.head_inside_rest),
                   head_depth_rest_mm=float(run.head_depth_rest_mm))
    return row
