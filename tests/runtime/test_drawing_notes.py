"""The drawer's transient notes (issue 34 finding 9) reach the HUD lines drawn: compare mode's
"both at rest" note on the left pane's label, the hairstyle line with the HUD off too. A
recording fake renderer stands in for GL."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from render import HudInfo
from runtime.drawing import FrameDrawer
from runtime.rest_note import NOTE
from runtime.telemetry import Telemetry


class _Renderer:
    size, avatar, camera = (64, 32), None, None

    def __init__(self):
        self.huds = []

    def draw(self, world, expressions, **kw):
        self.huds.append(kw["hud"])


def _frame():
    w = np.eye(4)[None]
    return SimpleNamespace(world=w, expressions={}, time_s=0.0, substeps=1, companion_worlds=[w])


def _rig(solver):
    return SimpleNamespace(avatar=SimpleNamespace(), solver=solver)


def test_compare_panes_carry_the_rest_note_and_the_hair_line():
    r = _Renderer()
    d = FrameDrawer(r, Telemetry())
    d.draw(_frame(), _rig("rest-shape"), _rig("pbd"))
    assert r.huds == [HudInfo(extra=(("left", "rest-shape"),)), HudInfo(extra=(("right", "pbd"),))]
    d.rest_note, d.style_note = NOTE, "'bob01' on"
    d.draw(_frame(), _rig("rest-shape"), _rig("pbd"))
    assert r.huds[2:] == [HudInfo(extra=(("left", "rest-shape"), ("note", NOTE), ("hair", "'bob01' on"))),
                          HudInfo(extra=(("right", "pbd"),))]


def test_the_hair_line_shows_with_the_hud_off():
    r = _Renderer()
    d = FrameDrawer(r, Telemetry())
    d.draw(_frame(), _rig("rest-shape"))
    d.style_note = "fitting 'bob01'…"
    d.draw(_frame(), _rig("rest-shape"))
    assert r.huds == [None, HudInfo(extra=(("hair", "fitting 'bob01'…"),))]
