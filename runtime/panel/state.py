"""What the browser panel keeps while a run goes on: the preview tap, the triggered
expressions, the calibration being collected and the run-time outputs, and the render
thread's hooks into them (the session calls them each frame).

The panel's endpoints (runtime/panel/routes.py) read this state and ask the session's
controller for every change of the run.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

from .calibration import CalibrationCollector
from .expressions import ExpressionOverlay
from .preview import PreviewTap
from .settings import fade_ms, hotkeys
from .voice import VoiceCalibration

if TYPE_CHECKING:  # pragma: no cover
    from ..live_settings import LiveSettings
    from .outputs_control import OutputControl


class PanelState:
    """The panel of one session (see the module doc).

    Args:
        settings: the session's live settings (the ``[expressions]`` table of the hotkeys).
        expression_names: the expressions of the avatar drawn now.
        outputs: the run-time outputs (virtual camera, recordings).
        now_ns: wall time in ns for the expression fades (default: :func:`time.perf_counter_ns`).

    Attributes:
        preview (:class:`PreviewTap`), overlay (:class:`ExpressionOverlay`), calibration
        (:class:`CalibrationCollector`), voice (:class:`VoiceCalibration`, the ``--audio``
        vowel profile), outputs (:class:`OutputControl`).
    """

    def __init__(self, settings: LiveSettings, expression_names: Callable[[], list[str]], outputs: OutputControl,
                 *, now_ns: Callable[[], int] = time.perf_counter_ns):
        self.settings = settings
        self._names = expression_names
        self.preview = PreviewTap()
        self.overlay = ExpressionOverlay(now_ns)
        self.calibration = CalibrationCollector()
        self.voice = VoiceCalibration()
        self.outputs = outputs
        self.closed = False

    # ------------------------------------------------------------------ render thread hooks
    def expressions(self, tracked: dict | None) -> dict | None:
        """The frame's expression weights with the triggered ones on top."""
        return self.overlay.apply(tracked)

    def frame_drawn(self, renderer, wall_ns: int, sample, view=None) -> None:
        """After the frame is drawn and sent: the preview, the pose recording (with ``view``,
        the viewer's orbit (5,), when given), the calibration's samples."""
        self.preview.frame_drawn(renderer, wall_ns)
        self.outputs.frame_drawn(sample, view)
        if self.calibration.phase is not None and sample is not None:
            self.calibration.feed(sample.blendshapes, sample.found)

    def hotkey(self, key: str) -> bool:
        """A window key: toggle the expression it is the hotkey of (True when it is one)."""
        table = self.settings.expressions
        name = hotkeys(table, list(self._names())).get(key.lower())
        if name is None:
            return False
        on = self.overlay.targets().get(name, 0.0) > 0
        self.overlay.trigger(name, 0.0 if on else 1.0, fade_ms(table))
        return True

    def close(self) -> None:
        """Finish the recordings, stop the preview (wakes its streams) and free its GL objects
        (render thread). Idempotent."""
        if not self.closed:
            self.closed = True
            self.outputs.close()
            self.preview.close()
            self.preview.release()


__all__ = ["PanelState"]
