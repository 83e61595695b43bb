"""Where the shared test assets are: the one locator for every package and the tests.

The real inputs swaycam is measured on (Godette and the other VRM files, the face clips,
the face model, animation clips, hairstyles; docs/design.md §8) are not part of the repository.
They live in ``$SWAYCAM_ASSETS`` when that is set, else in ``shared/assets`` next to the
checkout (the first ancestor folder of the package that has one). Benchmarks, ``swaycam
metrics`` and the tests all ask here, so one setting moves them all.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable naming the shared assets folder.
ENV = "SWAYCAM_ASSETS"

_REPO = Path(__file__).resolve().parents[1]


def assets_dir() -> Path:
    """The shared assets folder: ``$SWAYCAM_ASSETS`` (``~`` expanded) when set, else the first
    ``<ancestor>/shared/assets`` above the checkout that exists, else ``../shared/assets``
    next to it (which may not exist: callers check with :func:`find_asset`)."""
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser().resolve()
    for base in _REPO.parents:
        cand = base / "shared" / "assets"
        if cand.is_dir():
            return cand.resolve()
    return (_REPO.parent / "shared" / "assets").resolve()


def asset_path(*parts: str) -> Path:
    """The path of a shared asset (``asset_path("vrm", "Godette_vrm_v4.vrm")``), whether it
    exists or not."""
    return assets_dir().joinpath(*parts)


def find_asset(*parts: str) -> Path | None:
    """The path of a shared asset when it exists, else None."""
    p = asset_path(*parts)
    return p if p.exists() else None


#: Named assets the product itself falls back on (benchmarks, metrics).
GODETTE = ("vrm", "Godette_vrm_v4.vrm")
SELFIE_CLIP = ("face", "mediapipe_selfie_segmentation_web.mp4")
