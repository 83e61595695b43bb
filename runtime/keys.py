"""The window keys of ``swaycam run`` (render thread, between frames).

    r recenter · o overlays · h HUD · s switch solver · c compare solvers side by side ·
    m next clip of the --motion file (then the idle) · space pause · p screenshot · q/esc quit

In kiosk mode the overlays and the HUD stay off (o and h do nothing).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from solver.modes import SolverMode

if TYPE_CHECKING:  # pragma: no cover
    from .session import Session

KEY_HELP = ("r recenter · o overlays · h HUD · s switch solver · c compare solvers side by side · "
            "m next clip · space pause · p screenshot · q/esc quit")
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

    def screenshot(self) -> Path | None:
        """Write what the window shows now to ``out/screenshot-<time>-<n>.png`` (read from the
        framebuffer now); None before the first frame."""
        self.screenshots += 1
        stamp = time.strftime("%Y%m%d-%H%M%S")   # a file name, not run time
        path = self.session.drawer.screenshot(SCREENSHOT_DIR / f"screenshot-{stamp}-{self.screenshots}.png")
        if path is not None:
            self.session.say(f"screenshot: {path}")
        return path
