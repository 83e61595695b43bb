"""Video file output: H.264 mp4 (yuv420p) through the ffmpeg binary bundled with imageio-ffmpeg.

Frames are converted to yuv420p here (OpenCV's ``COLOR_RGBA2YUV_I420``: ITU-R BT.601, limited
range, as ffmpeg's own conversion; chroma is the mean of each 2×2 block) and piped to ffmpeg
as raw yuv420p: 1.5 instead of 4 bytes per pixel through the pipe, and no conversion in the
encoder's process (the conversion costs 0.8 ms of CPU per 1280×720 frame here, ffmpeg's own
rgba input ~4-5 ms more than yuv420p input; runtime/NOTES.md, issue 20).

H.264 in yuv420p has no alpha: transparent pixels come out black (use a solid background or
:class:`render.sinks.png.PngSequenceSink` to keep alpha). Width and height must be even.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

import numpy as np

from .base import BackgroundWriter, check_frame

log = logging.getLogger(__name__)


#: x264's speed presets, fastest first.
PRESETS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow")
DEFAULT_PRESET = "veryfast"


class VideoFileSink:
    """Write frames to ``path`` at a constant ``fps``.

    Args:
        path: output file (.mp4).
        fps: frame rate of the file (frames per second).
        size: (width, height) pixels, both even.
        pace: "frames": every ``send`` is one frame of the file. "timestamps": frames are
            placed at ``round((t_ns - t_first) * fps / 1e9)``, repeating the previous frame to
            fill gaps, so a live run at a varying render rate keeps real-time duration; a
            frame whose slot is taken goes into the next one when its time is less than a
            slot before it (frame-time jitter: the file runs at most one slot ahead), else
            it is dropped.
        crf: x264 constant rate factor (lower = better; 18 is visually lossless).
        preset: x264 speed preset (:data:`PRESETS`).

    Attributes:
        frames: frames written to the file so far (after pacing).
    """

    needs_pixels = True

    def __init__(self, path: str | Path, fps: float, size: tuple[int, int], *,
                 pace: Literal["frames", "timestamps"] = "frames", crf: int = 18, preset: str = DEFAULT_PRESET,
                 codec: str = "libx264"):
        import imageio_ffmpeg

        if preset not in PRESETS:
            raise ValueError(f"x264 preset {preset!r} is not one of {', '.join(PRESETS)}")
        w, h = int(size[0]), int(size[1])
        if w % 2 or h % 2:
            raise ValueError(f"video size {w}x{h}: H.264 yuv420p needs even width and height")
        if fps <= 0:
            raise ValueError(f"fps {fps}: must be positive")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.size, self.fps, self.pace = (w, h), float(fps), pace
        self.frames = 0
        self._t0: int | None = None
        self._last: np.ndarray | None = None
        self._gen = imageio_ffmpeg.write_frames(
            str(self.path), (w, h), pix_fmt_in="yuv420p", pix_fmt_out="yuv420p", fps=fps, codec=codec,
            quality=None, macro_block_size=1, ffmpeg_log_level="error",
            output_params=["-crf", str(int(crf)), "-preset", preset, "-movflags", "+faststart"])
        self._gen.send(None)
        self._writer = BackgroundWriter(self._gen.send, name="video-writer")
        self._closed = False

    def send(self, rgba: np.ndarray, t_ns: int = 0) -> None:
        """Queue one frame (converted to yuv420p: ``rgba`` is not kept); see ``pace`` for how
        ``t_ns`` is used."""
        import cv2

        if self._closed:
            raise RuntimeError("sink is closed")
        frame = cv2.cvtColor(np.ascontiguousarray(check_frame(rgba, self.size)), cv2.COLOR_RGBA2YUV_I420)
        repeats = 1
        if self.pace == "timestamps":
            if self._t0 is None:
                self._t0 = int(t_ns)
            pos = (int(t_ns) - self._t0) * self.fps / 1e9
            slot = round(pos)
            if slot < self.frames and pos > self.frames - 1:
                slot = self.frames      # early by under a slot (frame-time jitter): the next free slot
            repeats = slot + 1 - self.frames
            if repeats <= 0:
                return
            if repeats > 1 and self._last is not None:
                for _ in range(repeats - 1):
                    self._writer.put(self._last)
                self.frames += repeats - 1
                repeats = 1
        self._writer.put(frame)
        self._last = frame
        self.frames += repeats

    def close(self) -> None:
        """Flush and finish the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._writer.close()
        finally:
            self._gen.close()
        log.info("wrote %s: %d frames, %dx%d at %g fps", self.path, self.frames, *self.size, self.fps)

    def __enter__(self) -> "VideoFileSink":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
