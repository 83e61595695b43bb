"""PNG output: a single snapshot, or a numbered sequence that keeps the alpha channel."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
from PIL import Image

from .base import BackgroundWriter, check_frame

log = logging.getLogger(__name__)


def snapshot(path: str | Path, rgba: np.ndarray, *, compress_level: int = 6) -> Path:
    """Write ``rgba`` (H, W, 4) uint8 to a PNG file (alpha kept); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(check_frame(rgba), "RGBA").save(path, compress_level=compress_level)
    return path


#: the names of a sequence's frames (``pattern``'s default)
FRAME_GLOB = "frame_[0-9][0-9][0-9][0-9][0-9][0-9].png"


def earlier_frames(directory: str | Path) -> list[Path]:
    """Frames of an earlier sequence in ``directory`` (sorted)."""
    return sorted(Path(directory).glob(FRAME_GLOB))


def remove_earlier_frames(directory: str | Path) -> int:
    """Remove :func:`earlier_frames`; returns how many (logged)."""
    stale = earlier_frames(directory)
    for f in stale:
        f.unlink(missing_ok=True)
    if stale:
        log.info("removed %d frames of an earlier run from %s", len(stale), directory)
    return len(stale)


class PngSequenceSink:
    """Numbered RGBA PNGs in ``directory`` (``pattern`` formatted with ``index``), written on
    a background thread. Use it when the alpha channel must survive (H.264 has none).

    Frames of an earlier run in the folder (names of :data:`FRAME_GLOB`) are removed when the
    first frame arrives, not before: a run that fails before drawing anything leaves them
    as they were.

    Attributes:
        frames: frames accepted so far.
        replaced: earlier frames removed at the first frame.
    """

    needs_pixels = True

    def __init__(self, directory: str | Path, *, pattern: str = "frame_{index:06d}.png", compress_level: int = 1):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.pattern = pattern
        self.compress_level = compress_level
        self.frames = 0
        self.replaced = 0
        self._writer = BackgroundWriter(self._write, name="png-sequence")
        self._closed = False

    def _write(self, item) -> None:
        """One frame, written whole or not at all: to a temporary name, then renamed, so a
        disk that fills up mid-run leaves only complete PNGs behind."""
        index, rgba = item
        final = self.directory / self.pattern.format(index=index)
        tmp = final.with_name(final.name + ".part")
        try:
            Image.fromarray(rgba, "RGBA").save(tmp, format="PNG", compress_level=self.compress_level)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def send(self, rgba: np.ndarray, t_ns: int = 0) -> None:
        """Queue one frame (copied)."""
        if self._closed:
            raise RuntimeError("sink is closed")
        if self.frames == 0:
            self.replaced = remove_earlier_frames(self.directory)
        self._writer.put((self.frames, np.array(check_frame(rgba), copy=True)))
        self.frames += 1

    def close(self) -> None:
        """Finish writing. Idempotent."""
        if not self._closed:
            self._closed = True
            self._writer.close()
            log.info("wrote %d PNG frames to %s", self.frames, self.directory)

    def __enter__(self) -> "PngSequenceSink":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
