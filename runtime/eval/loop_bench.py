"""Loop benchmarks: offline processing speed (× real time) and live latency by stage.

- offline: ``swaycam run`` on a file source, every frame tracked, simulated, drawn and
  encoded; speed = media duration / wall time (> 1 is faster than real time). Serial
  (tracking on the render thread) and pipelined (:mod:`runtime.pipeline`) alternate in one
  process, then the pose track recorded by the first run is replayed (no tracking). Besides
  wall time each row has the CPU time per frame of the process and of ffmpeg (all threads,
  the least disturbed number on a shared machine) and ``x_realtime_2_cores``: the speed if
  both cores did only this run (media duration / (CPU time / 2)) — the ceiling of a perfect
  pipeline on an idle 2-core machine.
- live: the same file played in real time through the live path (tracking thread, newest
  frame wins, monotonic clock); capture -> output latency p50/p95 broken down by stage:
  capture -> tracker result (MediaPipe), result -> frame start (waiting for the render
  thread), frame start -> drawn (substeps, pose, GL), drawn -> handed to the sinks, and
  the pose filter's delay (the pose shown is that much older than the frame's time).
- latency table (:func:`delay_table`): the pose filter's interpolation delay against
  extrapolation, on the clip's tracked observations arriving as they would live: lag,
  jitter, and how often the render time is past the newest observation (held/extrapolated).

Run it as ``swaycam bench loop`` (its options are declared in runtime/cli/bench.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from ..config import RunConfig
from .live_modes import DEFAULT_LIVE_MODES, LIVE_MODES
from ..session import Session, run


def _cpu_children_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_offline(source: str, *, avatar: str | None = None, size=(1280, 720), fps: float = 25.0,
                  track_ahead: int | None = None, record: str | None = None, video_preset: str | None = None) -> dict:
    """One offline run of ``source`` into an mp4 (``track_ahead`` 0: serial; None: pipelined).
    A ``.jsonl`` source is a pose-track replay (no tracking). ``x_realtime``: media duration
    over the whole run's wall time (opening the avatar, tracker, renderer and encoder, the
    frames, and finishing the file); ``frames_x_realtime``: over the frames' own time
    (:attr:`RunResult.duration_s`: first frame to last); ``setup_s``: the rest."""
    with tempfile.TemporaryDirectory() as tmp:
        extra = {"video_preset": video_preset} if video_preset else {}
        cfg = RunConfig(source=source, avatar=avatar, size=size, fps=fps, output=(f"video:{tmp}/b.mp4",),
                        track_ahead=track_ahead, record=record, **extra)
        t0, c0, k0 = time.perf_counter(), time.process_time(), _cpu_children_s()
        res = run(cfg, say=lambda s: None)
        wall = time.perf_counter() - t0
        cpu, ffmpeg = time.process_time() - c0, _cpu_children_s() - k0
        digest = hashlib.sha256(Path(f"{tmp}/b.mp4").read_bytes()).hexdigest()
    media_s = res.frames / fps
    n = max(res.frames, 1)
    return {"source": source, "size": f"{size[0]}x{size[1]}", "fps": fps, "frames": res.frames,
            "track_ahead": track_ahead, "media_s": round(media_s, 3), "wall_s": round(wall, 3),
            "x_realtime": round(media_s / wall, 3), "frames_x_realtime": round(media_s / max(res.duration_s, 1e-9), 3),
            "setup_s": round(wall - res.duration_s, 3), "ms_per_frame": round(1000 * wall / n, 2),
            "cpu_ms_per_frame": round(1000 * cpu / n, 2), "ffmpeg_cpu_ms_per_frame": round(1000 * ffmpeg / n, 2),
            "x_realtime_2_cores": round(media_s / ((cpu + ffmpeg) / 2), 3), "sha256": digest}


def _median_row(rows: list[dict]) -> dict:
    keys = ("x_realtime", "frames_x_realtime", "setup_s", "ms_per_frame", "cpu_ms_per_frame",
            "ffmpeg_cpu_ms_per_frame", "x_realtime_2_cores")
    out = {k: round(statistics.median(r[k] for r in rows), 3) for k in keys}
    out["x_realtime_p95_low"] = round(min(r["x_realtime"] for r in rows), 3)   # the slowest run
    out["runs"] = len(rows)
    out["sha256"] = sorted({r["sha256"] for r in rows})     # one digest: every run wrote the same bytes
    return out


def bench_offline_modes(source: str, *, avatar: str | None = None, size=(1280, 720), fps: float = 25.0,
                        rounds: int = 2, video_preset: str | None = None, load: int = 0) -> dict:
    """Serial, pipelined and pose-track replay, alternating for ``rounds`` rounds (module doc).
    ``load``: CPU-burning helpers running throughout (:class:`runtime.eval.load.CpuLoad`).
    Returns {"serial": ..., "pipelined": ..., "replay": ...} medians over the rounds (with the
    mp4 digests of the mode's runs: one when they agree), and ``runs`` (every run)."""
    from .load import CpuLoad

    runs: dict[str, list[dict]] = {"serial": [], "pipelined": [], "replay": []}
    with tempfile.TemporaryDirectory() as tmp, CpuLoad(load):
        track = f"{tmp}/poses.jsonl"
        for k in range(rounds):
            vp = {"video_preset": video_preset}
            runs["serial"].append(bench_offline(source, avatar=avatar, size=size, fps=fps, track_ahead=0,
                                                record=track if k == 0 else None, **vp))
            runs["pipelined"].append(bench_offline(source, avatar=avatar, size=size, fps=fps, **vp))
            runs["replay"].append(bench_offline(track, avatar=avatar, size=size, fps=fps, **vp))
    return {**{m: _median_row(r) for m, r in runs.items()}, "runs": runs}


class _TimedOutputs:
    """The session's outputs, with the wall time of each ``send`` (start, end) kept."""

    def __init__(self, outputs, clock):
        self._outputs, self._clock = outputs, clock
        self.last: tuple[int, int] = (0, 0)

    def send(self, wall_ns: int) -> None:
        t0 = self._clock.wall_ns()
        self._outputs.send(wall_ns)
        self.last = (t0, self._clock.wall_ns())

    @property
    def needs_pixels(self) -> bool:
        return self._outputs.needs_pixels


def _pcts(values) -> dict:
    v = np.asarray([x for x in values if x is not None], np.float64)
    if not v.size:
        return {"p50": None, "p95": None}
    return {"p50": round(float(np.percentile(v, 50)), 2), "p95": round(float(np.percentile(v, 95)), 2)}


class LoopbackLikeBackend:
    """A pyvirtualcam backend that does what a v4l2loopback device costs the sender: the
    frame converted to I420 (the device's format; OpenCV) into one reused buffer, then dropped.
    Registered as :data:`VCAM_BACKEND` for ``bench loop --live-output vcam`` (this machine
    has no /dev/video device)."""

    def __init__(self, *, width, height, fps, fourcc, device, **kw):
        self._buf = np.empty((height * 3 // 2, width), np.uint8)
        self._shape = (height, width, 3)
        self.frames = 0

    def send(self, frame):
        import cv2

        cv2.cvtColor(frame.reshape(self._shape), cv2.COLOR_RGB2YUV_I420, dst=self._buf)   # pyvirtualcam flattens it
        self.frames += 1

    def close(self):
        pass

    def device(self):
        return "swaycam-bench"

    def native_fourcc(self):
        return None


#: the pyvirtualcam backend name of :class:`LoopbackLikeBackend`
VCAM_BACKEND = "swaycam-bench"


def _live_output(kind: str, tmp: str) -> str:
    """``video``: an mp4 (x264 in its own process); ``vcam``: a virtual camera on
    :class:`LoopbackLikeBackend`."""
    if kind == "video":
        return f"video:{tmp}/b.mp4"
    if kind == "vcam":
        import os

        import pyvirtualcam

        pyvirtualcam.register_backend(VCAM_BACKEND, LoopbackLikeBackend)
        os.environ["SWAYCAM_VCAM_BACKEND"] = VCAM_BACKEND
        return "vcam"
    raise ValueError(f"live output {kind!r}: 'video' or 'vcam'")


def retimed_clip(source: str, fps: float, folder: str) -> str:
    """``source``'s frames as a ``fps`` camera would deliver them (same frames, one every
    1/fps s): an MJPEG .avi in ``folder`` (cheap to decode). A live 30 fps benchmark of the
    25 fps selfie clip plays this, so the camera delivers at the output rate.

    Raises:
        ValueError: ``source`` has no frames. SourceError: it cannot be read."""
    import cv2

    from tracking.frame_sources import open_source

    path = f"{folder}/camera_{fps:g}fps.avi"
    writer = None
    with open_source(source) as src:
        for f in src:
            img = cv2.cvtColor(f.image, cv2.COLOR_RGB2BGR)
            if writer is None:
                writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), fps, (img.shape[1], img.shape[0]))
            writer.write(img)
    if writer is None:
        raise ValueError(f"{source}: no frames")
    writer.release()
    return path


def bench_live(source: str, *, avatar: str | None = None, size=(1280, 720), fps: float = 30.0,
               pose_delay_ms: float | None = None, extrapolate: bool | None = None,
               frame_lock: bool = True, immediate: bool = True, camera_fps: float | None = None,
               output: str = "video", video_preset: str | None = None, quality: str = "auto",
               tracker_nice: int = 0, duration_s: float | None = None) -> dict:
    """The file played live (as a ``camera_fps`` camera when given, see :func:`retimed_clip`)
    at ``fps`` into ``output``; telemetry summary plus ``stages_ms`` (p50/p95 per stage, module
    doc; ``read_delay``: how far before the frame's start the filter is read (its delay
    plus the draw's one-substep lag); ``shown_pose_age``: capture -> output plus what that
    adds when it reads older than the newest observation: how old the shown pose is).
    ``frame_lock``: frames follow the tracked poses (:mod:`runtime.pose_lock`);
    ``immediate``: each frame read back as drawn (False: the PBO double buffer, one frame
    late); ``locked_pct``: frames drawn while locked. ``output``: "video" (an mp4) or "vcam"
    (:class:`LoopbackLikeBackend`). ``quality``, ``tracker_nice``: the run's settings (the
    quality governor, the tracking thread's nice value); ``quality`` in the result: the
    governor's level, steps taken and undone (``steps``: frame, rung, down) at the end.
    ``duration_s``: loop seconds to run (None: the clip's length)."""
    recs: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        if camera_fps:
            source_run = retimed_clip(source, camera_fps, tmp)
        else:
            source_run = source
        extra = {"video_preset": video_preset} if video_preset else {}
        cfg = RunConfig(source=source_run, avatar=avatar, size=size, fps=fps, realtime=True,
                        output=(_live_output(output, tmp),), pose_delay_ms=pose_delay_ms, frame_lock=frame_lock,
                        quality=quality, tracker_nice=tracker_nice, duration=duration_s, **extra)
        if extrapolate is not None:
            cfg = dataclasses.replace(cfg, filter=dataclasses.replace(cfg.filter, extrapolate=bool(extrapolate)))
        with Session(cfg, say=lambda s: None) as session:
            session.outputs.immediate = bool(immediate)
            timed = _TimedOutputs(session.outputs, session.clock)
            session.outputs = timed
            inp = session.pose_input
            extra = bool(inp.filter.options.extrapolate)
            arrivals = inp.arrivals
            late = timed.needs_pixels and not immediate   # PBO readback: the sinks get a frame with the next one

            def on_frame(info, rig):
                cap = info.latency_from_ns
                res = None if cap is None else next((r for c, r in reversed(inp.results) if c == cap), None)
                lag_ms = (info.t_ns - info.draw_t_ns) / 1e6       # the pose is drawn a substep behind
                recs.append((cap, res, info.wall_start_ns, *timed.last, inp.read_delay_ns / 1e6 + lag_ms,
                             arrivals.locked))

            session.on_frame = on_frame
            result = session.run()
    stages: dict[str, list] = {k: [] for k in ("capture_to_result", "result_to_frame", "draw_calls",
                                               "raster_readback_sink", "until_next_frame_sent", "capture_to_output",
                                               "read_delay", "shown_pose_age")}
    for k, (cap, res, start, send0, send1, delay_ms, _) in enumerate(recs[:-1] if late else recs):
        if cap is None:
            continue
        out = recs[k + 1][4] if late else send1          # when the sinks had this frame's pixels
        stages["capture_to_result"].append(None if res is None else (res - cap) / 1e6)
        stages["result_to_frame"].append(None if res is None else (start - res) / 1e6)
        stages["draw_calls"].append((send0 - start) / 1e6)
        stages["raster_readback_sink"].append((send1 - send0) / 1e6)
        stages["until_next_frame_sent"].append((out - send1) / 1e6)
        total = (out - cap) / 1e6
        stages["capture_to_output"].append(total)
        stages["read_delay"].append(0.0 if extra else delay_ms)
        # the filter is read delay_ms before the frame's start: older than the newest
        # capture when that is more than start - capture (else the newest is shown)
        filt = 0.0 if extra else max(0.0, delay_ms - (start - cap) / 1e6)
        stages["shown_pose_age"].append(total + filt)
    locked = [r[6] for r in recs]
    return {"source": source, "camera_fps": camera_fps, "output": output, "size": f"{size[0]}x{size[1]}", "target_fps": fps,
            "frame_lock": frame_lock, "immediate": immediate, "extrapolate": extra,
            "pose_delay_ms": pose_delay_ms, "locked_pct": round(100.0 * sum(locked) / max(len(locked), 1), 1),
            **result.summary, "stages_ms": {k: _pcts(v) for k, v in stages.items()}}


#: The numbers of a live run that :func:`bench_live_rounds` takes the median of.
_LIVE_KEYS = ("fps", "dropped_frames", "latency_ms_p50", "latency_ms_p95", "tracker_ms_p50", "tracker_ms_p95",
              "locked_pct")


def _median(values):
    v = [x for x in values if x is not None]
    return None if not v else round(float(statistics.median(v)), 2)


def bench_live_rounds(source: str, modes, *, rounds: int = 3, load: int = 0, on_run=None, **live) -> dict:
    """The live ``modes`` (names of :data:`LIVE_MODES`) interleaved round by round (A B A B: a
    burst of load lands on every mode alike) for ``rounds`` rounds, with ``load`` CPU-burning
    helpers (:class:`runtime.eval.load.CpuLoad`) running throughout. ``live``: the
    :func:`bench_live` keywords of every run; ``on_run(mode, round, row)`` after each run.

    Returns {"load": n, "rounds": r, "modes": {name: {"what", medians of the :data:`_LIVE_KEYS`
    and of every stage's p50 / p95 over the rounds ("stages_ms"), "quality": the governor's
    chosen steps per round ([rungs active at the end], steps taken), "runs": every run}}}."""
    from .load import CpuLoad

    unknown = [m for m in modes if m not in LIVE_MODES]
    if unknown:
        raise ValueError(f"live mode {unknown[0]!r}: one of {', '.join(LIVE_MODES)}")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    with CpuLoad(load):
        for k in range(rounds):
            for m in modes:
                row = bench_live(source, **{**live, **LIVE_MODES[m][1]})
                runs[m].append(row)
                if on_run is not None:
                    on_run(m, k, row)
    out: dict = {}
    for m, rows in runs.items():
        stages = {st: {q: _median(r["stages_ms"][st][q] for r in rows) for q in ("p50", "p95")}
                  for st in rows[0]["stages_ms"]}
        quality = [{"active": r["quality"]["active"], "steps": [(s["frame"], s["rung"], "down" if s["down"] else "up")
                                                                for s in r["quality"]["steps"]]}
                   for r in rows if r.get("quality")]
        out[m] = {"what": LIVE_MODES[m][0], **{key: _median(r.get(key) for r in rows) for key in _LIVE_KEYS},
                  "stages_ms": stages, "quality": quality, "runs": rows}
    return {"load": load, "rounds": rounds, "modes": out}


def delay_table(source: str, *, delays_ms=(0, 10, 20, 33.3, 40, 50), camera_fps: float = 30.0,
                render_fps: float = 30.0, tracker_ms: float = 12.0, frames: int = 225,
                model_path=None, phases: int = 8) -> list[dict]:
    """The pose filter's interpolation delay against extrapolation (docs/design.md §2, live latency
    rule), on the clip's frames tracked once and fed as a live camera would: frame k captured
    at k / ``camera_fps`` s (the clip's poses resampled to that rate by frame order), its
    observation pushed ``tracker_ms`` later; the filter sampled at ``render_fps``.

    Per row (delay d, interpolate or extrapolate): ``lag_ms`` of the shown yaw behind the raw
    yaw at capture time (:func:`tracking.eval.bench.lag_ms`, plus the tracker's time: the shown
    pose can only follow what has been tracked), ``jitter_deg``: RMS of the shown yaw's
    second difference per rendered frame (roughness: steps, holds, overshoot), ``held_pct``:
    rendered frames whose read time t − d is past the newest observation pushed (held or
    extrapolated instead of interpolated). Averaged over ``phases`` render-clock phases."""
    from avatars.math3d import euler_from_quat
    from tracking.eval.bench import lag_ms
    from tracking.face_tracker import FaceTracker, FaceTrackerOptions
    from tracking.frame_sources import open_source
    from tracking.head_pose import HeadPoseMapper
    from tracking.pose_filter import PoseFilter, PoseFilterOptions
    from tracking.pose_track import PoseSample

    cam_ns = int(round(1e9 / camera_fps))
    obs = []
    with open_source(source) as src, FaceTracker(FaceTrackerOptions(model_path=model_path)) as tr:
        for k, f in zip(range(frames), src):
            o = tr.process(f.image, k * cam_ns, index=k)
            obs.append(o)
    base = PoseFilterOptions()
    mapper = HeadPoseMapper(base.head)
    found = [o for o in obs if o.found]
    t_raw = np.array([o.timestamp_ns for o in found], np.float64)
    raw_yaw = np.degrees([euler_from_quat(mapper.apply(o.rotation, o.translation)[0])[0] for o in found])
    arrive = [o.timestamp_ns + int(tracker_ms * 1e6) for o in obs]
    rend_ns = 1e9 / render_fps
    rows = []
    modes = [(0.0, True)] + [(d, False) for d in delays_ms]
    for d, extra in modes:
        lags, jit, held, n = [], [], 0, 0
        for phase in range(phases):       # the render clock is not locked to the camera's
            pf = PoseFilter(dataclasses.replace(base, delay_ns=int(round(d * 1e6)), extrapolate=extra,
                                                recenter_at_start=False))
            s, k = PoseSample(), 0
            t_out, yaw = [], []
            t = arrive[0] + phase * rend_ns / phases
            while t < arrive[-1]:
                while k < len(obs) and arrive[k] <= t:
                    pf.push(obs[k])
                    k += 1
                pf.sample(int(t), out=s)
                held += (t - d * 1e6) > obs[k - 1].timestamp_ns
                n += 1
                t_out.append(t)
                yaw.append(math.degrees(euler_from_quat(s.rotation)[0]))
                t += rend_ns
            t_out, yaw = np.array(t_out), np.array(yaw)
            shown = np.interp(t_raw, t_out, yaw)          # what was on screen at each capture time
            lags.append(lag_ms(t_raw.astype(np.int64), raw_yaw, shown))
            jit.append(float(np.mean(np.diff(yaw, 2) ** 2)))
        rows.append({"delay_ms": round(d, 1), "mode": "extrapolate" if extra else "interpolate",
                     "lag_ms": round(float(np.mean(lags)), 1), "jitter_deg": round(math.sqrt(np.mean(jit)), 4),
                     "held_pct": round(100.0 * held / n, 1)})
    return rows
