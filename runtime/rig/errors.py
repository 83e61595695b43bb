"""The rig's one error: an avatar the runtime cannot drive or simulate."""

from __future__ import annotations


class RigError(ValueError):
    """An avatar that loaded but cannot be driven (no humanoid head) or whose springs the
    solver cannot build (a zero-length link, chains it cannot order). The message names the
    file and the part; a ValueError, so callers that refuse bad avatars catch it as before."""
