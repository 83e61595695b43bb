"""Shared test fixtures: paths of the read-only shared assets."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ASSETS = (REPO / ".." / "shared" / "assets").resolve()
VRM_DIR = ASSETS / "vrm"
FACE_DIR = ASSETS / "face"


def asset(*parts: str) -> Path:
    """Path of a shared asset; skips the test (saying so) when the shared folder is absent."""
    p = ASSETS.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared asset {p} is not present on this machine")
    return p


@pytest.fixture(scope="session")
def godette_path() -> Path:
    return asset("vrm", "Godette_vrm_v4.vrm")
