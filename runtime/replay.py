"""Offline replays of a pose track at a chosen render rate, and the frame-rate check.

The frame-rate consistency rule (docs/design.md §2, §4.5): the solver never sees the frame time,
so replaying one track at 24, 30, 60, 120 or 144 fps, or with jittered frame times, gives
bit-identical hair states (tails and velocities) at every common substep. Replays here
are physics-only (no GL) unless the caller draws; the substep cap is lifted so that a long
frame is fully simulated (a capped, dropped debt is a deliberate live-mode behaviour).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from avatars import Avatar
from tracking.pose_track import PoseTrack

from .clock import NO_CAP, frame_times
from .loop import Loop
from .rig import AvatarRig, MotionSetup

#: Render rates of the standard check, and the jittered runs (fps, jitter fraction, seed).
CHECK_RATES = (24, 30, 60, 120, 144)
CHECK_JITTERED = ((60, 0.5, 1), (30, 0.9, 2), (144, 0.95, 3))


@dataclass(frozen=True, eq=False)
class HairStates:
    """Hair state after every substep n = 0..n_max of a replay.

    Attributes:
        t_ns: (n,) int64 substep times (t0 + n·1e9 // 120).
        tails: (n, S, 3) float64 metres, world.
        velocities: (n, S, 3) float64 m/s.
        frames: render frames of the replay.
    """

    t_ns: np.ndarray
    tails: np.ndarray
    velocities: np.ndarray
    frames: int

    def save(self, path) -> Path:
        """Write an .npz (the suffix is added when missing, as numpy does); returns the path
        written. Raises IsADirectoryError for a folder, OSError when it cannot be written."""
        p = npz_path(path)
        np.savez_compressed(p, t_ns=self.t_ns, tails=self.tails, velocities=self.velocities,
                            frames=np.int64(self.frames))
        return p


#: Why a folder is not a ``--dump`` file name.
FOLDER_REASON = "is a folder; give a file name such as states.npz"


def npz_path(path) -> Path:
    """The file :meth:`HairStates.save` writes for ``path``: ``.npz`` added when missing.
    Raises IsADirectoryError for a folder."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(21, FOLDER_REASON, str(p))
    return p if p.suffix.lower() == ".npz" else p.with_name(p.name + ".npz")


def replay(avatar: Avatar, track: PoseTrack, fps: float, *, solver: str = "rest-shape", jitter: float = 0.0,
           seed: int = 0, max_substeps: int = NO_CAP, duration_ns: int | None = None,
           hair: dict | None = None, motion: MotionSetup | None = None) -> HairStates:
    """Replay ``track`` rendered at ``fps`` (physics only) and return the hair at every substep.
    ``hair``: ``[hair]`` settings (:mod:`runtime.rig.hair_params`) replacing the avatar's own;
    ``motion``: the body motion (None: none; the clip starts at the track's first time).

    Raises:
        ValueError (ClipError): a clip the avatar cannot play."""
    from .pose_inputs import TrackInput

    rig = AvatarRig(avatar, solver=solver, hair=hair, motion=motion.options if motion is not None else None)
    if motion is not None:
        motion.apply(rig)
    times, tails, vels = [], [], []

    def record(n, t, r):
        tl, vl = r.hair_state()
        times.append(t)
        tails.append(tl)
        vels.append(vl)

    inp = TrackInput(track)
    loop = Loop(rig, inp, max_substeps=max_substeps, on_substep=record)
    dur = duration_ns if duration_ns is not None else inp.end_ns - inp.start_ns
    frames = 0
    for t in frame_times(fps, dur, start_ns=inp.start_ns, jitter=jitter, seed=seed):
        loop.frame(t)
        frames += 1
    return HairStates(np.asarray(times, np.int64), np.asarray(tails), np.asarray(vels), frames)


@dataclass(frozen=True)
class FpsCheckRow:
    label: str
    frames: int
    substeps: int
    max_position_diff: float
    max_velocity_diff: float


def check_fps(avatar: Avatar, track: PoseTrack, *, solver: str = "rest-shape",
              duration_ns: int | None = None, hair: dict | None = None,
              motion: MotionSetup | None = None, rates=CHECK_RATES, jittered=CHECK_JITTERED) -> list[FpsCheckRow]:
    """Replay at every rate of ``rates`` (default :data:`CHECK_RATES`) and of ``jittered``
    ((fps, jitter fraction, seed) triples, default :data:`CHECK_JITTERED`); compare each with
    the first (24 fps by default) at the common substeps. Differences are max-abs over all
    substeps, segments and axes (metres, m/s); 0.0 means bit-identical. ``motion``: the body
    motion every replay plays (see :func:`replay`)."""
    runs = [(f"{fps} fps", replay(avatar, track, fps, solver=solver, duration_ns=duration_ns,
                                             hair=hair, motion=motion))
            for fps in rates]
    runs += [(f"{fps} fps ±{int(j * 100)}% jitter", replay(avatar, track, fps, solver=solver, jitter=j, seed=s,
                                                            duration_ns=duration_ns, hair=hair, motion=motion))
             for fps, j, s in jittered]
    ref = runs[0][1]
    rows = []
    for label, st in runs:
        n = min(len(ref.t_ns), len(st.t_ns))
        if not np.array_equal(ref.t_ns[:n], st.t_ns[:n]):
            raise AssertionError(f"{label}: substep times differ from the reference grid")
        dp = float(np.abs(st.tails[:n] - ref.tails[:n]).max()) if st.tails.size else 0.0
        dv = float(np.abs(st.velocities[:n] - ref.velocities[:n]).max()) if st.velocities.size else 0.0
        rows.append(FpsCheckRow(label, st.frames, n, dp, dv))
    return rows


def format_rows(rows: list[FpsCheckRow]) -> str:
    lines = [f"{'render rate':<24} {'frames':>7} {'substeps':>9} {'max |Δx| (m)':>13} {'max |Δv| (m/s)':>15}"]
    for r in rows:
        lines.append(f"{r.label:<24} {r.frames:>7} {r.substeps:>9} {r.max_position_diff:>13.3g} "
                     f"{r.max_velocity_diff:>15.3g}")
    return "\n".join(lines)
