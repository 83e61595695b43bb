"""Switching body motion in a running session (issue 15 item 5): ``POST /motion`` plays a
clip from the motion folder from the next substep with a cross-fade (no jump in the hair);
a clip that cannot be loaded or played answers 422 and the previous clip keeps playing;
paths outside the folder are refused; the ``m`` key steps through the clips of the
``--motion`` file."""

from __future__ import annotations

import http.client
import json
import threading
import time

import numpy as np
import pytest

from runtime.config import RunConfig
from runtime.config_sections import MotionSection
from runtime.session import Session
from runtime.stage import Stage
from tests.conftest import asset

UAL_DIR = ("anim", "ual")
UAL_FILE = "AnimationLibrary_Godot_Standard.gltf"
SWITCH_FRAME = 24
#: The switch moves no tail more than this multiple of its neighbouring substeps' largest move.
JUMP_RATIO = 2.5
NEIGHBOURS = 4


def _call(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = json.loads(r.read())
    conn.close()
    return r.status, data


@pytest.fixture()
def motion_dir(tmp_path):
    d = tmp_path / "clips"
    d.mkdir()
    for name in (UAL_FILE, "AnimationLibrary_Godot_Standard.bin"):
        (d / name).write_bytes(asset(*UAL_DIR, name).read_bytes())   # a copy: symlinks out of the folder are refused
    (d / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n")
    (tmp_path / "outside.vrma").write_bytes(asset("anim", "Jump.vrma").read_bytes())
    return d


def test_post_motion_switches_clips_live_and_a_broken_clip_keeps_the_previous(tmp_path, motion_dir):
    cfg = RunConfig(source="turn-test", fps=30, duration=2.0, size=(64, 36), output=(f"png:{tmp_path / 'f'}",),
                    service=True, port=0, motion_dir=str(motion_dir))
    playing, tails, answers = [], [], {}
    marks = {}

    def requests(session):
        port = session.service.address[1]
        answers["walk"] = _call(port, "POST", "/motion", {"clip": f"{UAL_FILE}#Walk_Loop", "speed": 1.2})
        answers["broken"] = _call(port, "POST", "/motion", {"clip": "broken.bvh"})
        answers["outside"] = _call(port, "POST", "/motion", {"clip": "../outside.vrma"})
        answers["missing"] = _call(port, "POST", "/motion", {"clip": f"{UAL_FILE}#Moonwalk"})
        answers["state"] = _call(port, "GET", "/motion")

    def on_frame(info, rig):
        playing.append(rig.motion.playing)
        if session.metrics.frames == SWITCH_FRAME and "thread" not in marks:
            th = threading.Thread(target=requests, args=(session,), daemon=True)
            th.start()
            marks["thread"] = th
            deadline = time.monotonic() + 60
            while session.commands._queue.qsize() == 0 and time.monotonic() < deadline:
                time.sleep(0.002)
            marks["switch"] = len(tails)      # the first request (the walk) is applied before the next frame

    session = Session(cfg, say=lambda s: None, on_frame=on_frame)
    with session:
        session.loop.on_substep = lambda n, t, rig: tails.append(rig.chains.tails.copy())
        session.run()
    marks["thread"].join(timeout=120)
    assert answers["walk"][0] == 200 and answers["walk"][1]["program"] == ["Walk_Loop"]
    assert answers["broken"][0] == 422 and "broken.bvh" in answers["broken"][1]["error"]
    assert answers["outside"][0] == 403
    assert answers["missing"][0] == 422 and "Moonwalk" in answers["missing"][1]["error"]
    assert answers["state"][1]["playing"] == "Walk_Loop" and answers["state"][1]["speed"] == pytest.approx(1.2)
    assert playing[0] == "idle" and playing[-1] == "Walk_Loop"
    # the cross-fade: no tail jumps at the switch
    t = np.array(tails)
    k = marks["switch"]
    moves = np.linalg.norm(np.diff(t, axis=0), axis=2).max(axis=1)
    around = np.r_[moves[k - 1 - NEIGHBOURS:k - 1], moves[k:k + NEIGHBOURS]]
    assert moves[k - 1] <= JUMP_RATIO * around.max()


def _stage(cfg: RunConfig) -> Stage:
    """The stage of a run of ``cfg`` with its first rig on it (no loop, drawer or GL: the
    motion calls below touch neither)."""
    stage = Stage(cfg, say=lambda s: None)
    stage.attach(stage.first_rig(None), loop=None, drawer=None)
    return stage


def test_the_m_key_steps_through_the_clips_of_the_motion_file():
    stage = _stage(RunConfig(motion=MotionSection(clip=f"{asset(*UAL_DIR, UAL_FILE)}#Idle_Loop")))
    assert stage.rig.motion.program[0].name == "Idle_Loop"
    names = [stage.next_motion() for _ in range(3)]
    assert names == ["A_TPose", "Crouch_Fwd_Loop", "Crouch_Idle_Loop"]
    assert stage.rig.motion.program[0].name == "Crouch_Idle_Loop" and stage.motion_setup.label == "Crouch_Idle_Loop"


def test_motion_none_has_no_body_motion():
    from runtime.rig import MotionError

    stage = _stage(RunConfig(motion=MotionSection(clip="none")))
    assert stage.rig.motion is None
    with pytest.raises(MotionError, match="no body motion"):
        stage.set_motion_options(speed=2.0)
    with pytest.raises(MotionError, match="no body motion"):
        stage.next_motion()
