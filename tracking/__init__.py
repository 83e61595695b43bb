"""swaycam tracking: frame sources, MediaPipe face tracking, filters, pose tracks.

Importing this package does not load MediaPipe (a :class:`FaceTracker` does, when created)
nor OpenCV (sources do, when opened). See DESIGN §5 and the module docstrings.
"""

from .adaptive import AdaptiveOptions, FaceCountPolicy
from .errors import SourceError, TrackFormatError, TrackingError
from .expressions import (
    BLENDSHAPE_INDEX,
    BLENDSHAPE_NAMES,
    NUM_BLENDSHAPES,
    VRM_PRESETS,
    ExpressionCalibration,
    ExpressionMapper,
    ExpressionOptions,
    PerfectSync,
)
from .face_probe import FaceCounter
from .face_select import FaceSelectOptions, FaceSelector
from .face_tracker import FaceTracker, FaceTrackerOptions
from .filters import OneEuroFilter, OneEuroParams, QuaternionOneEuro
from .head_pose import HeadPoseMapper, HeadPoseOptions, mirror_pose
from .images import GifSource, ImageFolderSource, ImageSource
from .live import LiveTracking
from .lost_face import LostFaceOptions
from .observation import FaceObservation
from .pipeline import TrackOptions, TrackSummary, run_track
from .pose_filter import PoseFilter, PoseFilterOptions, filter_observations
from .pose_track import PoseSample, PoseTrack, TrackHeader, synthetic_track
from .preview import PreviewWriter, draw_observation
from .frame_sources import ArraySource, Frame, FrameSource, SourceInfo, open_source
from .track_io import PoseTrackWriter, load_track, record, save_track
from .video import VideoFileSource
from .webcam import WebcamOptions, WebcamSource

__all__ = [
    "AdaptiveOptions", "ArraySource", "BLENDSHAPE_INDEX", "BLENDSHAPE_NAMES", "ExpressionCalibration",
    "ExpressionMapper", "ExpressionOptions", "FaceCountPolicy", "FaceCounter", "FaceModelError",
    "FaceObservation", "FaceSelectOptions", "FaceSelector", "FaceTracker", "FaceTrackerOptions", "Frame",
    "FrameSource", "GifSource", "HeadPoseMapper", "HeadPoseOptions", "ImageFolderSource", "ImageSource",
    "LiveTracking", "LostFaceOptions", "NUM_BLENDSHAPES", "OneEuroFilter", "OneEuroParams", "PerfectSync",
    "PoseFilter", "PoseFilterOptions", "PoseSample", "PoseTrack", "PoseTrackWriter", "PreviewWriter",
    "QuaternionOneEuro", "SourceError", "SourceInfo", "TrackFormatError", "TrackHeader", "TrackOptions",
    "TrackSummary", "TrackingError", "VRM_PRESETS", "VideoFileSource", "WebcamOptions",
    "WebcamSource", "draw_observation", "ensure_face_model", "filter_observations",
    "load_track", "mirror_pose", "open_source", "record", "run_track", "save_track", "synthetic_track",
]  # fmt: skip


def __getattr__(name: str):
    # face_model is loaded on first use so that `python -m tracking.face_model` (the set-up
    # step) does not find it already imported by the package.
    if name in ("FaceModelError", "ensure_face_model"):
        from . import face_model

        return getattr(face_model, name)
    raise AttributeError(f"module 'tracking' has no attribute {name!r}")
