"""The live modes of ``swaycam bench loop`` (:func:`runtime.eval.loop_bench.bench_live_rounds`),
apart from the benchmark so the command line can list them without importing a run."""

from __future__ import annotations

#: The live modes of ``bench loop`` by name: (what it is, :func:`bench_live` keywords).
LIVE_MODES = {
    "default": ("default (frames follow poses, readback as drawn, filter read at the newest pose, quality governor)",
                {}),
    "before": ("clock schedule, PBO readback, interpolation delay 33.3 ms (before)",
               {"frame_lock": False, "immediate": False, "pose_delay_ms": 33.3}),
    "pbo": ("frames follow poses, PBO readback", {"immediate": False}),
    "clock": ("clock schedule, readback as drawn", {"frame_lock": False}),
    "extrapolate": ("default + extrapolation", {"extrapolate": True}),
    "full": ("default without the quality governor (quality full)", {"quality": "full"}),
    "pbo-full": ("frames follow poses, PBO readback, without the quality governor",
                 {"immediate": False, "quality": "full"}),
    "pin-tracker": ("default with the tracker step pinned (quality tracker: every other camera frame)",
                    {"quality": "tracker"}),
    "pin-detail": ("default with the tracker and detail steps pinned (quality detail)", {"quality": "detail"}),
    "tracker-nice": ("default with the tracking thread 5 nice levels above the process's (tracker_nice -5; "
                     "needs CAP_SYS_NICE or RLIMIT_NICE)", {"tracker_nice": -5}),
}
#: What ``bench loop`` runs live without ``--live-mode``.
DEFAULT_LIVE_MODES = ("default", "before", "pbo", "clock", "extrapolate")


__all__ = ["DEFAULT_LIVE_MODES", "LIVE_MODES"]
