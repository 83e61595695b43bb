"""Wind through the service of a running session (POST /wind), and [hair.wind] / per-spring
wind_drag and limit settings on the rig (runtime/rig/hair_external.py).

The live run is tests/runtime/test_retune_live.py's: the default avatar on the standard head
turn, offline at 30 fps, a real HTTP request mid-turn applied between two frames, every
substep's tails recorded. A strong wind change must not move any tail in one substep by more
than the neighbouring substeps' travel allows (the wind is a force, eased in: no jump).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.runtime.test_retune_live import JUMP_RATIO, _jump_ratio, _post, _run


def test_a_wind_change_through_the_service_is_continuous(tmp_path):
    body = {"direction": [1.0, 0.2, 0.5], "strength": 30.0, "gusts": 0.6, "seed": 5, "ramp_s": 0.25}
    tails, k, result, session = _run(tmp_path, lambda s: _post(s.service.address[1], "/wind", body))
    status, reply = result
    assert status == 200, reply
    assert reply["wind"]["strength"] == 30.0 and reply["wind"]["gusts"] == 0.6
    # the substeps of the ramp: no tail moves farther than JUMP_RATIO x its neighbours' largest move
    ratio = max(_jump_ratio(tails, k + j) for j in range(0, 30, 3))
    print(f"largest move over its neighbours' through the change: {ratio:.3f}")
    assert ratio < JUMP_RATIO
    # ... and the wind does act: the hair ends far from where the same run without it has it
    calm, _, _, _ = _run(tmp_path, None)
    assert float(np.abs(tails[-1] - calm[-1]).max()) > 0.01
    rig = session.stage.rig
    assert rig.hair_params["wind"]["strength"] == 30.0          # kept in the [hair] settings
    assert session.stage.settings.hair["wind"]["seed"] == 5    # and what a new avatar starts with


def test_bad_wind_changes_nothing(tmp_path):
    def bad(s):
        res = _post(s.service.address[1], "/wind", {"strength": 99.0})
        return res, s.commands.call(lambda: dict(s.stage.rig.hair_params))

    _, _, ((status, body), params), _ = _run(tmp_path, bad)
    assert status == 400 and "strength: 99.0 is outside [0, 40] m/s" in body["error"]
    assert "wind" not in params


def test_hair_settings_carry_the_wind_limits_and_wind_drag():
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from runtime.errors import SettingsError
    from runtime.rig import AvatarRig
    from solver.wind import wind_of

    av = load_avatar(default_avatar_path())
    name = av.springs[0].name
    hair = {"wind_drag": 2.0, "wind": {"direction": [0, 0, 1], "strength": 5.0},
            "springs": {name: {"wind_drag": 0.5, "limit": {"kind": "cone", "angle": 20}}}}
    rig = AvatarRig(av, hair=hair)
    ch = rig.chains
    ext = ch.sections["external"]
    mine = ch.spring_segments(name)
    others = np.setdiff1d(np.arange(ch.segment_count), mine)
    assert set(ext.wind_response[mine]) == {0.5} and set(ext.wind_response[others]) == {2.0}
    assert [lim["spring"] for lim in ch.report.angle_limits] == [name] * len(mine)
    assert ch.report.angle_limits[0]["angle"] == pytest.approx(math.radians(20.0))
    rig.chains.step(rig.world)
    assert np.allclose(wind_of(ch), [0.0, 0.0, 5.0])            # a new rig starts at full wind
    # POST /hair without a wind keeps the wind; a limit of kind none removes the config's
    rig.set_hair({"k": 50.0, "springs": {name: {"limit": {"kind": "none"}}}})
    assert rig.hair_params["wind"]["strength"] == 5.0 and not ch.report.angle_limits
    for bad, fragment in [({"wind": {"strength": 50}}, "strength"), ({"wind_drag": -1}, "wind_drag"),
                          ({"springs": {name: {"limit": {"kind": "twist", "angle": 3}}}}, "kind"),
                          ({"springs": {name: {"limit": {"kind": "cone", "angle": 200}}}}, "angle"),
                          ({"wind": {"gale": 1}}, "unknown wind setting"), ({"fit_limits": "yes"}, "fit_limits")]:
        with pytest.raises(SettingsError, match=fragment):
            rig.set_hair(bad)
