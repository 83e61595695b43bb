"""Keep numba's on-disk cache of compiled kernels in step with every source they are built from.

numba decides whether a cached compiled function is still valid from the modification
time and size of the one file that defines it. The kernels inline helpers from other files
(:mod:`avatars.math_kernels` and the math3d formulas it compiles, sibling modules such as
``solver/kernels/contact.py``) and fold module constants into the machine code
(``solver/layout.py``, ``tracking/body.py``'s buffer layout), so after a change to one of
those alone (a git pull, an edit) numba would keep running the old compiled kernel without
a word. :func:`refresh` stamps a kernel's cache folder with a SHA-256 of the sources it
depends on (always including :data:`MATH_SOURCES`) and empties the folder's numba files
(``*.nbi``, ``*.nbc``) when the stamp differs; the kernels then compile afresh on first use
(the solver's ~20-40 s once).

One cache folder holds the kernels of one source folder, so every module whose kernels
share a folder must pass the same sources (two different lists would empty the folder on
every import). The callers: ``solver/kernels/step.py`` (the solver's folder),
``runtime/rig/kernels.py`` (the rig's), ``tracking/track_sampling.py`` and
``tracking/body.py`` (tracking's).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

STAMP = "swaycam-kernel-sources.sha256"

_HERE = Path(__file__).resolve().parent
MATH_SOURCES: tuple[Path, ...] = (_HERE / "math_kernels.py", _HERE / "math3d.py")
"""The shared compiled math every kernel may inline (:mod:`avatars.math_kernels` and the
scalar formulas of :mod:`avatars.math3d` it compiles)."""


def watched_sources(sources: Iterable[Path] = ()) -> list[Path]:
    """``sources`` followed by :data:`MATH_SOURCES` (each path once): what a stamp covers."""
    out: list[Path] = []
    for p in [*map(Path, sources), *MATH_SOURCES]:
        if p not in out:
            out.append(p)
    return out


def sources_digest(sources: list[Path]) -> str:
    """SHA-256 (hex) over the names and bytes of ``sources``."""
    h = hashlib.sha256()
    for path in sources:
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def ensure_fresh(cache_dir: Path, sources: list[Path]) -> int:
    """Remove numba's cached kernels in ``cache_dir`` when ``sources`` changed since they were
    stamped; returns how many files were removed (0 on the first stamp of an empty folder,
    or when nothing changed).

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
        log.debug("kernel cache %s not refreshed: %s", cache_dir, e)
        return removed
    if removed:
        log.info("kernel sources changed: %d cached kernel files removed from %s", removed, cache_dir)
    return removed


def kernel_cache_dir(dispatcher) -> Path | None:
    """The folder numba caches ``dispatcher`` in (in-tree ``__pycache__``, NUMBA_CACHE_DIR
    or its user-wide fallback), or None when it cannot be told."""
    try:
        return Path(dispatcher._cache._cache_path)
    except AttributeError:
        return None


def refresh(dispatcher, sources: Iterable[Path] = ()) -> int:
    """Stamp the cache folder of the numba ``dispatcher`` (a ``cache=True`` kernel) with
    :func:`watched_sources` of ``sources`` (the files its folder's kernels inline or take
    constants from, besides their own), emptying it when they changed (:func:`ensure_fresh`).
    Call at import, before any kernel of the folder runs; returns the files removed."""
    folder = kernel_cache_dir(dispatcher)
    if folder is None:
        return 0
    return ensure_fresh(folder, watched_sources(sources))
