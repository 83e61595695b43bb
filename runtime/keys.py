"""The window keys of ``swaycam run`` (render thread, between frames).

    r recenter · o overlays · h HUD · s switch solver · c compare solvers side by side ·
    m next clip of the --motion file (then the idle) · [ / ] previous / next hairstyle of the
    hair folder · 1-9 hairstyle number N · 0 the avatar's own hair · space pause · p screenshot ·
    q/esc quit

In kiosk mode the overlays and the HUD stay off (o and h do nothing). A hairstyle is fitted off
the render thread (:class:`runtime.tryon.StyleSwitcher`): the key returns at once, the
previous style is drawn until the new one is ready.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from solver.modes import SolverMode

if TYPE_CHECKING:  # pragma: no cover
    from .session import Session

KEY_HELP = ("r recenter · o overlays · h HUD · s switch solver · c compare solvers side by side · "
            "m next clip · [ ] hairstyle · 1-9 hairstyle N · 0 own hair · space pause · p screenshot · q/esc quit")
#: Keys that switch hairstyles: cycle back / forward, pick number N (0: the avatar's own hair).
STYLE_CYCLE = {"[": -1, "]": 1}
STYLE_DIGITS = tuple("0123456789")
#: Where ``p`` writes screenshots (relative to the working folder).
SCREENSHOT_DIR = Path("out")


class Keys:
    """What each key does to ``session``.

    Attributes:
        screenshots: screenshots written so far (numbers the files).
    """

    def __init__(self, session: Session):
        self.session = session
        self.screenshots = 0

    def press(self, key: str) -> None:
        """Act on ``key`` (a pygame key name: "q", "escape", "space", ...); others are ignored."""
        s = self.session
        kiosk = s.cfg.kiosk
        if key in ("q", "escape"):
            s.stop()
        elif key == "r":
            s.pose_input.recenter()
        elif key == "o" and not kiosk:
            s.drawer.overlays = not s.drawer.overlays
        elif key == "h" and not kiosk:
            s.drawer.hud = not s.drawer.hud
        elif key == "space":
            s.clock.toggle_pause()
        elif key == "s":
            nxt = SolverMode(s.rig.solver).next().value
            s.switch_solver(nxt)          # the hair's motion carries over
            s.say(f"solver: {nxt}")
        elif key == "c":
            s.set_compare(not s.compare)
        elif key == "m":
            try:
                s.say(f"motion: {s.next_motion()}")
            except ValueError as exc:      # no body motion, a clip this avatar cannot play: keep playing
                s.say(f"motion: {exc}")
        elif key == "p":
            self.screenshot()
        elif key in STYLE_CYCLE or key in STYLE_DIGITS:
            self.hairstyle(key)
        elif s.panel is not None and s.panel.hotkey(key):    # an expression's hotkey ([expressions] keys)
            pass

    def hairstyle(self, key: str) -> None:
        """``[`` / ``]``: the previous / next style of the hair folder; a digit N: style N
        (0: the avatar's own hair). The fit runs off the render thread; what is asked for is
        said now, the switch (or why it failed) when it is done."""
        s = self.session
        sw = s.tryon
        try:
            fut = sw.cycle(STYLE_CYCLE[key]) if key in STYLE_CYCLE else sw.pick(int(key))
        except ValueError as exc:      # a style the folder no longer has
            s.say(f"hairstyle: {exc}")
            return
        if fut is None:
            s.say("hairstyle: no such style in the hair folder" if sw.styles.folders
                  else "hairstyle: no hair folder (--hair-dir)")
            return
        pending = sw.state()["pending"]
        s.say(f"hairstyle: fitting {pending}…" if pending else "hairstyle: back to the avatar's own hair…")

    def screenshot(self) -> Path | None:
        """Write what the window shows now to ``out/screenshot-<time>-<n>.png`` (read from the
        framebuffer now); None before the first frame."""
        self.screenshots += 1
        stamp = time.strftime("%Y%m%d-%H%M%S")   # a file name, not run time
        path = self.session.drawer.screenshot(SCREENSHOT_DIR / f"screenshot-{stamp}-{self.screenshots}.png")
        if path is not None:
            self.session.say(f"screenshot: {path}")
        return path
