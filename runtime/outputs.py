"""Output specs of ``swaycam run --output`` -> render sinks.

    window            the window (needs a display)
    vcam[:DEVICE]     a virtual camera (pyvirtualcam; v4l2loopback / OBS)
    video:PATH        an mp4 (H.264) file
    png:DIR           a PNG sequence (keeps alpha)
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OutputSpec:
    kind: str          # window | vcam | video | png
    target: str = ""   # path / device


def parse_outputs(specs: tuple[str, ...] | list[str]) -> list[OutputSpec]:
    out = []
    for s in specs:
        kind, _, target = s.partition(":")
        out.append(OutputSpec(kind, target))
    return out


def default_outputs(has_display: bool, out_dir: str | Path = "out") -> list[OutputSpec]:
    """A window when a display exists, else ``out/swaycam-YYYYmmdd-HHMMSS.mp4``."""
    if has_display:
        return [OutputSpec("window")]
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return [OutputSpec("video", str(Path(out_dir) / f"swaycam-{stamp}.mp4"))]


def needs_window(outputs: list[OutputSpec]) -> bool:
    return any(o.kind == "window" for o in outputs)


def _probe_file(p: Path) -> None:
    """Open ``p`` for appending (creates nothing lasting, truncates nothing): catches what
    permission bits do not (/proc, /sys, read-only mounts, running as root)."""
    existed = p.exists()
    with open(p, "ab"):
        pass
    if not existed:
        p.unlink()


def check_writable(outputs: list[OutputSpec]) -> list[str]:
    """Create output folders and check they can be written, before anything runs.

    Returns notes for the user (stale PNG frames removed). Raises OSError naming the path.
    """
    notes = []
    for o in outputs:
        if o.kind == "video":
            p = Path(o.target)
            if p.is_dir():
                raise IsADirectoryError(21, "is a folder, not a video file", str(p))
            p.parent.mkdir(parents=True, exist_ok=True)
            if not os.access(p.parent, os.W_OK):
                raise PermissionError(13, "folder is not writable", str(p.parent))
            _probe_file(p)
        elif o.kind == "png":
            d = Path(o.target)
            if d.exists() and not d.is_dir():
                raise NotADirectoryError(20, "exists and is not a folder", str(d))
            d.mkdir(parents=True, exist_ok=True)
            if not os.access(d, os.W_OK):
                raise PermissionError(13, "folder is not writable", str(d))
            stale = sorted(d.glob("frame_[0-9][0-9][0-9][0-9][0-9][0-9].png"))
            for f in stale:
                f.unlink()
            if stale:
                notes.append(f"removed {len(stale)} frames of an earlier run from {d}")
    return notes


def open_sinks(outputs: list[OutputSpec], *, context, renderer, fps: float, size: tuple[int, int],
               live: bool):
    """Open one sink per output (returned in the order of ``outputs``). Raises
    render.VirtualCameraUnavailable for a missing vcam.

    Video files are opened last, so a failing virtual camera never truncates an existing
    video file. They are paced by frame count offline (every rendered frame is one file
    frame) and by timestamps live (the file keeps real-time duration at a varying render rate).
    """
    from render import PngSequenceSink, VideoFileSink, VirtualCameraSink, WindowSink

    opened: dict[int, object] = {}
    order = sorted(range(len(outputs)), key=lambda k: outputs[k].kind == "video")
    try:
        for k in order:
            o = outputs[k]
            if o.kind == "window":
                opened[k] = WindowSink(context, renderer)
            elif o.kind == "vcam":
                backend = os.environ.get("SWAYCAM_VCAM_BACKEND") or None
                opened[k] = VirtualCameraSink(device=o.target or None, backend=backend, fps=fps, size=size)
            elif o.kind == "video":
                opened[k] = VideoFileSink(o.target, fps, size, pace="timestamps" if live else "frames")
            elif o.kind == "png":
                opened[k] = PngSequenceSink(o.target)
    except BaseException:
        for s in opened.values():
            s.close()
        raise
    return [opened[k] for k in range(len(outputs))]
