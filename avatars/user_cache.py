"""The one rule for where swaycam keeps what it computes once per user and reuses.

``$SWAYCAM_CACHE`` if set, else ``$XDG_CACHE_HOME/swaycam`` (the XDG Base Directory
specification, https://specifications.freedesktop.org/basedir-spec/), else
``~/.cache/swaycam``. The folders under it: ``avatars/`` (the generated built-in avatars,
:mod:`avatars.generate.cache`), ``tryon/`` (fitted hairstyles, :mod:`avatars.tryon.cache`),
``kernels/`` (numba's compiled kernels shared by every checkout, :mod:`avatars.kernel_cache`),
``matrix/`` (the quality matrix's prepared inputs), the MediaPipe models
(:mod:`tracking.face_model`, :mod:`tracking.hand_model`) and the voice profile of lip sync.
Everything there can be deleted at any time; it is rebuilt on next use.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The swaycam cache folder (absolute or ``~``-expanded; not created here)."""
    env = os.environ.get("SWAYCAM_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "swaycam"
