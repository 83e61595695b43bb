"""Video file output: H.264 mp4 (yuv420p) through the ffmpeg binary bundled with imageio-ffmpeg.

Frames are converted to yuv420p here (:func:`rgba_to_i420`: ITU-R BT.601, limited range, as
ffmpeg's own conversion; chroma of each 2×2 block's mean colour) and piped to ffmpeg
as raw yuv420p: 1.5 instead of 4 bytes per pixel through the pipe, and no conversion in the
encoder's process (the conversion costs 1.7 ms of CPU per 1280×720 frame here, on the writer thread; ffmpeg's own
rgba input ~4-5 ms more than yuv420p input; docs/history/runtime-notes.md, issue 20).

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


#: BT.601 chroma, full range (OpenCV's YCrCb) -> limited range (16..240): 128 + (c - 128) * 224 / 255
_LIMITED = np.clip(np.round(128 + (np.arange(256) - 128) * 224 / 255), 0, 255).astype(np.uint8)


def rgba_to_i420(rgba: np.ndarray) -> np.ndarray:
    """(H, W, 4) uint8 RGBA -> (H * 3 / 2, W) uint8 I420, ITU-R BT.601 limited range: Y per
    pixel (OpenCV's ``COLOR_RGBA2YUV_I420``), U and V of each 2x2 block's mean colour (within 1.2
    levels of the formula). OpenCV alone takes each block's top-left chroma: a silhouette's
    colour fringe was up to 75 levels off the block mean (ffmpeg filters it). 1.7 ms at
    1280x720 here (0.3 with point-sampled chroma)."""
    import cv2

    h, w = rgba.shape[:2]
    out = cv2.cvtColor(rgba, cv2.COLOR_RGBA2YUV_I420)
    means = cv2.resize(rgba, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    _, cr, cb = cv2.split(cv2.cvtColor(cv2.cvtColor(means, cv2.COLOR_RGBA2RGB), cv2.COLOR_RGB2YCrCb))
    q = (h // 2) * (w // 2)
    planes = out[h:].reshape(-1)
    planes[:q] = cv2.LUT(cb, _LIMITED).reshape(-1)
    planes[q:] = cv2.LUT(cr, _LIMITED).reshape(-1)
    return out


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
        self._writer = BackgroundWriter(lambda frame: self._gen.send(rgba_to_i420(frame)), name="video-writer")
        self._closed = False

    def send(self, rgba: np.ndarray, t_ns: int = 0) -> None:
        """Queue one frame (copied; converted to yuv420p on the writer thread); see ``pace`` for
        how ``t_ns`` is used."""
        if self._closed:
            raise RuntimeError("sink is closed")
        frame = np.array(check_frame(rgba, self.size), copy=True)   # converted on the writer thread
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
