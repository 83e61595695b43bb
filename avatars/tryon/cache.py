"""Try-on results on disk, keyed by (avatar file digest, style file digest, settings).

A kiosk switching styles reloads a fitted avatar in a few milliseconds instead of fitting
it again (about a second): :meth:`TryOnCache.load` returns the stored
:class:`~avatars.tryon.pipeline.TryOnResult` (its avatar, reports and chain attachments) or
None. The key hashes the avatar file's bytes, the style file's bytes together with the
MakeHuman ``.mhmat``/``.mhclo`` beside it, :meth:`TryOnSettings.digest` (which includes the
pipeline version) and :data:`FORMAT`; any change makes a new entry (old ones are left
alone). Entries are Python pickles (protocol 5, numpy arrays out of band) written
atomically (a temporary file in the same folder, then ``os.replace``); like numba's cache
they live in the user's own cache folder (``$SWAYCAM_CACHE``, else
``$XDG_CACHE_HOME/swaycam``, else ``~/.cache/swaycam``, under ``tryon/``) and must not be
shared with untrusted writers. A corrupt or unreadable entry counts as a miss.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
from dataclasses import replace
from pathlib import Path

from avatars.user_cache import cache_dir

from .pipeline import TryOnResult, TryOnSettings

log = logging.getLogger(__name__)

#: Bump when the stored layout changes.
FORMAT = "tryon-cache-5"   # 2: the hair mesh instance carries its SkinContact; 3: reload-stable weights;
#                            4: the pickled classes moved from solver.tryon to avatars.tryon;
#                            5: the result keeps its guide_set (avatars/tryon/guide_export.py)
#: Files beside a style that change its result.
SIDECARS = (".mhmat", ".mhclo")


def file_digest(path: str | Path, sidecars: tuple[str, ...] = ()) -> str:
    """Hex SHA-256 of a file's bytes (and of the sidecar files beside it that exist)."""
    p = Path(path)
    h = hashlib.sha256(p.read_bytes())
    for suffix in sidecars:
        side = p.with_suffix(suffix)
        if side.is_file():
            h.update(suffix.encode() + b"\0" + side.read_bytes())
    return h.hexdigest()


class TryOnCache:
    """A folder of cached try-on results (module doc).

    Args:
        folder: where entries live (default: ``<swaycam cache>/tryon``; created on store).
    """

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else cache_dir() / "tryon"

    def key(self, avatar_path: str | Path, style_path: str | Path, settings: TryOnSettings) -> str:
        """Hex digest naming the entry of this (avatar, style, settings)."""
        h = hashlib.sha256(FORMAT.encode())
        for part in (file_digest(avatar_path), file_digest(style_path, SIDECARS), settings.digest()):
            h.update(part.encode())
        return h.hexdigest()

    def path(self, avatar_path, style_path, settings: TryOnSettings) -> Path:
        return self.folder / f"{self.key(avatar_path, style_path, settings)[:32]}.pickle"

    def load(self, avatar_path, style_path, settings: TryOnSettings = TryOnSettings()) -> TryOnResult | None:
        """The stored result, or None (missing, unreadable or from another format)."""
        p = self.path(avatar_path, style_path, settings)
        try:
            with open(p, "rb") as f:
                tag, result = pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001 - a broken entry is a miss, never a crash
            log.warning("try-on cache entry %s is unreadable (%s); fitting again", p.name, exc)
            return None
        return result if tag == FORMAT and isinstance(result, TryOnResult) else None

    def store(self, avatar_path, style_path, settings: TryOnSettings, result: TryOnResult) -> Path:
        """Write ``result`` (without its intermediate guides; its ``guide_set`` is kept) atomically;
        returns the entry path.

        Raises:
            OSError: the folder cannot be created or written.
        """
        p = self.path(avatar_path, style_path, settings)
        p.parent.mkdir(parents=True, exist_ok=True)
        slim = replace(result, guides=(), attachments=(), join=None)
        fd, tmp = tempfile.mkstemp(prefix=".tryon-", suffix=".tmp", dir=p.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump((FORMAT, slim), f, protocol=5)
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return p


def cached_try_on(avatar_path: str | Path, style_path: str | Path, settings: TryOnSettings = TryOnSettings(), *,
                  cache: TryOnCache | None = None, use_cache: bool = True) -> tuple[TryOnResult, bool]:
    """Load the avatar and the style, try it on (or take the cached result): (result, hit).

    Only successful fits are stored. Raises what :func:`avatars.load_avatar` and
    :func:`avatars.hair.load_hair` raise for unusable files.
    """
    from avatars import load_avatar
    from avatars.hair import load_hair

    from .pipeline import try_on

    cache = cache or TryOnCache()
    if use_cache:
        hit = cache.load(avatar_path, style_path, settings)
        if hit is not None:
            return hit, True
    result = try_on(load_avatar(avatar_path), load_hair(style_path), settings)
    if use_cache and result.avatar is not None:
        try:
            cache.store(avatar_path, style_path, settings, result)
        except OSError as exc:
            log.warning("cannot store the try-on result in %s: %s", cache.folder, exc)
    return result, False
