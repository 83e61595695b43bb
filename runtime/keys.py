"""The window keys of ``swaycam run`` (render thread, between frames): a table from key name
to a :class:`runtime.controls.Controls` action.

    r recenter · o overlays · h HUD · s switch solver · c compare solvers side by side ·
    m next clip of the --motion file (then the idle) · k restart the clip · v "move then settle"
    (the head turn then 8 s still, the settle time in the HUD) · [ / ] previous / next
    hairstyle of the hair folder · 1-9 hairstyle number N · 0 the avatar's own hair · f framing
    (bust, full, hair close-up, back) · x reset the view · g inspection view (mesh, mesh +
    guides, guides, one chain's weights) · t suggested roots · . the next chain · space pause · → one 120 Hz substep while paused · p screenshot · q/esc quit

The mouse: drag orbits, right / middle drag (or shift + drag) pans, the wheel zooms
(runtime/view.py).

In kiosk mode the overlays and the HUD stay off (o and h do nothing). Any other key may be an
expression's hotkey (``[expressions.keys]``, runtime/panel/settings.py). A hairstyle is
fitted off the render thread (:class:`runtime.tryon.StyleSwitcher`): the key returns at once,
the previous style is drawn until the new one is ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .controls import Controls


@dataclass(frozen=True)
class Binding:
    """Keys (pygame key names) and the action they call.

    Attributes:
        keys: the key names; ``label``, ``help``: how :data:`KEY_HELP` names them.
        action: called with the controls and the key pressed.
        kiosk: the key acts in kiosk mode too.
    """

    keys: tuple[str, ...]
    label: str
    help: str
    action: Callable[[Controls, str], None]
    kiosk: bool = True


#: Hairstyle keys that cycle back / forward through the hair folder.
STYLE_CYCLE = {"[": -1, "]": 1}

BINDINGS: tuple[Binding, ...] = (
    Binding(("r",), "r", "recenter", lambda c, k: c.recenter()),
    Binding(("o",), "o", "overlays", lambda c, k: c.toggle_overlays(), kiosk=False),
    Binding(("h",), "h", "HUD", lambda c, k: c.toggle_hud(), kiosk=False),
    Binding(("s",), "s", "switch solver", lambda c, k: c.next_solver()),
    Binding(("c",), "c", "compare solvers side by side", lambda c, k: c.toggle_compare()),
    Binding(("m",), "m", "next clip", lambda c, k: c.next_clip()),
    Binding(("k",), "k", "restart clip", lambda c, k: c.restart_clip()),
    Binding(("v",), "v", "move then settle", lambda c, k: c.move_then_settle()),
    Binding(tuple(STYLE_CYCLE), "[ ]", "hairstyle", lambda c, k: c.cycle_style(STYLE_CYCLE[k])),
    Binding(tuple("123456789"), "1-9", "hairstyle N", lambda c, k: c.pick_style(int(k))),
    Binding(("0",), "0", "own hair", lambda c, k: c.pick_style(0)),
    Binding(("f",), "f", "framing", lambda c, k: c.next_framing()),
    Binding(("x",), "x", "reset view", lambda c, k: c.reset_view()),
    Binding(("g",), "g", "inspection view", lambda c, k: c.next_inspect(), kiosk=False),
    Binding(("t",), "t", "suggested roots", lambda c, k: c.toggle_roots(), kiosk=False),
    Binding((".",), ".", "next chain's weights", lambda c, k: c.next_chain(), kiosk=False),
    Binding(("space",), "space", "pause", lambda c, k: c.toggle_pause()),
    Binding(("right",), "→", "one substep (paused)", lambda c, k: c.step()),
    Binding(("p",), "p", "screenshot", lambda c, k: c.screenshot()),
    Binding(("q", "escape"), "q/esc", "quit", lambda c, k: c.quit()),
)
#: {key name: its binding}.
KEYS: dict[str, Binding] = {k: b for b in BINDINGS for k in b.keys}
#: The keys in one line (said when a live window opens).
KEY_HELP = " · ".join(f"{b.label} {b.help}" for b in BINDINGS)


class Keys:
    """What each key does to ``controls`` (kiosk mode: the bindings marked so stay off)."""

    def __init__(self, controls: Controls, *, kiosk: bool = False):
        self.controls = controls
        self.kiosk = kiosk

    def press(self, key: str) -> None:
        """Act on ``key`` (a pygame key name: "q", "escape", "space", ...): its binding, else
        the expression it is the hotkey of; others are ignored."""
        b = KEYS.get(key)
        if b is not None:
            if b.kiosk or not self.kiosk:
                b.action(self.controls, key)
            return
        self.controls.expression_hotkey(key)


__all__ = ["BINDINGS", "Binding", "KEYS", "KEY_HELP", "Keys", "STYLE_CYCLE"]
