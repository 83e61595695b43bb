"""The try-on core's errors: one root, :class:`TryOnError`, and a kind per thing a caller
handles differently.

:func:`avatars.tryon.try_on` never raises these for a hair that does not fit: it returns a
result without an avatar and the reasons in ``fit.problems`` (the steps below raise, the
pipeline turns them into problems). They reach a caller that runs a step on its own
(:func:`avatars.tryon.build_head`, :func:`avatars.tryon.placement.estimate_source_head`,
:class:`avatars.tryon.geometry.TriangleIndex`). Every one is a ``ValueError`` (bad input,
not a bug), so ``except ValueError`` keeps catching them; the runtime's
:class:`runtime.tryon.StyleError` is a :class:`TryOnError` too.
"""

from __future__ import annotations


class TryOnError(ValueError):
    """A hairstyle cannot be tried on this avatar (the message says why)."""


class NoHeadError(TryOnError):
    """The avatar has no humanoid head bone or no drawn mesh skinned to it: nothing to fit a
    hair onto (:func:`avatars.tryon.build_head`)."""


class FitError(TryOnError):
    """The hair cannot be placed on the head: no head-shaped opening in it, so no crown to
    align (:func:`avatars.tryon.placement.estimate_source_head`), or an empty triangle set."""
