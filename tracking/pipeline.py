"""Source -> tracker -> pose filter -> pose track file and/or preview (what ``swaycam track`` runs).

Recorded tracks are avatar-frame poses by default: each observation is pushed into a
:class:`~tracking.pose_filter.PoseFilter` (no interpolation delay) and the filtered pose at
its capture time is written, so frames without a face carry the hold/ease pose with
``found: false``. With ``raw=True`` the camera-frame MediaPipe observations are written
unchanged (header ``frame: "camera"``), to be re-filtered later.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from avatars.math3d import euler_from_quat

from .face_tracker import FaceTracker, FaceTrackerOptions
from .pose_filter import PoseFilter, PoseFilterOptions
from .pose_track import PoseSample, TrackHeader
from .frame_sources import FrameSource
from .track_io import PoseTrackWriter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrackOptions:
    """Settings of :func:`run_track`.

    Attributes:
        tracker: :class:`FaceTrackerOptions`.
        pose: :class:`PoseFilterOptions` (its ``delay_ns`` is ignored: 0 offline).
        raw: record raw camera-frame observations instead of filtered avatar-frame poses.
        max_frames: stop after this many frames (None: the whole source / until Ctrl-C).
    """

    tracker: FaceTrackerOptions = field(default_factory=FaceTrackerOptions)
    pose: PoseFilterOptions = field(default_factory=PoseFilterOptions)
    raw: bool = False
    max_frames: int | None = None


@dataclass
class TrackSummary:
    """What :func:`run_track` did. ``yaw``, ``pitch``, ``roll``: (min, max) of the avatar-frame
    pose's Euler angles (:func:`~avatars.math3d.euler_from_quat`), radians; NaN when no
    face was found."""

    source: str
    frames: int = 0
    found: int = 0
    out: Path | None = None
    preview: str | None = None
    yaw: tuple[float, float] = (math.nan, math.nan)
    pitch: tuple[float, float] = (math.nan, math.nan)
    roll: tuple[float, float] = (math.nan, math.nan)
    tracker_ms_median: float = math.nan
    interrupted: bool = False


def jsonable(obj):
    """Dataclasses / paths / tuples as plain JSON values (for track headers)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (os.PathLike,)):
        return str(obj)
    if isinstance(obj, (np.generic,)):
        return obj.item()
    return obj


def run_track(source: FrameSource, *, out: str | os.PathLike | None = None, preview: str | None = None,
              options: TrackOptions = TrackOptions(),
              progress: Callable[[int, int | None], None] | None = None) -> TrackSummary:  # fmt: skip
    """Track every frame of ``source`` (module doc).

    Args:
        source: an open frame source (closed by the caller).
        out: JSONL pose track path, or None.
        preview: ``"window"`` or a video path for frames with landmarks and head axes, or None.
        options: :class:`TrackOptions`.
        progress: called as ``progress(frames_done, frame_count_or_None)`` after each frame.

    Raises:
        TrackingError: the model, source, output or preview failed (message names which).
    """
    from .preview import PreviewWriter, draw_observation

    info = source.info
    summary = TrackSummary(source=info.name, out=Path(out) if out else None, preview=preview)
    pose_opts = replace(options.pose, delay_ns=0)
    pf = PoseFilter(pose_opts)
    angles, times = [], []
    sample = PoseSample()
    with FaceTracker(options.tracker) as tracker:
        settings = {"tracker": jsonable(options.tracker), "pose": jsonable(pose_opts), "model": str(tracker.model_path),
                    "width": info.width, "height": info.height, "fps": info.fps}  # fmt: skip
        header = TrackHeader(frame="camera" if options.raw else "avatar", source=info.name, settings=settings)
        writer = PoseTrackWriter(out, header) if out else None
        pv = PreviewWriter(preview, fps=info.fps or 25.0) if preview else None
        try:
            for frame in source:
                if options.max_frames is not None and summary.frames >= options.max_frames:
                    break
                t0 = time.perf_counter_ns()
                obs = tracker.process_frame(frame)
                times.append((time.perf_counter_ns() - t0) * 1e-6)
                pf.push(obs)
                pf.sample(obs.timestamp_ns, out=sample)
                summary.frames += 1
                summary.found += bool(obs.found)
                if sample.found:
                    angles.append(euler_from_quat(sample.rotation))
                if writer is not None:
                    writer.write_observation(obs) if options.raw else writer.write_sample(sample)
                if pv is not None:
                    y, p, r = np.degrees(euler_from_quat(sample.rotation))
                    label = f"{frame.timestamp_ns / 1e9:6.2f}s yaw {y:+5.1f} pitch {p:+5.1f} roll {r:+5.1f}"
                    pv.write(draw_observation(frame.image, obs, label=label if obs.found else label + " (no face)"))
                if progress is not None:
                    progress(summary.frames, info.frame_count)
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            if writer is not None:
                writer.close()
            if pv is not None:
                pv.close()
    if angles:
        a = np.array(angles)
        summary.yaw, summary.pitch, summary.roll = (
            (float(a[:, i].min()), float(a[:, i].max())) for i in range(3)
        )
    if times:
        summary.tracker_ms_median = float(np.median(times))
    log.info("tracked %d frames of %s, %d with a face", summary.frames, info.name, summary.found)
    return summary
