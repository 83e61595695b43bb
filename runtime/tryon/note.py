"""The HUD's hairstyle line (issue 34, finding 9: switching hairstyle gave no on-screen
feedback): "fitting 'bob01'…" while a switch is in flight, then "'bob01' on" — or the error —
for :data:`SHOW_S` seconds. Drawn whether or not the HUD is on (like compare mode's labels).

:class:`StyleNote` reads the switcher's attributes (``current``, ``pending_name``,
``switching``, ``last_error``, ``swaps``, ``refused``; no folder listing) once per drawn frame
(render thread) and remembers when the outcome changed.
"""

from __future__ import annotations

#: How long the outcome of a switch ("… on" or the error) stays on screen, seconds.
SHOW_S = 2.5


def _label(name: str | None) -> str:
    return "the avatar's own hair" if name is None else repr(name)


class StyleNote:
    """The hairstyle line of the HUD (module doc)."""

    def __init__(self):
        self._seen: tuple | None = None        # (swaps, refused) of the last frame
        self._outcome: str | None = None
        self._until = 0.0

    def update(self, switcher, now_s: float) -> str | None:
        """The line to show at ``now_s`` (seconds, any monotonic clock), or None, for
        ``switcher`` (a :class:`runtime.tryon.StyleSwitcher`)."""
        seen = (switcher.swaps, switcher.refused)
        if self._seen is not None and seen != self._seen:      # a switch ended: on, or refused
            if seen[0] != self._seen[0]:
                self._outcome = f"{_label(switcher.current)} on"
            else:
                self._outcome = f"hairstyle: {switcher.last_error}"
            self._until = now_s + SHOW_S
        self._seen = seen
        if switcher.switching:
            name = switcher.pending_name
            return "back to the avatar's own hair…" if name is None else f"fitting {name!r}…"
        if self._outcome is not None and now_s < self._until:
            return self._outcome
        self._outcome = None
        return None


__all__ = ["SHOW_S", "StyleNote"]
