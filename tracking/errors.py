"""The one error type of the tracking package.

Every failure the tracking package reports on purpose is a :class:`TrackingError`; the
message names the file, device or line concerned, e.g.
``"poses.jsonl line 7: rotation must be 4 numbers, got 3"`` or
``"webcam 3: could not be opened (no such device?)"``.
"""

from __future__ import annotations


class TrackingError(RuntimeError):
    """Base class of every error raised on purpose by :mod:`tracking`."""


class SourceError(TrackingError):
    """A frame source (webcam, video file, image, folder) cannot be opened or read."""


class TrackFormatError(TrackingError):
    """A pose track file is malformed; the message carries the path and line number."""
