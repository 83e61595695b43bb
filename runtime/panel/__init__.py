"""The browser control panel served by the control service: page, live preview, triggered
expressions, guided calibration, saving settings (see :mod:`runtime.panel.routes`)."""

from .calibration import CalibrationCollector
from .expressions import ExpressionOverlay
from .routes import Panel
from .preview import PreviewTap

__all__ = ["CalibrationCollector", "ExpressionOverlay", "Panel", "PreviewTap"]
