"""Animated GIFs, still images and image folders as frame sources (via Pillow).

- GIF: frame k at the sum of the previous frames' durations (the GIF's own timing; a
  missing or zero duration counts as 100 ms, as browsers do).
- Still image: the same frame ``repeat`` times at ``k · 10⁹ / fps``.
- Folder: the images in natural name order (``2.png`` before ``10.png``) at ``k · 10⁹ / fps``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from .errors import SourceError
from .frame_sources import IMAGE_SUFFIXES, Frame, FrameSource, SourceInfo, as_rgb, check_file
from .video import Pacer

GIF_DEFAULT_DURATION_MS = 100


def _load_rgb(path: Path) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise SourceError(f"image {path}: not a readable image ({exc})") from None


class GifSource(FrameSource):
    """An animated (or single-frame) GIF; timestamps from its frame durations."""

    def __init__(self, path: str | os.PathLike, *, realtime: bool = False) -> None:
        from PIL import Image, UnidentifiedImageError

        self.path = check_file(path, "GIF")
        try:
            self._im = Image.open(self.path)
            self._im.load()
        except (UnidentifiedImageError, OSError, ValueError) as exc:
            raise SourceError(f"GIF {self.path}: not a readable image ({exc})") from None
        self._n = int(getattr(self._im, "n_frames", 1))
        self._k = 0
        self._t = 0
        self._pacer = Pacer() if realtime else None
        w, h = self._im.size
        durations = []
        for i in range(self._n):
            self._im.seek(i)
            durations.append(int(self._im.info.get("duration") or GIF_DEFAULT_DURATION_MS))
        self._durations = durations
        fps = 1000.0 * self._n / sum(durations)
        self.info = SourceInfo(str(self.path), w, h, fps, self._n)

    def read(self) -> Frame | None:
        if self._im is None or self._k >= self._n:
            return None
        k = self._k
        try:
            self._im.seek(k)
            img = np.ascontiguousarray(np.asarray(self._im.convert("RGB")))
        except (OSError, ValueError) as exc:
            raise SourceError(f"GIF {self.path} frame {k}: cannot decode ({exc})") from None
        t = self._t * 1_000_000
        self._t += self._durations[k]
        self._k += 1
        if self._pacer is not None:
            self._pacer.wait(t)
        return Frame(img, t, k)

    def close(self) -> None:
        if self._im is not None:
            self._im.close()
            self._im = None


class ImageSource(FrameSource):
    """One still image, delivered ``repeat`` times (a still clip) at ``fps``."""

    def __init__(self, path: str | os.PathLike, *, repeat: int = 1, fps: float = 25.0, realtime: bool = False) -> None:
        self.path = check_file(path, "image")
        if repeat < 1:
            raise ValueError(f"repeat must be >= 1, got {repeat}")
        self._img = as_rgb(_load_rgb(self.path), str(self.path))
        self._repeat, self._fps, self._k = repeat, fps, 0
        self._pacer = Pacer() if realtime else None
        h, w = self._img.shape[:2]
        self.info = SourceInfo(str(self.path), w, h, fps, repeat)

    def read(self) -> Frame | None:
        if self._k >= self._repeat:
            return None
        k = self._k
        self._k += 1
        t = int(round(k * 1e9 / self._fps))
        if self._pacer is not None:
            self._pacer.wait(t)
        return Frame(self._img, t, k)


def _natural_key(p: Path):
    return [int(s) if s.isdigit() else s.lower() for s in re.split(r"(\d+)", p.name)]


class ImageFolderSource(FrameSource):
    """The images of a folder (suffixes in :data:`~tracking.frame_sources.IMAGE_SUFFIXES`), in
    natural order, at ``fps``. Every image must have the size of the first."""

    def __init__(self, path: str | os.PathLike, *, fps: float = 25.0, realtime: bool = False) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise SourceError(f"image folder {self.path} does not exist")
        self._files = sorted((p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES), key=_natural_key)
        if not self._files:
            raise SourceError(f"image folder {self.path}: no images ({', '.join(IMAGE_SUFFIXES)})")
        self._fps, self._k = fps, 0
        self._pacer = Pacer() if realtime else None
        first = _load_rgb(check_file(self._files[0], "image"))
        self._size = first.shape[:2]
        self.info = SourceInfo(str(self.path), first.shape[1], first.shape[0], fps, len(self._files))

    def read(self) -> Frame | None:
        if self._k >= len(self._files):
            return None
        k = self._k
        p = check_file(self._files[k], "image")
        img = as_rgb(_load_rgb(p), str(p))
        if img.shape[:2] != self._size:
            raise SourceError(f"image {p}: size {img.shape[1]}x{img.shape[0]} differs from the folder's "
                              f"first image ({self._size[1]}x{self._size[0]})")  # fmt: skip
        self._k += 1
        t = int(round(k * 1e9 / self._fps))
        if self._pacer is not None:
            self._pacer.wait(t)
        return Frame(img, t, k)
