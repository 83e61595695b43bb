"""swaycam tracking: frame sources, MediaPipe face tracking, filters, pose tracks.

Importing this package does not load MediaPipe (a :class:`FaceTracker` does, when created)
nor OpenCV (sources do, when opened), and its names are imported on first use (PEP 562, as
:mod:`render`): ``from tracking.errors import TrackingError`` loads that module only, and
``python -m tracking.face_model`` (the set-up step) none of the others. See docs/design.md §5 and the
module docstrings.
"""

from importlib import import_module
from typing import TYPE_CHECKING

# Public name -> submodule, imported on first use.
_EXPORTS = {
    "AdaptiveOptions": "adaptive", "FaceCountPolicy": "adaptive",
    "SourceError": "errors", "TrackFormatError": "errors", "TrackingError": "errors",
    "BLENDSHAPE_INDEX": "expressions", "BLENDSHAPE_NAMES": "expressions", "NUM_BLENDSHAPES": "expressions",
    "VRM_PRESETS": "expressions", "ExpressionCalibration": "expressions", "ExpressionMapper": "expressions",
    "ExpressionOptions": "expressions", "PerfectSync": "expressions",
    "FaceCounter": "face_probe",
    "FaceSelectOptions": "face_select", "FaceSelector": "face_select",
    "FaceTracker": "face_tracker", "FaceTrackerOptions": "face_tracker",
    "OneEuroFilter": "filters", "OneEuroParams": "filters", "QuaternionOneEuro": "filters",
    "HeadPoseMapper": "head_pose", "HeadPoseOptions": "head_pose", "mirror_pose": "head_pose",
    "GifSource": "images", "ImageFolderSource": "images", "ImageSource": "images",
    "LiveTracking": "live",
    "LostFaceOptions": "lost_face",
    "FaceObservation": "observation",
    "TrackOptions": "pipeline", "TrackSummary": "pipeline", "run_track": "pipeline",
    "PoseFilter": "pose_filter", "PoseFilterOptions": "pose_filter", "filter_observations": "pose_filter",
    "PoseSample": "pose_track", "PoseTrack": "pose_track", "TrackHeader": "pose_track",
    "synthetic_track": "pose_track",
    "PreviewWriter": "preview", "draw_observation": "preview",
    "ArraySource": "frame_sources", "Frame": "frame_sources", "FrameSource": "frame_sources",
    "SourceInfo": "frame_sources", "open_source": "frame_sources",
    "PoseTrackWriter": "track_io", "load_track": "track_io", "record": "track_io", "save_track": "track_io",
    "VideoFileSource": "video",
    "WebcamOptions": "webcam", "WebcamSource": "webcam",
    "FaceModelError": "face_model", "ensure_face_model": "face_model",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tracking' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .adaptive import AdaptiveOptions, FaceCountPolicy  # noqa: F401
    from .errors import SourceError, TrackFormatError, TrackingError  # noqa: F401
    from .expressions import (  # noqa: F401
        BLENDSHAPE_INDEX, BLENDSHAPE_NAMES, NUM_BLENDSHAPES, VRM_PRESETS, ExpressionCalibration, ExpressionMapper,
        ExpressionOptions, PerfectSync,
    )
    from .face_probe import FaceCounter  # noqa: F401
    from .face_select import FaceSelectOptions, FaceSelector  # noqa: F401
    from .face_tracker import FaceTracker, FaceTrackerOptions  # noqa: F401
    from .filters import OneEuroFilter, OneEuroParams, QuaternionOneEuro  # noqa: F401
    from .head_pose import HeadPoseMapper, HeadPoseOptions, mirror_pose  # noqa: F401
    from .images import GifSource, ImageFolderSource, ImageSource  # noqa: F401
    from .live import LiveTracking  # noqa: F401
    from .lost_face import LostFaceOptions  # noqa: F401
    from .observation import FaceObservation  # noqa: F401
    from .pipeline import TrackOptions, TrackSummary, run_track  # noqa: F401
    from .pose_filter import PoseFilter, PoseFilterOptions, filter_observations  # noqa: F401
    from .pose_track import PoseSample, PoseTrack, TrackHeader, synthetic_track  # noqa: F401
    from .preview import PreviewWriter, draw_observation  # noqa: F401
    from .frame_sources import ArraySource, Frame, FrameSource, SourceInfo, open_source  # noqa: F401
    from .track_io import PoseTrackWriter, load_track, record, save_track  # noqa: F401
    from .video import VideoFileSource  # noqa: F401
    from .webcam import WebcamOptions, WebcamSource  # noqa: F401
    from .face_model import FaceModelError, ensure_face_model  # noqa: F401
