"""The session's controller (runtime/controller.py) on a fake host: what each endpoint asks
of the stage, the try-on switcher and the run, on which side of the command queue, and that a
bad request changes nothing. No GL context, no numba (the live-session versions that measure
the render thread are in test_controller.py)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace

from runtime.commands import RenderIdle
from runtime.rig.hair_params import resolve_hair

import pytest

from runtime import controller as controller_module
from runtime.config import RunConfig
from runtime.controller import SessionController
from runtime.errors import ConfigError, SettingsError
from runtime.live_settings import LiveSettings


class Commands:
    """The command queue with the render thread played by a thread of its own."""

    def __init__(self):
        self.threads = []

    def submit(self, fn) -> Future:
        fut: Future = Future()

        def run():
            self.threads.append(threading.get_ident())
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                fut.set_exception(exc)

        th = threading.Thread(target=run)
        th.start()
        th.join()
        return fut

    def call(self, fn, timeout_s=10.0):
        return self.submit(fn).result()


def fake_rig(avatar, solver="rest-shape", hair=None):
    return SimpleNamespace(avatar=avatar, solver=solver, hair_params=dict(hair or {}), motion=None, chains=None,
                           world="world", warmed=False, warm_up=lambda: None,
                           hair_springs=lambda: {"Bang": {"k": [1.0]}}, hair_warnings=lambda: [],
                           resolve_hair=lambda hair, gate=None: resolve_hair(hair, ("Bang",), gate=gate))


class FakeUpload:
    """The GPU upload's steps (render.staged.AvatarUpload): done at the second step."""

    def __init__(self, avatar):
        self.avatar, self.threads, self.cancelled = avatar, [], False

    def step(self):
        self.threads.append(threading.get_ident())
        return len(self.threads) >= 2

    def cancel(self):
        self.cancelled = True


class FakeStage:
    def __init__(self):
        self.settings = LiveSettings(RunConfig(hair={"k": 50.0}))
        self.rig = fake_rig(SimpleNamespace(path="/a/first.vrm", expressions={"happy": 1, "sad": 2}))
        self.companion = None
        self.compare = False
        self.motion_setup = "idle program"
        self.log = []
        self.uploads = []

    def avatar_name(self):
        return self.rig.avatar.path

    def make_rig(self, avatar, solver, hair=None, *, play=True):
        self.log.append(("make_rig", solver, threading.get_ident()))
        return fake_rig(avatar, solver, self.settings.start_hair if hair is None else hair)

    def make_companion(self, rig):
        self.log.append(("make_companion", threading.get_ident()))
        return fake_rig(rig.avatar, "legacy", rig.hair_params)

    def framing(self, avatar, world):
        self.log.append(("framing", threading.get_ident()))
        return "framing"

    def rig_inputs(self):
        return (self.rig.solver, self.motion_setup, self.settings.start_hair, self.settings.calibration)

    def begin_upload(self, avatar, framing=None):
        self.uploads.append(FakeUpload(avatar))
        return self.uploads[-1]

    def swap_rig(self, rig, *, framing=None, companion=None, keep_hair=False, upload=None):
        self.log.append(("swap_rig", rig.solver, framing, companion is not None, threading.get_ident(), upload))
        self.rig, self.companion = rig, companion

    def set_base(self, path, avatar):
        self.log.append(("set_base", Path(path)))

    def switch_solver(self, solver):
        self.log.append(("switch_solver", solver))
        self.rig = fake_rig(self.rig.avatar, solver, self.rig.hair_params)

    def set_hair(self, hair, resolved=None):
        self.log.append(("set_hair", hair))
        self.rig.hair_params = dict(hair)

    def load_motion(self, clip, *, loop=None):
        self.log.append(("load_motion", clip, loop, threading.get_ident()))
        return f"setup of {clip}"

    def set_motion(self, setup, *, speed=None, layer=None):
        self.log.append(("set_motion", setup, speed, layer))
        self.rig.motion = SimpleNamespace(state=lambda: {"playing": setup})

    def set_motion_options(self, *, speed=None, layer=None):
        self.log.append(("set_motion_options", speed, layer))

    def set_calibration(self, ranges):
        self.log.append(("set_calibration", ranges, threading.get_ident()))

    def hair_resets(self):
        return 3


class FakeHost:
    def __init__(self):
        self.commands = Commands()
        self.render_idle = RenderIdle()
        self.stage = FakeStage()
        self.tryon = SimpleNamespace(current="bob", state=lambda: {"current": "bob"},
                                     rebase=lambda: self.log.append("rebase") or "bob")
        self.output_control = SimpleNamespace(
            run_outputs=lambda: ["video:x.mp4"], state=lambda: {"vcam": {"on": False}},
            set_background=lambda bg: self.log.append(("background", bg)),
            set_vcam=lambda on, device: {"vcam": {"on": on, "device": device}},
            start=lambda kind, name: {"started": kind, "name": name}, stop=lambda kind: {"stopped": kind})
        self.log = []

    def live_status(self):
        return {"fps": 30.0, "paused": False, "face_found": True}

    def recenter(self):
        self.log.append(("recenter", threading.get_ident()))

    def frame_png(self):
        return b"png"


@pytest.fixture()
def host():
    return FakeHost()


def test_status_is_the_run_and_the_stage(host):
    out = SessionController(host).status()
    assert list(out) == ["fps", "solver", "avatar", "paused", "face_found", "hairstyle", "hair_params"]
    assert out == {"fps": 30.0, "solver": "rest-shape", "avatar": "/a/first.vrm", "paused": False,
                   "face_found": True, "hairstyle": "bob", "hair_params": {}}


def test_recenter_and_the_frame_run_on_the_render_thread(host):
    ctl = SessionController(host)
    ctl.recenter()
    assert ctl.frame_png() == b"png"
    assert host.log == [("recenter", host.commands.threads[0])] and threading.get_ident() not in host.commands.threads


def test_an_avatar_is_prepared_on_the_calling_thread_and_swapped_on_the_render_thread(host, monkeypatch):
    monkeypatch.setattr(controller_module, "load_avatar",
                        lambda path, gate=None: SimpleNamespace(path=str(path), springs=[1, 2], warnings=["w"]))
    st = host.stage
    me = threading.get_ident()
    out = SessionController(host).load_avatar(Path("/a/godette.vrm"))
    assert out == {"avatar": "/a/godette.vrm", "springs": 2, "warnings": ["w"], "hairstyle_pending": "bob"}
    (_, solver, made_on), (_, framed_on), swap, base = st.log
    assert solver == "rest-shape" and made_on == framed_on == me
    assert swap[:4] == ("swap_rig", "rest-shape", "framing", False) and swap[4] != me
    # the GPU upload stepped on the render thread until done, handed over with the rig
    (upload,) = st.uploads
    assert swap[5] is upload and upload.avatar.path == "/a/godette.vrm" and not upload.cancelled
    assert len(upload.threads) == 2 and me not in upload.threads
    assert base == ("set_base", Path("/a/godette.vrm")) and host.log == ["rebase"]
    assert st.rig.hair_params == {"k": 50.0}          # what a new avatar starts with


def test_compare_mode_prepares_the_companion_too(host, monkeypatch):
    monkeypatch.setattr(controller_module, "load_avatar",
                        lambda path, gate=None: SimpleNamespace(path=str(path), springs=[], warnings=[]))
    host.stage.compare = True
    SessionController(host).load_avatar(Path("/a/b.vrm"))
    names = [e[0] for e in host.stage.log]
    assert names == ["make_rig", "framing", "make_companion", "swap_rig", "set_base"]
    assert host.stage.log[3][3] is True                # the prepared companion is handed over


def test_a_rig_input_changed_during_the_load_rebuilds_on_the_render_thread(host, monkeypatch):
    st = host.stage

    def load_then_calibrate(path, gate=None):
        st.settings.set_calibration({"eyeBlinkLeft": [0.1, 0.6]})      # POST /calibrate meanwhile
        return SimpleNamespace(path=str(path), springs=[], warnings=[])

    monkeypatch.setattr(controller_module, "load_avatar", load_then_calibrate)
    SessionController(host).load_avatar(Path("/a/b.vrm"))
    makes = [e for e in st.log if e[0] == "make_rig"]
    # the rebuild runs in the swap, the last command submitted (begin_upload and the upload's
    # steps come before it; a finished thread's ident may be reused, so compare with the last)
    assert len(makes) == 2 and makes[1][2] == host.commands.threads[-1]
    assert makes[1][2] != threading.get_ident()
    swap = next(e for e in st.log if e[0] == "swap_rig")
    assert swap[3] is False                            # no companion prepared under the old inputs


def test_a_background_change_does_not_rebuild(host, monkeypatch):
    st = host.stage

    def load_then_change(path, gate=None):
        st.settings.set_background("#102030")          # not a rig input
        return SimpleNamespace(path=str(path), springs=[], warnings=[])

    monkeypatch.setattr(controller_module, "load_avatar", load_then_change)
    SessionController(host).load_avatar(Path("/a/b.vrm"))
    assert len([e for e in st.log if e[0] == "make_rig"]) == 1


def test_bad_hair_params_change_nothing(host):
    ctl = SessionController(host)
    with pytest.raises(SettingsError, match="hair.k: -1 is below 0"):
        ctl.set_hair("legacy", {"k": -1.0})
    assert host.stage.log == []                        # validated before the solver switch
    out = ctl.set_hair("legacy", {"k": 60.0})
    assert host.stage.log == [("switch_solver", "legacy"), ("set_hair", {"k": 60.0})]
    assert out == {"solver": "legacy", "params": {"k": 60.0}, "springs": {"Bang": {"k": [1.0]}}, "warnings": []}


def test_a_clip_is_loaded_on_the_calling_thread_and_played_on_the_render_thread(host):
    ctl = SessionController(host)
    assert ctl.motion() == {"playing": None}
    out = ctl.set_motion("walk.vrma#Walk", speed=1.5, loop=True)
    (_, clip, loop, loaded_on), played = host.stage.log
    assert (clip, loop, loaded_on) == ("walk.vrma#Walk", True, threading.get_ident())
    assert played == ("set_motion", "setup of walk.vrma#Walk", 1.5, None) and out == {"playing": "setup of walk.vrma#Walk"}
    ctl.set_motion(None, layer="override")
    assert host.stage.log[-1] == ("set_motion_options", None, "override")


def test_hairstyles_go_to_the_switcher(host):
    fut: Future = Future()
    asked = []
    host.tryon.request = lambda path, name: asked.append((path, name)) or fut
    ctl = SessionController(host)
    assert ctl.hairstyles() == {"current": "bob"}
    assert ctl.set_hairstyle(Path("/h/short.obj"), "short", wait=False) == {"pending": "short", "switching": True}
    fut.set_result({"current": "short"})
    assert ctl.set_hairstyle(Path("/h/short.obj"), "short") == {"current": "short"}
    assert asked == [(Path("/h/short.obj"), "short")] * 2


def test_the_panels_settings(host):
    ctl = SessionController(host)
    assert ctl.current_avatar() == "/a/first.vrm" and ctl.expression_names() == ["happy", "sad"]
    with pytest.raises(SettingsError, match="window key"):
        ctl.set_expressions({"keys": {"happy": "r"}})
    ctl.set_expressions({"mode": "hold"})
    assert ctl.expressions() == {"mode": "hold"}
    ranges = {"eyeBlinkLeft": [0.1, 0.6]}
    assert ctl.set_calibration(ranges) == {"calibration": ranges}
    assert host.stage.log == [("set_calibration", ranges, host.commands.threads[-1])]
    assert ctl.hair() == {"solver": "rest-shape", "solvers": ["rest-shape", "legacy", "vrm"], "params": {},
                          "springs": {"Bang": {"k": [1.0]}}, "steps": 0, "resets": 3}


def test_outputs_go_to_the_output_control(host):
    ctl = SessionController(host)
    assert ctl.outputs() == {"background": "#202430", "outputs": ["video:x.mp4"], "vcam": {"on": False}}
    assert ctl.set_background("green") == {"background": "green"} and host.log == [("background", "green")]
    assert ctl.set_vcam(True, "cam") == {"vcam": {"on": True, "device": "cam"}}
    assert ctl.record("video", True, "a.mp4") == {"started": "video", "name": "a.mp4"}
    assert ctl.record("poses", False) == {"stopped": "poses"}


def test_save_config_writes_the_live_settings(host, tmp_path, monkeypatch):
    from runtime.config import load_toml

    monkeypatch.chdir(tmp_path)
    st = host.stage
    st.settings.set_hair({"k": 70.0})                  # retuned (POST /hair)
    st.settings.set_expressions({"mode": "hold"})
    out = SessionController(host).save_config()
    path = tmp_path / "swaycam.toml"
    assert out == {"path": str(path), "hair": {"k": 70.0}, "expressions": {"mode": "hold"}, "calibration": {}}
    back = load_toml(path)
    assert back.hair == {"k": 70.0} and back.expressions == {"mode": "hold"}
    assert st.settings.start_hair == {"k": 70.0} and st.settings.config_path == "swaycam.toml"
    path.write_text("not = [toml")
    with pytest.raises(ConfigError, match="cannot save swaycam.toml: "):
        SessionController(host).save_config()
