"""The hair-quality table (issue: seed articles' measurement table): runs, Markdown, JSON, plots.

For every avatar and solver: :func:`solver.eval.measure.standard_run` on the standard head turn
(docs/design.md §4.5), plus the frame-rate consistency check of the product loop
(:func:`runtime.replay.check_fps` on the head-turn track). With body motion clips
(``motions``, ``swaycam metrics --motion``), a row per avatar, solver and clip: the head
still, the body playing the clip (a loop repeated to at least 4 s, a one-shot or sequence
once), cross-fading to rest, then 8 s at rest; posed by the runtime's rig
(:class:`runtime.rig.AvatarRig` with the clip, whole-skeleton FK at every substep) and
measured the same way (stretch, settle, links inside colliders and their depth...). Outputs in ``out_dir``:
``hair_metrics.md`` (the quality table and the timing table), ``hair_metrics.json``,
``tips_<avatar>.png`` (tip trajectories per solver) and ``stretch_<avatar>.png``
(per-edge maximum stretch histograms).

Rows of a hairstyle tried on (``swaycam metrics --hair``) carry the try-on's attachment
report: ``attachments`` {row avatar name: {"guides", "attached", "joined", "rejected"}}
adds those columns after the solver (:data:`TRYON_COLUMNS`) and those keys to the JSON rows;
without it the table is the one above, unchanged.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from avatars import Avatar
from avatars.clips.head_turn import head_turn_rotation
from solver.eval.measure import RunMetrics, standard_run
from solver.modes import SolverMode
from solver.params import RATE_HZ
from tracking.pose_track import PoseSample, PoseTrack, synthetic_track

from ..pose_inputs.track import head_turn_track
from ..replay import check_fps
from ..rig import AvatarRig, MotionSetup
from ..rig.hair_external import build_fields
from ..rig.hair_params import LINK_KEYS, parse_hair, parse_links

QUALITY_COLUMNS = (
    ("avatar", "avatar", "{}"), ("solver", "solver", "{}"),
    ("stretch_p99_pct", "p99 stretch %", "{:.2f}"), ("stretch_worst_pct", "worst edge %", "{:.2f}"),
    ("settle_mm", "settle (mm, last 2 s)", "{:.4f}"), ("root_drift_mm", "root drift (mm)", "{:.2g}"),
    ("link_inside_pairs", "links inside (pair·substeps)", "{}"),
    ("link_max_depth_beyond_rest_mm", "link depth beyond rest (mm)", "{:.2f}"),
    ("link_max_depth_mm", "link depth (mm)", "{:.2f}"),
    ("vertex_inside", "hair vertices inside", "{}"), ("vertex_max_depth_mm", "vertex depth (mm)", "{:.2f}"),
    ("tip_swing_mm", "tip swing (mm)", "{:.1f}"), ("tip_rest_arc_mm", "tip off rest arc at end (mm)", "{:.2f}"),
    ("fps_identical", "fps check", "{}"),
)
#: Linked sheets (solver/sheets.py), shown when a row has neighbouring chains: links solved, cap
#: bindings, the neighbours' phase difference during the motion and their relative swing
#: (solver/eval/sheet_phase.py).
SHEET_COLUMNS = (
    ("sheet_links", "sheet links", "{}"), ("cap_bindings", "cap bindings", "{}"),
    ("phase_median_deg", "phase ° (median)", "{:.1f}"), ("phase_max_deg", "phase ° (max)", "{:.1f}"),
    ("shear_median_mm", "shear mm (median)", "{:.2f}"),
)
#: The try-on's attachment report (docs/design.md §9): candidate guides, attached to the scalp,
#: joined to an attached guide, rejected.
TRYON_COLUMNS = (
    ("guides", "guides", "{}"), ("attached", "attached", "{}"), ("joined", "joined", "{}"),
    ("rejected", "rejected", "{}"),
)
TIMING_COLUMNS = (
    ("avatar", "avatar", "{}"), ("solver", "solver", "{}"), ("joints", "joints", "{}"),
    ("hair_vertices", "hair vertices", "{}"), ("substep_us_median", "substep µs (median)", "{:.1f}"),
    ("substep_us_p95", "substep µs (p95)", "{:.1f}"), ("frame_update_us_median", "60 fps frame µs (median)", "{:.1f}"),
    ("frame_update_us_p95", "60 fps frame µs (p95)", "{:.1f}"),
)


#: A motion row's clip plays at least this long (loops repeat), then the body rests.
MOTION_MIN_S = 4.0
MOTION_STILL_S = 8.0


def motion_window_s(setup: MotionSetup) -> float:
    """How long a metrics row plays ``setup`` (module doc), seconds."""
    if isinstance(setup.program, str):
        return MOTION_MIN_S
    speed = setup.options.speed
    total = sum(c.duration_s for c in setup.program) / speed
    last = setup.program[-1]
    looping = last.loop if setup.loop is None else setup.loop
    if looping and len(setup.program) == 1:
        period = last.duration_s / speed
        return period * max(1, math.ceil(MOTION_MIN_S / period - 1e-9))
    return total


def motion_pose(avatar: Avatar, setup: MotionSetup, motion_s: float):
    """``pose(n, world)`` for :func:`solver.eval.measure.standard_run`: the rig plays ``setup``
    from t = 0, then rests (cross-fade) from ``motion_s``; the head still."""
    options = replace(setup.options, after="rest")
    rig = AvatarRig(avatar, motion=options)
    MotionSetup(setup.program, options, setup.loop, setup.label).apply(rig)
    sample = PoseSample()
    stop = int(round(motion_s * RATE_HZ))
    state = {"rested": False}

    def pose(n: int, world: np.ndarray) -> None:
        if n >= stop and not state["rested"]:
            rig.play_motion("rest")
            state["rested"] = True
        sample.t_ns = n * 1_000_000_000 // RATE_HZ
        rig.pose_world(sample, world)

    return pose


def measure(avatars: dict[str, Avatar | tuple[Avatar, dict]], solvers=(SolverMode.REST_SHAPE, SolverMode.LEGACY), *,
            track: PoseTrack | None = None, fps_check: bool = True,
            motions: dict[str, MotionSetup] | None = None, sheets: str = "auto") -> list[RunMetrics]:
    """Run every (avatar, solver). A value may be ``(avatar, hair)`` with ``[hair]`` settings
    (:mod:`runtime.rig.hair_params`, e.g. ``{"gravity": [0, -9.81, 0]}``) replacing the file's
    spring parameters. ``track`` replaces the standard head turn (avatar frame). ``motions``
    ({label: setup}): instead, one row per clip with the head still (module doc); the row's
    avatar reads "<avatar> · <label>". ``sheets="off"`` runs without linked sheets (the
    try-on's nor the ``link`` settings'; their pairs are still measured for the phase columns).

    Raises:
        ValueError: bad ``hair`` settings, or an avatar without springs or head; ClipError:
            a clip the avatar cannot play.
    """
    if motions:
        return _measure_motions(avatars, solvers, motions, fps_check=fps_check, sheets=sheets)
    motion = head_turn_rotation
    motion_s, still_s = 4.0, 8.0
    if track is not None:
        t0 = track.start_ns
        motion = lambda t: track.sample(t0 + int(round(t * 1e9))).rotation  # noqa: E731
        motion_s, still_s = max(track.duration_s - 2.0, 0.0), 2.0
    rows = []
    for name, entry in avatars.items():
        avatar, hair = entry if isinstance(entry, tuple) else (entry, None)
        overrides, build, links = parse_hair(hair), build_fields(hair), parse_links(hair)
        for solver in solvers:
            m = standard_run(avatar, motion, solver=solver, name=name, motion_s=motion_s, still_s=still_s,
                             overrides=overrides, build=build, links=links, sheets=sheets)
            if fps_check:
                res = check_fps(avatar, track or head_turn_track(), solver=solver, duration_ns=4_000_000_000,
                                hair=_sheet_hair(hair, sheets))
                m.fps_identical = "0 (identical)" if all(r.max_position_diff == 0 and r.max_velocity_diff == 0
                                                         for r in res) else "DIFFERS"
            rows.append(m)
    return rows


def _sheet_hair(hair: dict | None, sheets: str) -> dict | None:
    """``[hair]`` settings for a rig that runs as ``sheets`` says: "off" drops every ``link``
    setting and turns every spring's links off."""
    if sheets != "off":
        return hair
    out = {k: v for k, v in (hair or {}).items() if k not in LINK_KEYS}
    springs = {p: {k: v for k, v in t.items() if k not in LINK_KEYS} for p, t in (out.get("springs") or {}).items()}
    if springs:
        out["springs"] = {p: t for p, t in springs.items() if t}
    return {**out, "link": False}


def _measure_motions(avatars, solvers, motions: dict[str, MotionSetup], *, fps_check: bool,
                     sheets: str = "auto") -> list[RunMetrics]:
    rows = []
    for name, entry in avatars.items():
        avatar, hair = entry if isinstance(entry, tuple) else (entry, None)
        overrides, build, links = parse_hair(hair), build_fields(hair), parse_links(hair)
        for label, setup in motions.items():
            motion_s = motion_window_s(setup)
            for solver in solvers:
                m = standard_run(avatar, head_turn_rotation, solver=solver, name=f"{name} · {label}",
                                 motion_s=motion_s, still_s=MOTION_STILL_S, overrides=overrides,
                                 pose=motion_pose(avatar, setup, motion_s), build=build, links=links,
                                 sheets=sheets)
                if fps_check:
                    still = synthetic_track(lambda t: np.array([0.0, 0.0, 0.0, 1.0]), duration_s=motion_s + 1.0,
                                            source="synthetic:still")
                    res = check_fps(avatar, still, solver=solver, duration_ns=int(round(motion_s * 1e9)),
                                    hair=_sheet_hair(hair, sheets), motion=setup)
                    m.fps_identical = "0 (identical)" if all(r.max_position_diff == 0 and r.max_velocity_diff == 0
                                                             for r in res) else "DIFFERS"
                rows.append(m)
    return rows


def _table(rows: list[RunMetrics], columns, extra: dict | None = None) -> str:
    head = "| " + " | ".join(c[1] for c in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    lines = [head, sep]
    for r in rows:
        d = {**r.row(), **(extra or {}).get(r.avatar, {})}
        lines.append("| " + " | ".join("-" if d.get(key) is None else fmt.format(d[key]) for key, _, fmt in columns)
                     + " |")
    return "\n".join(lines)


def quality_columns(attachments: dict | None, rows: list[RunMetrics] = ()) -> tuple:
    """The quality table's columns: :data:`QUALITY_COLUMNS`, with :data:`TRYON_COLUMNS` after
    the solver when rows carry an attachment report, and :data:`SHEET_COLUMNS` at the end
    when a row has neighbouring chains or sheet links."""
    cols = QUALITY_COLUMNS if not attachments else QUALITY_COLUMNS[:2] + TRYON_COLUMNS + QUALITY_COLUMNS[2:]
    if any(r.sheet_links or r.phase_median_deg is not None for r in rows):
        cols = cols + SHEET_COLUMNS
    return cols


def markdown(rows: list[RunMetrics], title: str | None = None, attachments: dict | None = None) -> str:
    run = title or "standard head turn: 4 s of motion, 8 s still"
    return (f"Hair quality ({run}; physics 120 Hz, mesh sampled at 30 Hz)\n\n"
            + _table(rows, quality_columns(attachments, rows), attachments) + "\n\nTiming (this machine, CPU; a 60 fps "
            "frame = 2 substeps + posing + skinning matrices)\n\n" + _table(rows, TIMING_COLUMNS) + "\n")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def plots(rows: list[RunMetrics], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for avatar in dict.fromkeys(r.avatar for r in rows):
        mine = [r for r in rows if r.avatar == avatar]
        fig, axes = plt.subplots(1, len(mine), figsize=(5 * len(mine), 4), squeeze=False, sharey=True)
        for ax, r in zip(axes[0], mine):
            tips = r.tips - r.tips[:1]
            for k in range(tips.shape[1]):
                ax.plot(r.tip_times, 1e3 * np.linalg.norm(tips[:, k], axis=1), lw=0.8)
            ax.set_title(f"{r.solver}")
            ax.set_xlabel("time (s)")
        axes[0][0].set_ylabel("tip distance from start (mm)")
        fig.suptitle(f"{avatar}: tip trajectories (standard head turn)")
        fig.tight_layout()
        p = out_dir / f"tips_{_slug(avatar)}.png"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        paths.append(p)
        fig, ax = plt.subplots(figsize=(6, 4))
        for r in mine:
            if r.edge_max_ratio.size:
                ax.hist(100 * (r.edge_max_ratio - 1), bins=60, alpha=0.5, label=r.solver)
        ax.set_xlabel("per-edge maximum stretch (%)")
        ax.set_ylabel("edges")
        ax.set_yscale("log")
        ax.legend()
        ax.set_title(f"{avatar}: edge stretch")
        fig.tight_layout()
        p = out_dir / f"stretch_{_slug(avatar)}.png"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        paths.append(p)
    return paths


def write_report(rows: list[RunMetrics], out_dir: str | Path, *, title: str | None = None,
                 attachments: dict | None = None) -> dict[str, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md = out / "hair_metrics.md"
    md.write_text(markdown(rows, title, attachments))
    js = out / "hair_metrics.json"
    js.write_text(json.dumps([{**r.row(), **(attachments or {}).get(r.avatar, {})} for r in rows], indent=2) + "\n")
    return {"markdown": md, "json": js, "plots": plots(rows, out)}
