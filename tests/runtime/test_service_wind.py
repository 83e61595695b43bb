"""POST /wind (runtime/service/routes.py): an untrusted body, every field checked and bounded
before the controller sees it."""

from __future__ import annotations

import pytest

from runtime.service import ControlService
from tests.runtime.test_service import FakeController, request


class WindController(FakeController):
    def set_wind(self, wind, impulse=None):
        self.calls.append(("wind", wind, impulse))
        return {"wind": wind, "now": [0.0, 0.0, 0.0]}


@pytest.fixture()
def service():
    ctl = WindController()
    with ControlService(ctl, port=0) as svc:
        yield svc, ctl


def test_a_wind_and_an_impulse_reach_the_controller(service):
    svc, ctl = service
    status, body = request(svc, "POST", "/wind", {"direction": [0, 0, 1], "strength": 8, "gusts": 0.5,
                                                   "seed": 3, "ramp_s": 1.0})
    assert status == 200 and body["wind"]["strength"] == 8
    status, _ = request(svc, "POST", "/wind", {"impulse": [0, 2, -1]})
    assert status == 200
    assert ctl.calls == [("wind", {"direction": [0, 0, 1], "strength": 8, "gusts": 0.5, "seed": 3, "ramp_s": 1.0},
                          None), ("wind", None, (0.0, 2.0, -1.0))]


@pytest.mark.parametrize("body,fragment", [
    ({}, "needs one of"),
    ({"strength": 41}, "strength: 41.0 is outside [0, 40] m/s"),
    ({"strength": -1}, "strength"),
    ({"strength": "8"}, "is not a number"),
    ({"strength": float("1e400")}, "numbers must be finite"),
    ({"gusts": 2}, "gusts"),
    ({"seed": -3}, "seed"),
    ({"seed": 1.5}, "seed"),
    ({"ramp_s": 1e9}, "ramp_s"),
    ({"direction": [0, 0]}, "direction"),
    ({"direction": "up"}, "direction"),
    ({"direction": [0, 0, 0], "strength": 3}, "no direction"),
    ({"impulse": [0, 11, 0]}, "longer than 10 m/s"),
    ({"impulse": [0, "x", 0]}, "three finite numbers"),
    ({"impulse": [True, 0, 0]}, "three finite numbers"),
    ({"gale": 3}, "unknown key 'gale'"),
])
def test_bad_wind_bodies_are_400_and_never_reach_the_controller(service, body, fragment):
    svc, ctl = service
    status, reply = request(svc, "POST", "/wind", body)
    assert status == 400, reply
    assert fragment in reply["error"], reply
    assert ctl.calls == []
