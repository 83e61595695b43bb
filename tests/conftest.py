"""Shared test fixtures: paths of the read-only shared assets.

The assets live in ``../shared/assets`` next to the repository (or wherever
``$SWAYCAM_ASSETS`` points). Real-asset tests FAIL when they are missing rather than skip,
so a checkout without them cannot pass vacuously.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _find_assets() -> Path:
    env = os.environ.get("SWAYCAM_ASSETS")
    if env:
        return Path(env).resolve()
    for base in (REPO, *REPO.parents):
        cand = base.parent / "shared" / "assets" if base == REPO else base / "shared" / "assets"
        if cand.is_dir():
            return cand.resolve()
    return (REPO / ".." / "shared" / "assets").resolve()


ASSETS = _find_assets()
VRM_DIR = ASSETS / "vrm"
FACE_DIR = ASSETS / "face"
MODEL_DIR = ASSETS / "models"


def asset(*parts: str) -> Path:
    """Path of a shared asset; fails the test (saying where it looked) when it is absent."""
    p = ASSETS.joinpath(*parts)
    if not p.exists():
        pytest.fail(f"shared asset {p} is missing (set SWAYCAM_ASSETS to the shared assets folder)")
    return p


@pytest.fixture(scope="session")
def godette_path() -> Path:
    return asset("vrm", "Godette_vrm_v4.vrm")
