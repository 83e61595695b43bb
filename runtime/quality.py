"""The quality governor's ladder for one live run: which steps it has and what each changes
(issue 32; the rules are :mod:`runtime.governor`'s).

:class:`RunQuality` builds the rungs from what the run has and feeds the governor each frame:

- ``tracker``: the live tracked input (a webcam or a file played live, also under ``--audio``
  or ``--kiosk``) tracks every other camera frame (:attr:`LiveInput.stride` 2);
- ``detail``: with reduced meshes (software OpenGL, or ``detail = "reduced"``), the coarser
  ones of :data:`runtime.governor.COARSE_PIXEL_ERROR`, simplified on a worker thread when the
  run starts and swapped in by their index buffers; the step takes effect on the first frame
  after they are ready;
- ``scale`` and ``rate``: only while the window is the only output (no sink reads pixels: a
  virtual camera's or a file's size and rate are a promise). A sink that reads pixels (a
  recording started from the panel) retires both at once: undone before its first frame;
- ``outlines``: where MToon outlines are drawn.

Everything runs on the render thread between frames except :meth:`status` (any thread).
"""

from __future__ import annotations

import logging
import threading

from render.detail import PIXEL_ERROR

from .governor import COARSE_PIXEL_ERROR, WINDOW_SCALE, GovernorOptions, QualityGovernor, Rung
from .pose_inputs.idle import IdlePose
from .pose_inputs.live import LiveInput

log = logging.getLogger(__name__)

#: rungs that need the window to be the only output
WINDOW_ONLY = ("scale", "rate")


def live_input(inp) -> LiveInput | None:
    """The :class:`LiveInput` under ``inp`` (through the ``--kiosk`` and ``--audio`` wrappers), or None."""
    from .lipsync.input import VoiceInput

    while isinstance(inp, (IdlePose, VoiceInput)):
        inp = inp.inner
    return inp if isinstance(inp, LiveInput) else None


class RunQuality:
    """The governor of one live run (module doc).

    Args:
        renderer: the run's :class:`render.Renderer`.
        outputs: the run's :class:`runtime.outputs.Outputs` (``needs_pixels`` read per frame).
        pose_input: the run's pose input.
        fps: the output rate (the budget is its period).
        window: a window is among the outputs.
        options: :class:`GovernorOptions` (``pin`` from the ``quality`` setting).

    Raises:
        ValueError: ``quality`` pins a step this run does not have.
    """

    def __init__(self, renderer, outputs, pose_input, *, fps: float, window: bool,
                 options: GovernorOptions = GovernorOptions()):
        self.renderer, self.outputs = renderer, outputs
        self.size = tuple(renderer.size)
        #: the window's output period multiplier (the ``rate`` step: 2)
        self.divisor = 1
        self._coarse = None
        self._coarse_wanted = False
        self._coarse_on = False
        self._dropped = 0
        rungs = []
        inp = live_input(pose_input)
        if inp is not None:
            rungs.append(Rung("tracker", "MediaPipe on every other camera frame", self._stride(inp)))
        if renderer.reduced:
            rungs.append(Rung("detail", f"coarser meshes ({COARSE_PIXEL_ERROR:g} px)", self._detail))
            if options.pin == "auto" or "detail" in _up_to(options.pin):
                self._start_coarse()
        window_only = window and not outputs.needs_pixels
        if window_only:
            rungs.append(Rung("scale", f"render scale {WINDOW_SCALE:g} in the window", self._scale))
        if renderer.outlines:
            rungs.append(Rung("outlines", "MToon outlines off", self._outlines))
        if window_only:
            rungs.append(Rung("rate", f"window at 1/2 of {fps:g} fps", self._rate))
        self.governor = QualityGovernor(rungs, 1000.0 / fps, options)

    # ------------------------------------------------------------------ the rungs
    @staticmethod
    def _stride(inp: LiveInput):
        def apply(on: bool) -> None:
            inp.stride = 2 if on else 1
        return apply

    def _start_coarse(self) -> None:
        r = self.renderer
        avatar, camera = r.avatar, r.camera

        def work():
            try:
                self._coarse = r.detail_for(avatar, camera, pixel_error=COARSE_PIXEL_ERROR)
            except Exception:  # noqa: BLE001 - the step then simplifies on the render thread
                log.exception("coarse meshes for the quality governor")
        threading.Thread(target=work, name="swaycam-coarse-detail", daemon=True).start()

    def _detail(self, on: bool) -> None:
        self._coarse_wanted = on
        self._sync_detail()

    def _sync_detail(self) -> None:
        if self._coarse_wanted == self._coarse_on:
            return
        if self._coarse_wanted and self._coarse is None:
            return                     # not simplified yet: the first frame after it is
        self.renderer.set_pixel_error(COARSE_PIXEL_ERROR if self._coarse_wanted else PIXEL_ERROR, self._coarse)
        self._coarse_on = self._coarse_wanted

    def _scale(self, on: bool) -> None:
        w, h = self.size
        self.renderer.set_render_size((int(round(w * WINDOW_SCALE)), int(round(h * WINDOW_SCALE))) if on
                                      else (w, h))

    def _outlines(self, on: bool) -> None:
        self.renderer.outlines = not on

    def _rate(self, on: bool) -> None:
        self.divisor = 2 if on else 1

    # ------------------------------------------------------------------ per frame
    def dropped(self, n: int) -> None:
        """``n`` output periods went without a frame (the live schedule's count)."""
        self._dropped += n

    def before_frame(self) -> None:
        """Between frames: the coarse meshes once ready; the window-only steps retired when a
        sink that reads pixels was added."""
        self._sync_detail()
        if self.outputs.needs_pixels:
            for name in WINDOW_ONLY:
                self.governor.retire(name)

    def frame(self, work_ms: float) -> None:
        """After a frame: its work (start to hand-over to the outputs), ms."""
        d, self._dropped = self._dropped, 0
        self.governor.frame(work_ms, dropped=d)

    def text(self) -> str:
        return self.governor.text()

    def status(self) -> dict:
        return self.governor.status()


def _up_to(pin: str) -> tuple[str, ...]:
    from .governor import RUNG_ORDER

    return RUNG_ORDER[: RUNG_ORDER.index(pin) + 1] if pin in RUNG_ORDER else ()


__all__ = ["RunQuality", "WINDOW_ONLY", "live_input"]
