"""Frame sources behind one interface: webcam, video files, GIFs, still images, folders.

Every source yields :class:`Frame` objects (RGB uint8 image + integer-ns timestamp) and is
a context manager. Files carry timestamps from the container (or GIF frame durations, or
``k / fps`` for stills and folders) starting at 0; the webcam stamps each frame with the
monotonic clock (``time.perf_counter_ns``) at capture.

:func:`open_source` picks the source from a spec: an int or digit string or ``/dev/video*``
is a webcam, a folder is an image folder, ``.gif`` is an animated GIF, an image suffix is
a still image, anything else a video file.
"""

from __future__ import annotations

import abc
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from .errors import SourceError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")
VIDEO_SUFFIXES = (".mp4", ".webm", ".avi", ".mkv", ".mov", ".m4v")


@dataclass
class Frame:
    """One frame.

    Attributes:
        image: (H, W, 3) uint8, RGB, C-contiguous.
        timestamp_ns: capture time (webcam: monotonic clock; files: media time from 0).
        index: frame number within its source (webcam: capture sequence number, so gaps
            mean frames were dropped in favour of newer ones).
    """

    image: np.ndarray
    timestamp_ns: int
    index: int

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return int(self.image.shape[1]), int(self.image.shape[0])


@dataclass(frozen=True)
class SourceInfo:
    """What a source is: ``name`` (path or device), size, nominal fps (0 if unknown),
    ``frame_count`` (None when unknown or live) and ``live`` (a camera)."""

    name: str
    width: int
    height: int
    fps: float
    frame_count: int | None
    live: bool = False


class FrameSource(abc.ABC):
    """Base class: ``read()`` returns the next :class:`Frame`, or None at the end.

    A live source (``info.live``: a camera, or a file played as one) also takes
    ``read(timeout_s=...)``: None after that many seconds without a new frame (it has not
    ended; ask again). Files ignore the timeout and return None only at their end.
    """

    info: SourceInfo

    @abc.abstractmethod
    def read(self) -> Frame | None:
        """The next frame, or None when the source is exhausted (or closed)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the device/file. Idempotent."""

    def __iter__(self) -> Iterator[Frame]:
        while True:
            f = self.read()
            if f is None:
                return
            yield f

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` as a Path, or SourceError if it is missing, not a file, or 0 bytes."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"{what} {p} does not exist")
    if not p.is_file():
        raise SourceError(f"{what} {p} is not a file")
    if p.stat().st_size == 0:
        raise SourceError(f"{what} {p} is empty (0 bytes)")
    return p


def as_rgb(image: np.ndarray, where: str) -> np.ndarray:
    """(H, W, 3) uint8 contiguous RGB from gray, RGB or RGBA arrays."""
    a = np.asarray(image)
    if a.dtype != np.uint8:
        raise SourceError(f"{where}: expected uint8 pixels, got {a.dtype}")
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    elif a.ndim == 3 and a.shape[2] == 4:
        a = a[:, :, :3]
    if a.ndim != 3 or a.shape[2] != 3:
        raise SourceError(f"{where}: expected an (H, W, 3) image, got shape {a.shape}")
    return np.ascontiguousarray(a)


class ArraySource(FrameSource):
    """Frames from memory (tests, benchmarks, synthetic clips).

    Args:
        images: sequence of (H, W, 3) uint8 RGB arrays.
        timestamps_ns: one per image, strictly increasing; default ``k · 10⁹ / fps``.
        fps: nominal rate for the default timestamps.
        name: shown in messages.
    """

    def __init__(self, images: Sequence[np.ndarray], *, timestamps_ns: Sequence[int] | None = None,
                 fps: float = 30.0, name: str = "<frames>") -> None:  # fmt: skip
        if len(images) == 0:
            raise SourceError(f"{name}: no frames")
        self._images = images
        if timestamps_ns is None:
            timestamps_ns = [int(round(k * 1e9 / fps)) for k in range(len(images))]
        if len(timestamps_ns) != len(images):
            raise SourceError(f"{name}: {len(images)} frames but {len(timestamps_ns)} timestamps")
        self._t = [int(t) for t in timestamps_ns]
        h, w = np.asarray(images[0]).shape[:2]
        self.info = SourceInfo(name, int(w), int(h), float(fps), len(images))
        self._k = 0

    def read(self) -> Frame | None:
        if self._k >= len(self._images):
            return None
        k = self._k
        self._k += 1
        return Frame(as_rgb(self._images[k], f"{self.info.name} frame {k}"), self._t[k], k)


def open_source(spec: str | int | os.PathLike, *, fps: float | None = None, realtime: bool = False,
                repeat: int = 1, webcam=None) -> FrameSource:  # fmt: skip
    """Open the source named by ``spec`` (module doc).

    Args:
        spec: webcam index / device path, or a video, GIF, image or folder path.
        fps: rate for still images and folders (default 25); ignored by videos, GIFs and webcams.
        realtime: deliver file frames at their media times (else as fast as possible).
        repeat: how many times a still image is delivered (a still "clip").
        webcam: :class:`tracking.webcam.WebcamOptions` overrides (device is taken from spec).

    Raises:
        SourceError: missing / empty / unreadable file, or a webcam that cannot be opened.
    """
    from dataclasses import replace

    from .images import GifSource, ImageFolderSource, ImageSource
    from .video import VideoFileSource
    from .webcam import WebcamOptions, WebcamSource

    if isinstance(spec, int) or (isinstance(spec, str) and spec.isdigit()):
        device: int | str = int(spec)
    elif str(spec).startswith("/dev/video"):
        device = str(spec)
    else:
        p = Path(spec)
        if p.is_dir():
            return ImageFolderSource(p, fps=fps or 25.0, realtime=realtime)
        suffix = p.suffix.lower()
        if suffix == ".gif":
            return GifSource(p, realtime=realtime)
        if suffix in IMAGE_SUFFIXES:
            return ImageSource(p, repeat=repeat, fps=fps or 25.0, realtime=realtime)
        return VideoFileSource(p, realtime=realtime)
    opts = replace(webcam, device=device) if webcam is not None else WebcamOptions(device=device)
    return WebcamSource(opts)
