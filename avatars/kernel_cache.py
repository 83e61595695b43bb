"""Keep numba's on-disk cache of the solver kernels in step with their sources.

numba decides whether a cached compiled function is still valid from the modification
time and size of the one file that defines it. The kernels inline helpers from the other
modules of this folder (:mod:`solver.kernels.affine`, ``.contact``, ``.resolve``,
``.relax``, ``.spring``) and the packed layout (:mod:`solver.layout`), so after a change to
a helper alone (a git pull, an edit) numba would keep running the old compiled kernel
without a word. This module stamps the cache folder with a SHA-256 of every ``*.py`` of
the kernels folder plus ``solver/layout.py`` and empties the folder's numba files
(``*.nbi``, ``*.nbc``) when the stamp differs; the kernels then compile afresh on first
use (~20-40 s once).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

log = logging.getLogger(__name__)

STAMP = "swaycam-solver-sources.sha256"


def kernel_sources(kernels_dir: Path, layout: Path | None = None) -> list[Path]:
    """The files the compiled kernels are built from: every ``*.py`` of ``kernels_dir``
    (the kernels folder) and the layout module (default: ``layout.py`` in its parent)."""
    kernels_dir = Path(kernels_dir)
    layout = kernels_dir.parent / "layout.py" if layout is None else Path(layout)
    return sorted(kernels_dir.glob("*.py")) + [layout]


def sources_digest(sources: list[Path]) -> str:
    """SHA-256 (hex) over the names and bytes of ``sources``."""
    h = hashlib.sha256()
    for path in sources:
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def ensure_fresh(cache_dir: Path, sources: list[Path]) -> int:
    """Remove numba's cached kernels in ``cache_dir`` when ``sources`` (see
    :func:`kernel_sources`) changed since they were stamped; returns how many files were
    removed (0 on the first stamp of an empty folder, or when nothing changed).

    A cache folder that cannot be read or written is left alone (numba then compiles in
    memory or uses its own fallback location); nothing here raises.
    """
    cache_dir = Path(cache_dir)
    digest = sources_digest(sources)
    stamp = cache_dir / STAMP
    try:
        if stamp.read_text().strip() == digest:
            return 0
    except OSError:
        pass
    removed = 0
    try:
        if not cache_dir.is_dir():
            return 0
        for f in list(cache_dir.glob("*.nbi")) + list(cache_dir.glob("*.nbc")):
            try:
                f.unlink()
                removed += 1
            except FileNotFoundError:
                pass
        stamp.write_text(digest + "\n")
    except OSError as e:
        log.debug("solver kernel cache %s not refreshed: %s", cache_dir, e)
        return removed
    if removed:
        log.info("solver sources changed: %d cached kernel files removed from %s", removed, cache_dir)
    return removed


def kernel_cache_dir(dispatcher) -> Path | None:
    """The folder numba caches ``dispatcher`` in (in-tree ``__pycache__``, NUMBA_CACHE_DIR
    or its user-wide fallback), or None when it cannot be told."""
    try:
        return Path(dispatcher._cache._cache_path)
    except AttributeError:
        return None
