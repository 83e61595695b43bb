"""The hair folder of a run and the one way a style is tried on the run's avatar.

:class:`HairStyles`: the styles in the hair folder (``--hair-dir``, else
``$SWAYCAM_HAIR_DIR`` and the shared assets' ``hair``) and what a ``--hair`` value (a style
name or a file) resolves to. :func:`fit_style`: the disk cache (:mod:`avatars.tryon.cache`)
or a fit (:func:`avatars.tryon.try_on`) on a :class:`BaseAvatar`, a failure being a
:class:`StyleError` with the core's message.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from avatars import Avatar
from avatars.hair import HairError, find_style, hair_folders, list_styles

from ..errors import StyleError

if TYPE_CHECKING:  # pragma: no cover
    from avatars.tryon import TryOnResult, TryOnSettings
    from avatars.tryon.cache import TryOnCache

log = logging.getLogger(__name__)


class HairStyles:
    """The hair folder(s) of a run.

    Args:
        folder: the ``--hair-dir`` / ``hair_dir`` folder, or None: ``$SWAYCAM_HAIR_DIR``
            entries and the shared assets' ``hair`` folder (:func:`avatars.hair.hair_folders`),
            those that exist.
    """

    def __init__(self, folder: str | Path | None = None):
        if folder is not None:
            self.folders = [Path(folder).expanduser()]
        else:
            self.folders = [f for f in hair_folders() if f.is_dir()]

    def styles(self) -> dict[str, Path]:
        """{name: file} of every style in the folders, sorted by name (read now: a style
        dropped into the folder shows up)."""
        return list_styles(self.folders)

    def resolve(self, spec: str) -> Path:
        """The file of a ``--hair`` value: an existing file, or a style name in the folders.

        Raises:
            StyleError: a file that does not exist, or a name no folder has (the message lists
                the styles found).
        """
        from ..config import looks_like_path

        p = Path(spec).expanduser()
        if p.is_file():
            return p
        if looks_like_path(spec):
            raise StyleError(f"hair style file {spec!r} does not exist")
        if not self.folders:
            raise StyleError(f"no hair style named {spec!r}: no hair folder (give --hair-dir, set "
                             "$SWAYCAM_HAIR_DIR, or pass a file)")
        try:
            return find_style(spec, self.folders)
        except HairError as exc:
            raise StyleError(str(exc)) from None


@dataclass(frozen=True, eq=False)
class BaseAvatar:
    """The avatar a run tries styles on (its own hair included): its file (keys the fit
    cache) and the loaded avatar."""

    path: Path
    avatar: Avatar


#: avatar -> (its try-on's GuideSet, the hair's mesh instance): the fitted avatars' guides, for
#: the inspection views and GET /hairstyle/guides (weak: an avatar no longer drawn is forgotten).
_GUIDES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def keep_guides(result: TryOnResult) -> None:
    """Remember ``result``'s guides (:class:`avatars.tryon.guide_export.GuideSet`) for its avatar."""
    if result.avatar is not None and result.guide_set is not None:
        _GUIDES[result.avatar] = (result.guide_set, result.hair_instance)


def guides_of(avatar) -> tuple | None:
    """(GuideSet, hair mesh instance) of a fitted avatar (:func:`keep_guides`), or None (an
    avatar's own hair, or a style fitted before guides were kept)."""
    try:
        return _GUIDES.get(avatar)
    except TypeError:
        return None


def fit_style(base: BaseAvatar, style: Path, settings: TryOnSettings, cache: TryOnCache | None = None
              ) -> tuple[TryOnResult, bool]:
    """``style`` tried on ``base``: the cached result when there is one, else a fit (stored
    in the cache when it succeeds). Returns (result, cache hit).

    Raises:
        StyleError: the style file cannot be loaded, or the core cannot fit it (its
            problems, joined).
    """
    from avatars import AvatarError
    from avatars.hair import load_hair
    from avatars.tryon import try_on
    from avatars.tryon.cache import TryOnCache

    cache = cache or TryOnCache()
    try:
        hit = cache.load(base.path, style, settings)
    except OSError as exc:
        raise StyleError(f"{style.name}: {exc.strerror or exc}") from None
    if hit is not None:
        _say_own_hair(style, hit)
        keep_guides(hit)
        return hit, True
    try:
        hair = load_hair(style)
    except (AvatarError, OSError) as exc:      # HairError is an AvatarError
        raise StyleError(str(exc)) from None
    result = try_on(base.avatar, hair, settings)
    if result.avatar is None:
        raise StyleError(f"{style.stem}: " + ("; ".join(result.fit.problems) or "the hair could not be fitted"))
    try:
        cache.store(base.path, style, settings, result)
    except OSError as exc:
        log.warning("cannot store the try-on result in %s: %s", cache.folder, exc)
    _say_own_hair(style, result)
    keep_guides(result)
    return result, False


def _say_own_hair(style: Path, result: TryOnResult) -> None:
    """Log what of the avatar's own hair the try-on hid (whole meshes, triangles cut out of
    shared ones, or nothing found)."""
    from avatars.tryon.pipeline import own_hair_text

    log.info("try-on %s: the avatar's own hair: %s", style.stem, own_hair_text(getattr(result, "own_hair", {})))


def summary(result: TryOnResult, *, cached: bool) -> dict:
    """The JSON-ready report of a fit: guides {candidates, attached, joined, rejected},
    chains, joints, hair vertices, hidden own meshes, notes, fit seconds and ``cached``."""
    out = result.summary()
    out.pop("ok", None)
    out.update(hidden=len(result.hidden), fit_seconds=round(result.seconds, 4), cached=cached)
    from avatars.tryon.pipeline import own_hair_text

    out["own_hair_text"] = own_hair_text(out.get("own_hair", {}))
    return out
