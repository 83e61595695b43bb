"""The browser control panel served by the control service: page, live preview, triggered
expressions, guided calibration, run-time outputs, saving settings.

:mod:`.state` — what the panel keeps during a run and its render-thread hooks
(:class:`PanelState`); :mod:`.routes` — its endpoints (:class:`PanelRoutes`), which ask the
session's controller for every change; :mod:`.outputs_control`, :mod:`.preview`,
:mod:`.expressions`, :mod:`.calibration`, :mod:`.settings`, :mod:`.config_file` — the pieces.
"""

from .calibration import CalibrationCollector
from .expressions import ExpressionOverlay
from .preview import PreviewTap
from .routes import PanelController, PanelRoutes
from .state import PanelState

__all__ = ["CalibrationCollector", "ExpressionOverlay", "PanelController", "PanelRoutes", "PanelState", "PreviewTap"]
