"""What a user can do to a running session with one action: the :class:`Controls` protocol.
The window keys call it (runtime/keys.py); a session's implementation is
:class:`runtime.run_controls.RunControls`. Everything runs on the render thread, between
frames.
"""

from __future__ import annotations

from typing import Protocol


class Controls(Protocol):
    """One action each (render thread)."""

    def quit(self) -> None:
        """End the run after this frame."""

    def recenter(self) -> None:
        """Take the current head pose as neutral."""

    def toggle_overlays(self) -> None:
        """Springs, colliders and head axes on / off."""

    def toggle_hud(self) -> None:
        """The HUD (fps, latency, substeps, solver) on / off."""

    def toggle_pause(self) -> None:
        """Pause or resume the clock (frames go on being drawn)."""

    def step(self) -> None:
        """While paused: one 120 Hz substep on (the next frame runs it)."""

    def next_solver(self) -> None:
        """The next hair solver; the hair's motion carries over."""

    def toggle_compare(self) -> None:
        """Compare mode (the other solver side by side) on / off."""

    def next_clip(self) -> None:
        """The next clip of the ``--motion`` file (the idle after the last one)."""

    def screenshot(self) -> None:
        """Write what the window shows now to a PNG."""

    def cycle_style(self, step: int) -> None:
        """The next (1) or previous (-1) hairstyle of the hair folder."""

    def pick_style(self, index: int) -> None:
        """Hairstyle number ``index`` (1-based) of the hair folder; 0: the avatar's own hair."""

    def restart_clip(self) -> None:
        """The clip playing now from its start."""

    def move_then_settle(self) -> None:
        """Play "move then settle": the head turn, then 8 s still (the settle time in the HUD)."""

    def next_framing(self) -> None:
        """The next framing: bust, full body, hair close-up, back view (the orbit is reset)."""

    def reset_view(self) -> None:
        """Back to the framing: no orbit, zoom or pan."""

    def next_inspect(self) -> None:
        """A fitted style's next inspection view: mesh, mesh + guides, guides only."""

    def next_chain(self) -> None:
        """The "weights" inspection view shows the next chain."""

    def toggle_roots(self) -> None:
        """The inspection views' suggested roots on / off."""

    def orbit(self, dx: float, dy: float, *, pan: bool = False) -> None:
        """A mouse drag of (dx, dy) window pixels (x right, y down): orbit, or pan."""

    def zoom(self, notches: float) -> None:
        """Wheel notches (> 0: closer)."""

    def expression_hotkey(self, key: str) -> bool:
        """Toggle the expression ``key`` is the hotkey of; False when it is none's."""


__all__ = ["Controls"]
