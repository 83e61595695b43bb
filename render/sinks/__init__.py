"""Frame sinks: window, virtual camera, video file, PNG sequence, PNG snapshot."""

from .base import BackgroundWriter, Sink, check_frame
from .png import PngSequenceSink, snapshot
from .vcam import VirtualCameraSink, VirtualCameraUnavailable, install_hint
from .video import VideoFileSink
from .window import WindowSink

__all__ = [
    "BackgroundWriter", "PngSequenceSink", "Sink", "VideoFileSink", "VirtualCameraSink",
    "VirtualCameraUnavailable", "WindowSink", "check_frame", "install_hint", "snapshot",
]
