"""Fixtures of the tracking tests: shared asset paths, the face model, and per-clip
tracking results computed once per session (MediaPipe costs ~10 ms per frame here)."""

from __future__ import annotations

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
