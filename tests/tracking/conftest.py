"""Fixtures of the tracking tests: shared asset paths, the face model, and per-clip
tracking results computed once per session (MediaPipe costs ~10 ms per frame here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

ASSETS = (Path(__file__).resolve().parents[2] / ".." / "shared" / "assets").resolve()


def asset(*parts: str) -> Path:
    """A shared asset; the test is skipped (saying so) when the shared folder is absent."""
    p = ASSETS.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared asset {p} is not present on this machine")
    return p


@pytest.fixture(scope="session")
def selfie_mp4() -> Path:
    return asset("face", "mediapipe_selfie_segmentation_web.mp4")


@pytest.fixture(scope="session")
def android_gif() -> Path:
    return asset("face", "mediapipe_face_mesh_android_gpu.gif")


@pytest.fixture(scope="session")
def crowd_gif() -> Path:
    return asset("face", "mediapipe_realtime_face_detection.gif")


@pytest.fixture(scope="session")
def astronaut_png() -> Path:
    return asset("face", "skimage_astronaut.png")


@pytest.fixture(scope="session")
def model_path() -> Path:
    return asset("models", "face_landmarker_v2_with_blendshapes.task")


@dataclass
class Tracked:
    """One clip tracked once: per frame the chosen face (or the empty result) and all faces."""

    timestamps_ns: list
    chosen: list
    faces: list
    switches: int


def track_clip(path: Path, model: Path, **options) -> Tracked:
    from tracking.face_tracker import FaceTracker, FaceTrackerOptions
    from tracking.sources import open_source

    ts, chosen, faces = [], [], []
    with FaceTracker(FaceTrackerOptions(model_path=model, **options)) as tracker, open_source(path) as src:
        for frame in src:
            ts.append(frame.timestamp_ns)
            chosen.append(tracker.process_frame(frame))
            faces.append(list(tracker.last_faces))
        switches = tracker.selector.switches
    return Tracked(ts, chosen, faces, switches)


@pytest.fixture(scope="session")
def selfie_tracked(selfie_mp4, model_path) -> Tracked:
    return track_clip(selfie_mp4, model_path)


@pytest.fixture(scope="session")
def android_tracked(android_gif, model_path) -> Tracked:
    return track_clip(android_gif, model_path)


@pytest.fixture(scope="session")
def crowd_tracked(crowd_gif, model_path) -> Tracked:
    return track_clip(crowd_gif, model_path, num_faces=4)


@pytest.fixture(scope="session")
def astronaut_tracked(astronaut_png, model_path) -> Tracked:
    return track_clip(astronaut_png, model_path)
