"""The panel's endpoints (runtime/panel/routes.py) over HTTP on a fake controller: every
change goes to the controller, bad requests are refused before it, the controller's errors
are answered by kind. No GL context, no numba (the browser and live-session versions are in
test_panel_browser.py and test_panel_outputs.py)."""

from __future__ import annotations

import http.client
import json

import numpy as np
import pytest

from runtime.config import RunConfig
from runtime.errors import ConfigError
from runtime.live_settings import LiveSettings
from runtime.panel.outputs_control import OutputError
from runtime.panel.routes import PanelRoutes
from runtime.panel.state import PanelState
from runtime.service import ControlService


class FakeController:
    """The panel's controller; ``calls`` records every change asked for."""

    def __init__(self, settings: LiveSettings):
        self.settings = settings
        self.calls = []

    # the service's
    def status(self):
        return {"fps": 30.0}

    def motion(self):
        return {"playing": "idle"}

    # the panel's
    def current_avatar(self):
        return None

    def hair(self, *, tails=False):
        self.calls.append(("hair", tails))
        return {"solver": "rest-shape", "tails": [[0.0, 1.0, 0.0]]} if tails else {"solver": "rest-shape"}

    def expression_names(self):
        return ["happy", "sad"]

    def expressions(self):
        return self.settings.expressions

    def set_expressions(self, table):
        self.calls.append(("set_expressions", table))
        self.settings.set_expressions(table)

    def set_calibration(self, ranges):
        self.calls.append(("set_calibration", ranges))
        return {"calibration": ranges}

    def outputs(self):
        return {"background": self.settings.background, "outputs": ["video:x.mp4"], "vcam": {"on": False}}

    def set_background(self, bg):
        if bg == "transparent":
            raise OutputError(409, "output video:x.mp4: no alpha")
        self.calls.append(("set_background", bg))
        return {"background": bg}

    def set_vcam(self, on, device=None):
        self.calls.append(("set_vcam", on, device))
        raise OutputError(503, "no virtual camera is available")

    def record(self, kind, on, name=None):
        self.calls.append(("record", kind, on, name))
        return {"recording": {kind: on}}

    def save_config(self):
        self.calls.append(("save_config",))
        raise ConfigError("cannot save swaycam.toml: swaycam.toml: Expected '='")


@pytest.fixture()
def panel(tmp_path):
    settings = LiveSettings(RunConfig())
    outputs = type("Outputs", (), {"frame_drawn": lambda self, s: None, "close": lambda self: None})()
    state = PanelState(settings, lambda: ["happy", "sad"], outputs, now_ns=lambda: 0)
    ctl = FakeController(settings)
    routes = PanelRoutes(state, ctl, avatar_dir=tmp_path, motion_dir=None)
    (tmp_path / "a.vrm").write_bytes(b"x")
    with ControlService(ctl, port=0, routes=routes.table()) as svc:
        yield svc, ctl, state
    state.close()


def call(svc, method, path, body=None):
    c = http.client.HTTPConnection(*svc.address, timeout=10)
    c.request(method, path, body=None if body is None else json.dumps(body),
              headers={"Content-Type": "application/json"} if body is not None else {})
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, (json.loads(raw) if (r.getheader("Content-Type") or "").startswith("application/json") else raw)


def test_the_page_and_its_files(panel):
    svc, _, _ = panel
    status, page = call(svc, "GET", "/")
    assert status == 200 and b"<html" in page.lower()
    c = http.client.HTTPConnection(*svc.address, timeout=10)
    c.request("GET", "/panel/panel.js")
    r = c.getresponse()
    r.read()
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/javascript")
    assert r.getheader("Cache-Control") == "no-cache" and r.getheader("X-Frame-Options") == "DENY"
    assert r.getheader("X-Content-Type-Options") == "nosniff" and "frame-ancestors 'none'" in \
        r.getheader("Content-Security-Policy")


def test_pickers_and_hair(panel):
    svc, ctl, _ = panel
    assert call(svc, "GET", "/avatars") == (200, {"avatars": ["a.vrm"], "current": None, "path": None, "folder": True})
    assert call(svc, "GET", "/clips") == (200, {"clips": ["idle", "rest", "turn-test", "move-then-settle"], "playing": "idle",
                                              "motion": True})
    assert call(svc, "GET", "/hair")[1] == {"solver": "rest-shape"}
    assert call(svc, "GET", "/hair?tails=1")[1]["tails"] == [[0.0, 1.0, 0.0]]
    assert ctl.calls == [("hair", False), ("hair", True)]


def test_expressions_and_hotkeys_go_through_the_controller(panel):
    svc, ctl, state = panel
    status, body = call(svc, "GET", "/expressions")
    assert status == 200 and body["keys"] == {"f1": "happy", "f2": "sad"} and body["mode"] == "toggle"
    assert call(svc, "POST", "/expression", {"name": "happy", "weight": 0.5, "fade_ms": 0})[1]["triggered"] == \
        {"happy": 0.5}
    assert call(svc, "POST", "/expression", {"name": "angry"})[0] == 404
    assert call(svc, "POST", "/expression", {"name": 3})[0] == 400
    status, body = call(svc, "POST", "/expression", {"name": "sad", "weight": 2})
    assert status == 400 and "'weight' 2 must be a number in 0..1" in body["error"]       # SettingsError: 400
    status, body = call(svc, "POST", "/hotkeys", {"keys": {"happy": "J"}, "mode": "hold"})
    assert status == 200 and body["keys"] == {"j": "happy"} and body["mode"] == "hold"
    assert ctl.calls == [("set_expressions", {"keys": {"happy": "j"}, "mode": "hold"})]
    assert state.hotkey("j") and state.overlay.targets().get("happy", 0.0) == 0.0   # the window's hotkey: off...
    assert state.hotkey("j") and state.overlay.targets()["happy"] == 1.0            # ...and on again
    assert not state.hotkey("f1")                                                    # no longer a hotkey
    status, body = call(svc, "POST", "/hotkeys", {"keys": {"sad": "r"}})
    assert status == 400 and "window key" in body["error"] and len(ctl.calls) == 2
    assert call(svc, "POST", "/hotkeys", {"keys": ["j"]})[0] == 400 and len(ctl.calls) == 2
    assert call(svc, "POST", "/hotkeys", {"colour": 1})[0] == 400


def test_outputs_background_vcam_record(panel):
    svc, ctl, _ = panel
    assert call(svc, "GET", "/outputs") == (200, {"background": "#202430", "outputs": ["video:x.mp4"],
                                                  "preview_clients": 0, "vcam": {"on": False}})
    assert call(svc, "POST", "/background", {"background": "green"}) == (200, {"background": "green"})
    status, body = call(svc, "POST", "/background", {"background": "blue-ish"})
    assert status == 400 and "'blue-ish' is not" in body["error"]                     # ConfigError: 400
    assert call(svc, "POST", "/background", {"background": "transparent"})[0] == 409  # OutputError: its status
    assert call(svc, "POST", "/background", {"background": 3})[0] == 400
    assert call(svc, "POST", "/vcam", {"on": True, "device": "cam"})[0] == 503
    assert call(svc, "POST", "/vcam", {"on": "yes"})[0] == 400
    assert call(svc, "POST", "/record", {"kind": "poses", "on": True})[1] == {"recording": {"poses": True}}
    assert call(svc, "POST", "/record", {"kind": "video", "on": 1})[0] == 400
    assert ctl.calls == [("set_background", "green"), ("set_vcam", True, "cam"), ("record", "poses", True, None)]


def test_calibration_collects_here_and_applies_through_the_controller(panel):
    from tracking.expressions import BLENDSHAPE_INDEX

    svc, ctl, state = panel
    status, body = call(svc, "POST", "/calibrate", {"phase": "apply"})
    assert status == 409 and "has 0 frames" in body["error"] and ctl.calls == []      # CalibrationError: 409
    assert call(svc, "POST", "/calibrate", {"phase": "wink"})[0] == 400
    for phase, (blink, jaw) in {"neutral": (0.1, 0.05), "blink": (0.9, 0.05), "mouth": (0.1, 0.7)}.items():
        assert call(svc, "POST", "/calibrate", {"phase": phase})[1]["phase"] == phase
        b = np.zeros(52)
        b[BLENDSHAPE_INDEX["eyeBlinkLeft"]] = b[BLENDSHAPE_INDEX["eyeBlinkRight"]] = blink
        b[BLENDSHAPE_INDEX["jawOpen"]] = jaw
        for _ in range(5):
            state.calibration.feed(b, True)
    status, body = call(svc, "POST", "/calibrate", {"phase": "apply"})
    ranges = {"eyeBlinkLeft": [0.1, 0.9], "eyeBlinkRight": [0.1, 0.9], "jawOpen": [0.05, 0.7]}
    assert status == 200 and body == {"calibration": ranges} and ctl.calls == [("set_calibration", ranges)]


def test_saving_a_config_it_cannot_write_is_422(panel):
    svc, ctl, _ = panel
    status, body = call(svc, "POST", "/config/save", {})
    assert status == 422 and body["error"].startswith("cannot save swaycam.toml") and ctl.calls == [("save_config",)]
    assert call(svc, "POST", "/config/save", {"path": "/etc/x"})[0] == 400 and len(ctl.calls) == 1


def test_calibration_with_no_face_data_is_refused(panel):
    """A pose track without expressions (every blendshape 0) used to apply [0, 0.2] ranges
    with 200 (and "save" wrote them): 409 now, nothing applied (issue 34 finding 2)."""
    svc, ctl, state = panel
    for phase in ("neutral", "blink", "mouth"):
        call(svc, "POST", "/calibrate", {"phase": phase})
        for _ in range(10):
            state.calibration.feed(np.zeros(52), True)
    status, body = call(svc, "POST", "/calibrate", {"phase": "apply"})
    assert status == 409 and "no face data" in body["error"] and ctl.calls == []

