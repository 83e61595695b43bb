"""The quality governor in a live run (issue 32): the real rungs of a tracked live run stepped
by a synthetic frame-time source (deterministic): down and back up, every step in ``/status``
and the HUD, every substep of the 120 Hz grid run, no frame-to-frame jump of the head or the
hair at a step change beyond one substep's travel."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from runtime.clock import NS_PER_S, RATE_HZ
from runtime.config import RunConfig
from runtime.governor import COARSE_PIXEL_ERROR, GovernorOptions, QualityGovernor
from runtime.session import RunError, Session
from tests.conftest import asset

SIZE = (320, 180)
H_NS = NS_PER_S // RATE_HZ
#: the synthetic work per frame: calm, then over budget, then calm again (frame ranges; the
#: runs are 5.5 s: 137 frames at 25 fps)
LOADED = range(20, 50)
CALM_MS, LOADED_MS = 8.0, 50.0
#: faster rules than the defaults, so a 9 s clip shows both steps down and both back up
FAST = GovernorOptions(window=10, misses=4, calm=15, hold=5, warmup=0)


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) between two 3x3 rotations."""
    c = (np.trace(a.T @ b) - 1.0) / 2.0
    return float(np.arccos(np.clip(c, -1.0, 1.0)))


#: a step's jump would be the whole offset of a reset or a re-read pose (tens of times the
#: motion's own travel: the test fails with the hair reset or the read delay jumping at a
#: step); a moving body's own travel can exceed its neighbours' fastest rate a little as it
#: accelerates, so the bound is that rate times this
JUMP_FACTOR = 1.5


def _jumps(travel: np.ndarray, dt: np.ndarray, at: list[int], changes: list[int], around: int = 6) -> list[tuple]:
    """The transitions ``at`` (frame k -> k + 1) whose travel exceeds the fastest travel rate
    of the ``around`` transitions either side (not at any of the ``changes``) times (dt + one substep) times
    :data:`JUMP_FACTOR`."""
    bad = []
    for k in at:
        near = [j for j in range(max(0, k - around), min(len(travel), k + around + 1)) if j not in changes]
        rate = max(travel[j] / dt[j] for j in near) * JUMP_FACTOR
        if travel[k] > rate * (dt[k] + H_NS) + 1e-9:
            bad.append((k, float(travel[k]), float(rate * (dt[k] + H_NS))))
    return bad


@pytest.mark.parametrize("case", ["selfie", "android", "turn-test"])
def test_steps_change_nothing_the_viewer_sees_jump(tmp_path, case):
    """The selfie clip (a talking head: the tracker's and the detail step), the face-mesh GIF
    (head turns of +-20 deg, 12.5 fps camera into 25 fps), the head-turn track played live
    (yaw 60 deg: the hair swings; the detail step only)."""
    source, fps, rungs = {"selfie": (asset("face", "mediapipe_selfie_segmentation_web.mp4"), 30, ["tracker", "detail"]),
                          "android": (asset("face", "mediapipe_face_mesh_android_gpu.gif"), 25, ["tracker", "detail"]),
                          "turn-test": ("turn-test", 30, ["detail"])}[case]
    cfg = RunConfig(source=str(source), realtime=True, fps=fps, size=SIZE, output=(f"video:{tmp_path}/q.mp4",),
                    hud=True, detail="reduced", duration=5.5)
    frames: list[dict] = []
    with Session(cfg, say=lambda s: None) as session:
        q = session.quality
        assert [r.name for r in q.governor.rungs] == rungs        # llvmpipe / EGL: no outlines
        q.governor = QualityGovernor(q.governor.rungs, q.governor.budget_ms, FAST)
        real_frame = q.frame
        live = session.pose_input.tracking if "tracker" in rungs else None
        rig = session.stage.rig
        head = rig.avatar.head_node()
        tips = rig.chains.segment_nodes

        def synthetic(work_ms):            # the measured work and drops are replaced, the rungs are real
            q._dropped = 0
            real_frame(LOADED_MS if len(frames) in LOADED else CALM_MS)

        q.frame = synthetic

        def on_frame(info, rig_):
            frames.append({"draw_t": info.draw_t_ns, "substeps": info.substeps, "dropped": info.dropped,
                           "head": info.world[head, :3, :3].copy(), "tips": info.world[tips, :3, 3].copy(),
                           "level": q.governor.level, "stride": live.stride if live else 1,
                           "pixel_error": session.renderer.pixel_error,
                           "status": session.live_status()["quality"]["active"],
                           "hud": dict(session.drawer._hud_info(info, rig_).extra)["quality"]})

        session.on_frame = on_frame
        result = session.run()
    steps = q.governor.steps
    assert [(s.rung, s.down) for s in steps] == [(r, True) for r in rungs] + [(r, False) for r in rungs[::-1]], \
        (steps, len(frames))
    # the rungs took effect: the tracker's stride, the coarse meshes, then back
    levels = [f["level"] for f in frames]
    top = levels.index(len(rungs)) + 1
    assert frames[top]["stride"] == (2 if live else 1) and frames[top]["pixel_error"] == COARSE_PIXEL_ERROR
    assert frames[top]["status"] == rungs and frames[top]["hud"] == ", ".join(rungs)
    assert frames[-1]["stride"] == 1 and frames[-1]["status"] == [] and frames[-1]["hud"] == "full"
    assert live is None or live.skipped > 0
    # the 120 Hz grid: every substep between the first and the last frame ran, but for the debt
    # a stall of more than max_substeps dropped (counted; a shared machine's start-up can), and
    # none around a change
    t = np.array([f["draw_t"] for f in frames], np.int64)
    dropped = [f["dropped"] for f in frames]
    assert sum(f["substeps"] for f in frames[1:]) + sum(dropped[1:]) == pytest.approx((t[-1] - t[0]) / H_NS, abs=1.0)
    assert result.summary["dropped_substeps"] == sum(dropped)
    # no jump at a change: the change applies from the frame after the step
    changes = [k for k in range(len(frames) - 1) if frames[k + 1]["level"] != frames[k]["level"]]
    assert len(changes) == 2 * len(rungs)
    # a change is judged where the machine ran the frames around it on time: a stall of the
    # shared machine (a frame late by half a period or more, substeps dropped) jerks the
    # motion by itself, step or no step; most changes must be judged
    dt = np.diff(t).astype(np.float64)
    period = NS_PER_S / fps
    calm = [k for k in changes
            if all(dropped[j] == 0 for j in range(max(k - 3, 0), min(k + 4, len(dropped))))
            and all(0.5 * period <= dt[j] <= 1.5 * period for j in range(max(k - 3, 0), min(k + 4, len(dt))))]
    assert len(calm) >= len(changes) // 2, (changes, calm)
    changes_judged = calm
    head_travel = np.array([_angle(frames[k]["head"], frames[k + 1]["head"]) for k in range(len(frames) - 1)])
    hair_travel = np.array([np.max(np.linalg.norm(frames[k + 1]["tips"] - frames[k]["tips"], axis=1))
                            for k in range(len(frames) - 1)])
    assert head_travel.max() > 0 and hair_travel.max() > 0        # the head and the hair moved
    assert _jumps(head_travel, dt, changes_judged, changes) == []
    assert _jumps(hair_travel, dt, changes_judged, changes) == []


def test_a_pin_the_run_cannot_take_is_refused(tmp_path):
    cfg = RunConfig(source="turn-test", realtime=True, fps=20, size=SIZE, output=(f"video:{tmp_path}/p.mp4",),
                    quality="tracker")
    with pytest.raises(RunError, match=r"quality: quality 'tracker': this run has no such step \(its steps: detail\)"):
        with Session(cfg, say=lambda s: None):
            pass


def test_offline_runs_have_no_governor(tmp_path):
    cfg = RunConfig(source="turn-test", fps=30, size=SIZE, duration=0.2, output=(f"video:{tmp_path}/o.mp4",))
    with Session(cfg, say=lambda s: None) as session:
        assert session.quality is None
        result = session.run()
    assert "quality" not in result.summary
