"""swaycam tracking: frame sources, MediaPipe face tracking, filters, pose tracks.

Importing this package does not load MediaPipe; :class:`FaceTracker` does, when created.
"""

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
from .face_model import FaceModelError, ensure_face_model
from .filters import OneEuroFilter, OneEuroParams, QuaternionOneEuro
from .head_turn import head_turn_angles, head_turn_rotation
from .observation import FaceObservation
from .pose_track import PoseSample, PoseTrack, TrackHeader, head_turn_track, synthetic_track
from .rotations import euler_from_quat, quat_from_euler
from .track_io import PoseTrackWriter, load_track, record, save_track

__all__ = [
    "BLENDSHAPE_INDEX", "BLENDSHAPE_NAMES", "NUM_BLENDSHAPES", "VRM_PRESETS",
    "ExpressionCalibration", "ExpressionMapper", "ExpressionOptions", "FaceModelError",
    "FaceObservation", "OneEuroFilter", "OneEuroParams", "PerfectSync", "PoseSample", "PoseTrack",
    "PoseTrackWriter", "QuaternionOneEuro", "SourceError", "TrackFormatError", "TrackHeader",
    "TrackingError", "ensure_face_model", "euler_from_quat", "head_turn_angles",
    "head_turn_rotation", "head_turn_track", "load_track", "quat_from_euler", "record",
    "save_track", "synthetic_track",
]  # fmt: skip
