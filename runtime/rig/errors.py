"""The rig's errors: an avatar the runtime cannot drive or simulate, and body motion that
cannot do what was asked."""

from __future__ import annotations

from ..errors import SwaycamRuntimeError


class RigError(SwaycamRuntimeError, ValueError):
    """An avatar that loaded but cannot be driven (no humanoid head, node constraints in a
    cycle) or whose springs the solver cannot build (a zero-length link, chains it cannot
    order). The message names the file and the part; a ValueError, so callers that refuse
    bad avatars catch it as before."""


class MotionError(RigError):
    """Body motion cannot do what was asked: the run has none (``--motion none``), a speed
    or layer that is not one, a clip that writes nodes the rig does not drive. Nothing
    changed; the previous clip keeps playing."""
