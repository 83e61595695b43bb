"""Generate-on-first-use cache for the built-in avatars.

Files live in ``$SWAYCAM_CACHE``, else ``$XDG_CACHE_HOME/swaycam``, else
``~/.cache/swaycam``, under ``avatars/``, named with a fingerprint of the generator: the
SHA-256 of every ``avatars/generate/*.py`` source plus :data:`GENERATOR_VERSION`, so a
change to the generator's code makes a new file (old files are left alone). Writes are
atomic (a temporary file in the same folder, then ``os.replace``), so concurrent first
uses never see a partial file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Callable

from avatars.user_cache import cache_dir

log = logging.getLogger(__name__)

#: Bump to force regeneration when something outside the sources changes the output.
GENERATOR_VERSION = "1"


def generator_fingerprint() -> str:
    """Hex SHA-256 over the generator's source files (sorted by name) and its version."""
    h = hashlib.sha256(GENERATOR_VERSION.encode())
    for src in sorted(Path(__file__).parent.glob("*.py")):
        h.update(src.name.encode() + b"\0" + src.read_bytes() + b"\0")
    return h.hexdigest()


def cached_file(stem: str, build: Callable[[], bytes]) -> Path:
    """Path of ``<cache>/avatars/<stem>-<fingerprint[:16]>.vrm``, built with ``build()`` if absent.

    Raises:
        OSError: the cache folder cannot be created or written.
    """
    folder = cache_dir() / "avatars"
    path = folder / f"{stem}-{generator_fingerprint()[:16]}.vrm"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    data = build()
    fd, tmp = tempfile.mkstemp(prefix=f".{stem}-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600 files; the cache is ordinary readable data
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    log.info("generated %s (%d bytes)", path, len(data))
    return path
