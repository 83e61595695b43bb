"""The :class:`runtime.controls.Controls` of a running session, made of its parts (the
stage, the hairstyle switcher, the frame drawer, the clock). Render thread, between frames.

Actions that need a fit (a hairstyle) return at once: the fit runs off the render thread
(:class:`runtime.tryon.StyleSwitcher`), what is asked for is said now and the switch (or why
it failed) when it is done.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pragma: no cover
    from .clock import Clock
    from .drawing import FrameDrawer
    from .stage import Stage
    from .tryon import StyleSwitcher

#: Where screenshots are written (relative to the working folder).
SCREENSHOT_DIR = Path("out")


class RunControls:
    """The :class:`Controls` of a running session, made of its parts.

    Args:
        stage: the stage (solver, compare mode, body motion).
        tryon: the hairstyle switcher.
        drawer: the frame drawer (overlays, HUD, screenshots).
        clock: the run's clock (pause).
        recenter: takes the current head pose as neutral (the pose input's).
        stop: ends the run after this frame.
        hotkey: the expression hotkeys (:meth:`runtime.panel.PanelState.hotkey`), or None.
        say: where user-facing lines go.

    Attributes:
        screenshots: screenshots written so far (numbers the files).
    """

    def __init__(self, *, stage: Stage, tryon: StyleSwitcher, drawer: FrameDrawer, clock: Clock,
                 recenter: Callable[[], None], stop: Callable[[], None], hotkey: Callable[[str], bool] | None = None,
                 say: Callable[[str], None] = print):
        self.stage = stage
        self.tryon = tryon
        self.drawer = drawer
        self.clock = clock
        self._recenter = recenter
        self._stop = stop
        self._hotkey = hotkey
        self.say = say
        self.screenshots = 0

    def quit(self) -> None:
        self._stop()

    def recenter(self) -> None:
        self._recenter()

    def toggle_overlays(self) -> None:
        self.drawer.overlays = not self.drawer.overlays

    def toggle_hud(self) -> None:
        self.drawer.hud = not self.drawer.hud

    def toggle_pause(self) -> None:
        self.clock.toggle_pause()

    def step(self) -> None:
        from .clock import RATE_HZ

        if not self.clock.paused:
            self.say("step: pause first (space)")
            return
        self.clock.step(-(-1_000_000_000 // RATE_HZ))      # rounded up: exactly one grid point

    def next_solver(self) -> None:
        from solver.modes import SolverMode

        nxt = SolverMode(self.stage.rig.solver).next().value
        self.stage.switch_solver(nxt)          # the hair's motion carries over
        self.say(f"solver: {nxt}")

    def toggle_compare(self) -> None:
        self.stage.set_compare(not self.stage.compare)

    def next_clip(self) -> None:
        from avatars import AvatarError

        from .rig.errors import MotionError

        try:
            self.say(f"motion: {self.stage.next_motion()}")
        except (MotionError, AvatarError) as exc:   # no body motion, a clip (ClipError) it cannot play: keep playing
            self.say(f"motion: {exc}")

    def restart_clip(self) -> None:
        from .rig.errors import MotionError

        try:
            self.say(f"motion: {self.stage.restart_motion()} from the start")
        except MotionError as exc:
            self.say(f"motion: {exc}")

    def move_then_settle(self) -> None:
        from avatars import AvatarError

        from .rig.errors import MotionError

        try:
            self.stage.set_motion(self.stage.load_motion("move-then-settle"))
            self.say("motion: move-then-settle (the settle time is in the HUD, h)")
        except (MotionError, AvatarError) as exc:
            self.say(f"motion: {exc}")

    def next_framing(self) -> None:
        d = self.drawer
        d.set_framing(d.view.next_framing())
        self.say(f"framing: {d.view.framing}")

    def reset_view(self) -> None:
        self.drawer.view.reset()

    def next_inspect(self) -> None:
        from .tryon import guides_of

        mode = self.drawer.view.next_inspect()
        none = guides_of(self.stage.rig.avatar) is None
        self.say(f"inspection: {mode}" + (" (no fitted style drawn: no guides)" if none and mode != "mesh" else ""))

    def next_chain(self) -> None:
        v = self.drawer.view
        v.chain += 1
        self.say(f"chain {v.chain}" + ("" if v.inspect == "weights" else " (shown in the weights view, g)"))

    def toggle_roots(self) -> None:
        v = self.drawer.view
        v.roots = not v.roots
        self.say(f"suggested roots: {'on' if v.roots else 'off'}")

    def orbit(self, dx: float, dy: float, *, pan: bool = False) -> None:
        d = self.drawer
        d.view.drag(dx, dy, pan=pan, camera=d.renderer.camera, height=d.renderer.size[1])

    def zoom(self, notches: float) -> None:
        self.drawer.view.wheel(notches)

    def screenshot(self) -> Path | None:
        """Write what the window shows now to ``out/screenshot-<time>-<n>.png`` (read from the
        framebuffer now); None before the first frame."""
        self.screenshots += 1
        stamp = time.strftime("%Y%m%d-%H%M%S")   # a file name, not run time
        path = self.drawer.screenshot(SCREENSHOT_DIR / f"screenshot-{stamp}-{self.screenshots}.png")
        if path is not None:
            self.say(f"screenshot: {path}")
        return path

    def cycle_style(self, step: int) -> None:
        self._style(lambda: self.tryon.cycle(step))

    def pick_style(self, index: int) -> None:
        self._style(lambda: self.tryon.pick(index))

    def _style(self, ask) -> None:
        from .errors import StyleError

        sw = self.tryon
        try:
            fut = ask()
        except StyleError as exc:      # a style the folder no longer has
            self.say(f"hairstyle: {exc}")
            return
        if fut is None:
            self.say("hairstyle: no such style in the hair folder" if sw.styles.folders
                     else "hairstyle: no hair folder (--hair-dir)")
            return
        pending = sw.state()["pending"]
        self.say(f"hairstyle: fitting {pending}…" if pending else "hairstyle: back to the avatar's own hair…")

    def expression_hotkey(self, key: str) -> bool:
        return self._hotkey is not None and self._hotkey(key)


__all__ = ["RunControls", "SCREENSHOT_DIR"]
