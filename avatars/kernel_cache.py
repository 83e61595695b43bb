"""Where numba keeps swaycam's compiled kernels, and keeping that cache in step with every
source a kernel is built from.

**The shared cache** (:class:`SourcesLocator`). numba compiles a ``cache=True`` kernel on its
first call in a process and by default writes the machine code into the ``__pycache__`` next to
its source, so every checkout (a clone, a git worktree, CI's clean checkout, a reinstall)
compiled everything again: the solver's kernels alone take ~50-110 s of CPU here. This module
registers a cache locator (numba's ``numba.core.caching._CacheLocator`` interface, the one its
own in-tree and user-wide locators implement), first in ``CacheImpl._locator_classes``, that
keeps swaycam's kernels in ``<cache>/kernels/<group>-<digest>/`` (``<cache>``:
:func:`avatars.user_cache.cache_dir`). ``digest`` is a SHA-256 over the names and bytes of every
source the group's kernels are compiled from (:func:`group_sources`) and is also the source
stamp numba checks in the folder's index. Checkouts with the same sources share one folder and
compile once between them; an edit to any of the sources gives a new folder, so a stale kernel
is never loaded. Folders unused for :data:`PRUNE_DAYS` days are removed.
``SWAYCAM_KERNEL_CACHE=off`` restores numba's in-tree cache, ``SWAYCAM_KERNEL_CACHE=DIR`` puts
the folders under ``DIR``; numba's own ``NUMBA_CACHE_DIR``, when set, takes precedence.
Importing this module registers the locator, so every module defining ``cache=True`` kernels
imports it (directly or through :mod:`avatars.math_kernels`) before its decorators run.

**The in-tree stamp** (:func:`refresh`), for numba's in-tree and ``NUMBA_CACHE_DIR`` caches:
numba decides whether a cached compiled function is still valid from the one file that defines
it. The kernels inline helpers from other files (:mod:`avatars.math_kernels` and the math3d
formulas it compiles, sibling modules such as ``solver/kernels/contact.py``) and fold module
constants into the machine code (``solver/layout.py``, ``tracking/body.py``'s buffer layout),
so after a change to one of those alone (a git pull, an edit) numba would keep running the old
compiled kernel without a word. :func:`refresh` stamps a kernel's cache folder with a SHA-256
of the sources it depends on (always including :data:`MATH_SOURCES`) and empties the folder's
numba files (``*.nbi``, ``*.nbc``) when the stamp differs. (Under the shared cache the folder is
already named by that digest, and the stamp is written there too, harmlessly.)

One in-tree cache folder holds the kernels of one source folder, so every module whose kernels
share a folder must pass the same sources (two different lists would empty the folder on
every import). The callers: ``solver/kernels/step.py`` (the solver's folder),
``runtime/rig/kernels.py`` (the rig's), ``tracking/track_sampling.py`` and
``tracking/body.py`` (tracking's). :func:`group_sources` gives the same lists (a test checks).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

from numba.core import caching as _numba_caching
from numba.core import config as _numba_config

from avatars.user_cache import cache_dir

log = logging.getLogger(__name__)

STAMP = "swaycam-kernel-sources.sha256"

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
PACKAGES = ("avatars", "render", "runtime", "solver", "tracking")
"""The top-level packages whose ``cache=True`` kernels the shared cache holds (others, e.g. a
test's own kernels, keep numba's default locators)."""
ENV = "SWAYCAM_KERNEL_CACHE"
PRUNE_DAYS = 14
USED = "last-used"
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


def group_sources(py_file: Path) -> tuple[str, list[Path]]:
    """The cache group of the kernel source ``py_file`` (a file of :data:`PACKAGES`) and the
    sources its kernels are compiled from, :data:`MATH_SOURCES` last: the solver's kernels
    (``solver/kernels/*.py`` and ``solver/layout.py``, as :data:`solver.kernels.step.KERNEL_SOURCES`),
    the runtime rig's (``runtime/rig/*kernels.py`` and ``tracking/body.py``, as
    :data:`runtime.rig.kernels.KERNEL_SOURCES`), otherwise the file alone. The group name is the
    folder or file path relative to the packages' root with ``-`` for ``/`` (``solver-kernels``,
    ``render-joint_matrices``)."""
    py_file = Path(py_file).resolve()
    rel = py_file.relative_to(_ROOT)
    if rel.parent == Path("solver/kernels"):
        sources = sorted(py_file.parent.glob("*.py")) + [_ROOT / "solver" / "layout.py"]
        name = "solver-kernels"
    elif rel.parent == Path("runtime/rig"):
        sources = sorted(py_file.parent.glob("*kernels.py")) + [_ROOT / "tracking" / "body.py"]
        name = "runtime-rig"
    else:
        sources = [py_file]
        name = "-".join(rel.with_suffix("").parts)
    return name, watched_sources(sources)


def shared_root() -> Path | None:
    """The folder holding the shared cache's group folders, or None when the shared cache is
    off (``SWAYCAM_KERNEL_CACHE=off`` or ``NUMBA_CACHE_DIR`` set)."""
    setting = os.environ.get(ENV, "").strip()
    if setting.lower() in ("off", "0", "no", "false") or _numba_config.CACHE_DIR:
        return None
    return Path(setting).expanduser() if setting else cache_dir() / "kernels"


_groups: dict[Path, tuple[str, str]] = {}
_used: set[Path] = set()
_pruned: set[Path] = set()


def _group_of(py_file: Path) -> tuple[str, str]:
    key = Path(py_file).resolve()
    if key not in _groups:
        name, sources = group_sources(key)
        _groups[key] = (name, sources_digest(sources))
    return _groups[key]


def prune(root: Path, keep: Path | None = None, *, days: float = PRUNE_DAYS, now: float | None = None) -> list[Path]:
    """Remove the group folders under ``root`` whose :data:`USED` mark (else the folder itself)
    was last touched more than ``days`` ago, except ``keep``; returns the removed folders.
    Errors (a folder another process removes, no permission) are ignored."""
    now = time.time() if now is None else now
    removed = []
    try:
        folders = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return removed
    for folder in folders:
        if keep is not None and folder == keep:
            continue
        mark = folder / USED
        try:
            age = now - (mark.stat().st_mtime if mark.exists() else folder.stat().st_mtime)
        except OSError:
            continue
        if age > days * 86400:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    if removed:
        log.info("kernel cache: removed %d folders unused for %s days under %s", len(removed), days, root)
    return removed


class SourcesLocator(_numba_caching._SourceFileBackedLocatorMixin, _numba_caching._CacheLocator):
    """numba cache locator of swaycam's kernels: ``<root>/<group>-<digest[:20]>/`` with the
    group's source digest as the source stamp (:func:`group_sources`, :func:`shared_root`).
    ``from_function`` returns None (numba then tries its own locators) for a function outside
    :data:`PACKAGES`, when the shared cache is off, or when the folder cannot be written."""

    def __init__(self, py_func, py_file, root: Path):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        name, self._digest = _group_of(Path(py_file))
        self._root = root
        self._cache_path = str(root / f"{name}-{self._digest[:20]}")

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        return self._digest

    def ensure_cache_path(self) -> None:
        super().ensure_cache_path()
        folder = Path(self._cache_path)
        if folder not in _used:                       # once per folder and process
            _used.add(folder)
            (folder / USED).touch()
        if self._root not in _pruned:
            _pruned.add(self._root)
            prune(self._root, keep=folder)

    @classmethod
    def from_function(cls, py_func, py_file):
        root = shared_root()
        if root is None or not os.path.isfile(py_file):
            return None
        path = Path(py_file).resolve()
        if path.parent == _ROOT or not path.is_relative_to(_ROOT) or path.relative_to(_ROOT).parts[0] not in PACKAGES:
            return None
        try:
            self = cls(py_func, py_file, root)
            self.ensure_cache_path()
        except (OSError, ValueError) as e:
            log.debug("kernel cache: shared folder unavailable for %s: %s", py_file, e)
            return None
        return self


def register() -> None:
    """Put :class:`SourcesLocator` first in numba's locator list (idempotent; done on import)."""
    classes = _numba_caching.CacheImpl._locator_classes
    if SourcesLocator not in classes:
        classes.insert(0, SourcesLocator)


register()
