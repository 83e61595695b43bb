"""The fit report of an audit entry, as ``swaycam hair fit --json`` gives it, stored per entry.

The matrix rows carry the guide counts but not the vertices missed, the joints, the
placement or the fit's time; :func:`fit_entry` fits the entry's style on its avatar the way
the matrix's cells do (:func:`runtime.tryon.fit_style` with the avatar's own hair hidden,
which is also ``swaycam hair fit``'s default: the same try-on disk cache entry) and keeps
:meth:`avatars.tryon.TryOnResult.summary` with the fit's own seconds
(:attr:`~avatars.tryon.TryOnResult.seconds`: the pipeline's wall time when it was fitted,
kept by the cache, so a re-run reports the same time).

:class:`FitStore` is ``OUT/fits/<key>.json``, written atomically; the key hashes the two
input digests, the try-on settings and the matrix's code version (the sources that shape a
fit), so a changed style, avatar or pipeline fits again. A style that cannot be fitted is a
record with ``status`` "refused" and the try-on's message.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .plan import Entry

#: Bump when the record's layout changes.
RECORD_VERSION = "audit-fit-1"


def tryon_settings():
    """The try-on settings of the matrix cells and of ``swaycam hair fit`` (own hair hidden)."""
    from ...config import tryon_settings as from_section
    from ...config_sections import TryOnSection

    return from_section(TryOnSection(hide_own_hair=True))


def fit_key(entry: Entry) -> str:
    """Hex SHA-256 naming the entry's fit record (module doc)."""
    from ..matrix.key import code_version

    doc = {"v": RECORD_VERSION, "avatar": entry.turn.avatar_input.digest, "hair": entry.turn.hair_input.digest,
           "settings": tryon_settings().digest(), "code": code_version()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class FitStore:
    """``folder/<key>.json`` per entry (module doc; the folder is created when missing)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The stored record, or None (absent or unreadable: fit again)."""
        try:
            return json.loads(self.path(key).read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, record: dict) -> Path:
        target = self.path(key)
        fd, tmp = tempfile.mkstemp(prefix=".fit-", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(record, f, sort_keys=True)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target


def fit_result(entry: Entry, avatar=None):
    """(:class:`avatars.tryon.TryOnResult`, cache hit) of the entry. ``avatar``: the loaded
    avatar of ``entry.avatar_path`` (loaded here when None). Raises StyleError (the try-on's
    message) or AvatarError."""
    from avatars import load_avatar

    from ...tryon import BaseAvatar, fit_style

    loaded = avatar if avatar is not None else load_avatar(entry.avatar_path)
    return fit_style(BaseAvatar(entry.avatar_path, loaded), entry.style_path, tryon_settings())


def record_of(result, *, cached: bool) -> dict:
    """The stored record of a fitted result: ``status`` "ok" and the ``hair fit --json``
    object (guides, vertices_missed, chains, joints, hair_vertices, fit, own_hair, notes...)
    with ``fit_seconds`` and ``hair_instance`` (the style's mesh instance: the thumbnails'
    tests hide it)."""
    summary = result.summary()
    summary.pop("ok", None)
    return {"status": "ok", "error": None, **summary, "fit_seconds": float(result.seconds),
            "hair_instance": int(result.hair_instance), "cached": bool(cached)}


def refused(message: str) -> dict:
    """The record of a style the try-on cannot fit."""
    return {"status": "refused", "error": message}


def fit_entry(entry: Entry, store: FitStore, avatar=None) -> tuple[dict, object | None]:
    """The entry's record, from ``store`` or fitted now (then stored) -> (record, the
    :class:`~avatars.tryon.TryOnResult` when it was fitted or loaded here, else None).
    ``avatar``: a callable returning the loaded avatar of ``entry.avatar_path``, called only
    when the entry is fitted (None: loaded here)."""
    from avatars import AvatarError

    from ...errors import StyleError

    key = fit_key(entry)
    got = store.get(key)
    if got is not None:
        return got, None
    try:
        result, hit = fit_result(entry, avatar() if avatar is not None else None)
    except (StyleError, AvatarError, OSError) as exc:
        record, result = refused(str(exc)), None
    else:
        record = record_of(result, cached=hit)
    store.put(key, record)
    return record, result
