"""Retuning the hair of a running session is continuous (issue 13 item 8): ``POST /hair``
changes k, c, gravity and hit radius in place, and a solver switch carries the hair's motion
over, so no tail jumps at the switch; rebuilding the rig (the old behaviour) snaps the hair
to rest, and the same measure catches it.

The run: the generated default avatar on the standard head turn, offline at 30 fps, the
control service on a free port. Mid-turn (t = 1.5 s) a real HTTP request is made; the
render thread applies it between two frames. Every substep's tails are recorded.
"""

from __future__ import annotations

import http.client
import json
import threading
import time

import numpy as np
import pytest

from runtime.config import RunConfig
from runtime.session import Session

#: The switch frame: 1.5 s into the head turn at 30 fps, the hair swinging.
SWITCH_FRAME = 45
#: Substeps on each side of the switch the jump is compared with.
NEIGHBOURS = 4
#: A continuous switch moves no tail more than this multiple of the largest move of the
#: neighbouring substeps (less damping alone lets a substep travel ~1.5x further; a rebuild
#: that snaps the hair to rest moves it 5-13x further).
JUMP_RATIO = 2.5
RETUNE = {"k": 40.0, "c": 6.0, "gravity": [0.0, -3.0, 0.0], "hit_radius": 0.015}


def _post(port: int, path: str, body: dict) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = json.loads(r.read())
    conn.close()
    return r.status, data


def _run(tmp_path, change):
    """Run the head turn, apply ``change(session)`` (in a thread, as a client would) after
    frame SWITCH_FRAME; return (tails per substep (n, S, 3), index of the first substep after
    the change, the change's result, the session). ``change=None``: the same run untouched (no
    request, no wait for one)."""
    cfg = RunConfig(source="turn-test", fps=30, duration=2.5, size=(64, 36), output=(f"png:{tmp_path / 'f'}",),
                    service=True, port=0)
    tails: list[np.ndarray] = []
    marks: dict = {}

    def on_frame(info, rig):
        if len(marks) == 0 and session.metrics.frames == SWITCH_FRAME:
            if change is not None:
                th = threading.Thread(target=lambda: marks.setdefault("result", change(session)), daemon=True)
                th.start()
                marks["thread"] = th
                deadline = time.monotonic() + 30
                while session.commands._queue.qsize() == 0 and time.monotonic() < deadline:   # queued: applied before the next frame
                    time.sleep(0.002)
            marks["switch"] = len(tails)

    session = Session(cfg, say=lambda s: None, on_frame=on_frame)
    with session:
        session.loop.on_substep = lambda n, t, rig: tails.append(rig.chains.tails.copy())
        session.run()
    if "thread" in marks:
        marks["thread"].join(timeout=30)
    return np.array(tails), marks["switch"], marks.get("result"), session


def _jump_ratio(tails: np.ndarray, k: int) -> float:
    """The largest tail move into record k (from k-1 to k: the first substep after the change
    when k is the number recorded before it) over the largest move of its neighbours."""
    moves = np.linalg.norm(np.diff(tails, axis=0), axis=2).max(axis=1)   # moves[j]: substep j -> j+1
    around = np.r_[moves[k - 1 - NEIGHBOURS:k - 1], moves[k:k + NEIGHBOURS]]
    return float(moves[k - 1] / around.max())


def test_retuning_through_the_service_is_continuous(tmp_path):
    tails, k, result, session = _run(tmp_path, lambda s: _post(s.service.address[1], "/hair", {"params": RETUNE}))
    status, body = result
    assert status == 200 and body["solver"] == "rest-shape" and body["params"] == RETUNE
    assert set(body["springs"]) == set(session.stage.rig.chains.chain_names)
    for p in body["springs"].values():          # per joint of the spring
        assert set(p["k"]) == {40.0} and set(p["c"]) == {6.0} and p["gravity"] == [[0.0, -3.0, 0.0]] * len(p["k"])
    assert np.all(session.stage.rig.chains.params.k == 40.0)                  # in effect, in place
    assert np.all(session.stage.rig.chains.params.hit_radius == 0.015)         # the raised radius grew to its value
    # the switch and the substeps while the raised hit radius grows (0.5 mm per substep)
    assert max(_jump_ratio(tails, k + j) for j in range(12)) < JUMP_RATIO
    assert np.abs(tails[k] - tails[0]).max() > 1e-3                     # the hair was swinging, not at rest


def test_a_solver_switch_through_the_service_carries_the_motion(tmp_path):
    tails, k, result, session = _run(tmp_path, lambda s: _post(s.service.address[1], "/hair", {"solver": "legacy"}))
    status, body = result
    assert status == 200 and body["solver"] == "legacy" and session.stage.rig.solver == "legacy"
    assert _jump_ratio(tails, k) < JUMP_RATIO


def test_a_rebuild_snaps_and_the_measure_sees_it(tmp_path):
    """The old behaviour (a new rig, hair at rest): the same measure fails it."""
    def rebuild(s):
        return s.commands.call(lambda: s.stage.swap_rig(s.stage.make_rig(s.stage.rig.avatar, s.stage.rig.solver, RETUNE)))

    tails, k, _, _ = _run(tmp_path, rebuild)
    assert _jump_ratio(tails, k) > JUMP_RATIO


def test_bad_params_change_nothing(tmp_path):
    def bad(s):
        before = s.commands.call(lambda: s.stage.rig.chains.params.k.copy())
        res = _post(s.service.address[1], "/hair", {"params": {"k": -1.0}, "solver": "legacy"})
        return res, before, s.commands.call(lambda: (s.stage.rig.solver, s.stage.rig.chains.params.k.copy()))

    _, _, ((status, body), before, (solver, after)), _ = _run(tmp_path, bad)
    assert status == 400 and body["error"] == "hair.k: -1 is below 0"
    assert solver == "rest-shape" and np.array_equal(before, after)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_params_are_refused_even_without_springs(value):
    """The settings are validated whether or not the avatar has springs."""
    from avatars.generate import default_avatar_path
    from avatars import load_avatar
    from runtime.rig import AvatarRig

    rig = AvatarRig(load_avatar(default_avatar_path()))
    with pytest.raises(ValueError, match="hair.k: .* is not a finite number"):
        rig.set_hair({"k": value})


def test_a_raised_hit_radius_grows_by_the_ramp_and_a_lowered_one_drops_at_once():
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from runtime.rig import AvatarRig
    from runtime.rig.rig import HIT_RADIUS_RAMP_M_PER_S
    from tracking.pose_track import PoseSample

    rig = AvatarRig(load_avatar(default_avatar_path()))
    s = PoseSample()
    rig.reset(s)
    old = rig.chains.params.hit_radius.copy()
    assert old.min() < 0.012 < old.max()                                # some springs go up, some down
    rig.set_hair({"hit_radius": 0.012})
    step = HIT_RADIUS_RAMP_M_PER_S * rig.chains.h
    start = np.minimum(0.012, old)                                      # lowered at once, raised not yet
    assert np.array_equal(rig.chains.params.hit_radius, start)
    seen = []
    for _ in range(16):
        rig.substep(s)
        seen.append(rig.chains.params.hit_radius.copy())
    n_up = int(np.ceil((0.012 - old.min()) / step - 1e-9))
    for n, r in enumerate(seen, start=1):
        assert np.allclose(r, np.minimum(0.012, start + n * step), rtol=0, atol=1e-15)
    assert np.all(seen[n_up - 1] == 0.012) and not np.all(seen[n_up - 2] == 0.012) and n_up == 14
    rig.set_hair({"hit_radius": 0.005})                                 # lowered: at once
    assert np.all(rig.chains.params.hit_radius == 0.005)
    rig.set_hair({"hit_radius": 0.012})
    other = rig.with_solver("legacy")                                   # a growing radius goes on growing
    assert np.array_equal(other.chains.params.hit_radius, rig.chains.params.hit_radius)
    other.substep(s)
    assert np.allclose(other.chains.params.hit_radius, 0.005 + step, rtol=0, atol=1e-15)


@pytest.mark.parametrize("hair, message", [
    ({"k": 2e7}, "hair.k: 2e+07 is above 1e+07"),
    ({"c": 1e5}, "hair.c: 100000 is above 10000"),
    ({"gravity": [0.0, -1e4, 0.0]}, "hair.gravity: -10000 is below -1000"),
    ({"hit_radius": 1e6}, "hair.hit_radius: 1e+06 is above 1"),
    ({"c": 30.0}, "spring 'Ahoge' joint node .*not stable.*use c >= 176.9"),
])
def test_out_of_range_or_unstable_settings_are_refused(hair, message):
    import re

    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from runtime.rig import AvatarRig

    rig = AvatarRig(load_avatar(default_avatar_path()))
    k0 = rig.chains.params.k.copy()
    with pytest.raises(ValueError, match=message if ".*" in message else re.escape(message)):
        rig.set_hair(hair)
    assert np.array_equal(rig.chains.params.k, k0) and rig.hair_params == {}


def test_a_spring_pattern_that_matches_nothing_is_a_warning(caplog):
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from runtime.rig import AvatarRig

    rig = AvatarRig(load_avatar(default_avatar_path()), hair={"springs": {"boneGroup0/*": {"k": 90.0},
                                                                          "Bang*": {"k": 90.0, "c": 80.0}}})
    assert rig.hair_warnings() == ["[hair.springs.'boneGroup0/*'] matches no spring of this avatar (springs: Bang1, "
                                   "Bang2, Bang3, Bang4, Bang5, SideLock_L, SideLock_R, Ponytail, Ahoge)"]
    assert "matches no spring" in caplog.text
    assert set(rig.hair_springs()["Bang3"]["k"]) == {90.0}


def test_the_ramp_measures_the_rest_pose_once_at_its_end():
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from runtime.rig import AvatarRig
    from tracking.pose_track import PoseSample

    rig = AvatarRig(load_avatar(default_avatar_path()))
    s = PoseSample()
    rig.reset(s)
    calls = []
    measure = rig.chains._rederive_hit
    rig.chains._rederive_hit = lambda rows: (calls.append(len(rows)), measure(rows))
    rig.set_hair({"hit_radius": 0.012})
    n0 = len(calls)                           # set_hair itself: the lowered radii at once
    for _ in range(16):
        rig.substep(s)
    assert len(calls) == n0 + 1               # the 14 growing substeps: reach only; the last: the measurement
