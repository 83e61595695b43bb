"""The reduced-detail triangles of avatars kept per tolerance, thread-safe
(:meth:`render.Renderer.detail_for`; the simplification itself is :func:`render.detail.reduce_avatar`).

Simplifying an avatar takes ~0.1-1 s, so a renderer keeps the results: per avatar (weakly,
so an avatar nobody else holds drops out with its triangles) the last :data:`DETAIL_CACHE`
tolerances (framings). Any thread may ask (the try-on worker reduces a new avatar before the
render thread uploads it); two threads asking for the same avatar and tolerance at once may
both simplify it, one result is kept.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from avatars import Avatar

from .detail import reduce_avatar

#: Tolerances (framings) kept per avatar.
DETAIL_CACHE = 4


@dataclass(frozen=True, eq=False)
class ReducedDetail:
    """The triangles of one avatar at reduced detail (:func:`render.detail.reduce_avatar`).

    Attributes:
        avatar_ref: a weak reference to the avatar they belong to (the cache must not keep a
            replaced avatar alive).
        tolerance_m: largest displacement allowed, metres.
        indices: triangle lists by (mesh instance, primitive index in its mesh).
    """

    avatar_ref: weakref.ref
    tolerance_m: float
    indices: dict

    @property
    def avatar(self) -> Avatar | None:
        return self.avatar_ref()


class DetailCache:
    """Reduced triangles per avatar and tolerance (module doc)."""

    def __init__(self, per_avatar: int = DETAIL_CACHE):
        self.per_avatar = per_avatar
        self._cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, avatar: Avatar, tolerance_m: float) -> ReducedDetail:
        """``avatar``'s triangles simplified to ``tolerance_m`` metres: kept ones, or simplified
        now (outside the lock) and kept, dropping the oldest tolerance beyond
        :attr:`per_avatar`."""
        with self._lock:
            got = self._cache.get(avatar, {}).get(tolerance_m)
        if got is None:
            got = ReducedDetail(weakref.ref(avatar), tolerance_m, reduce_avatar(avatar, tolerance_m))
            with self._lock:
                per = self._cache.setdefault(avatar, {})
                per[tolerance_m] = got
                while len(per) > self.per_avatar:
                    per.pop(next(iter(per)))
        return got
