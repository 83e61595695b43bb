"""The browser control panel served by the control service: page, live preview, triggered
expressions, guided calibration, run-time outputs, saving settings.

:mod:`.state` — what the panel keeps during a run and its render-thread hooks
(``PanelState``); :mod:`.routes` — its endpoints (``PanelRoutes``), which ask the session's
controller for every change; :mod:`.outputs_control`, :mod:`.preview`, :mod:`.expressions`,
:mod:`.calibration`, :mod:`.settings`, :mod:`.config_file` — the pieces. (Nothing is imported
here: the config reads :mod:`.settings` without the service behind the routes.)
"""
