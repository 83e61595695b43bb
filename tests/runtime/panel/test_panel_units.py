"""The panel's pieces without a browser: fades, the emotion override, hotkey settings, the
config writer's round trip through load_toml, calibration ranges."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.config import ConfigError, load_toml
from runtime.panel.calibration import MIN_SPAN, CalibrationCollector
from runtime.panel.config_file import save_tables
from runtime.panel.expressions import ExpressionOverlay
from runtime.panel.preview import MAX_DEFER_FRAMES, PreviewTap
from runtime.panel.settings import check_expressions, hotkeys

WEIGHT_TOL = 1e-12


class Clock:
    def __init__(self):
        self.t = 0

    def __call__(self):
        return self.t


def test_fade_in_and_out_are_linear_and_override_the_tracked_emotion():
    c = Clock()
    ov = ExpressionOverlay(c)
    tracked = {"happy": 0.0, "sad": 0.8, "blink": 0.5}
    assert ov.apply(tracked) is tracked                     # nothing triggered: untouched
    ov.trigger("happy", 1.0, fade_ms=100)
    c.t = 25_000_000                                        # a quarter of the fade
    out = ov.apply(tracked)
    assert abs(out["happy"] - 0.25) < WEIGHT_TOL and abs(out["sad"] - 0.8 * 0.75) < WEIGHT_TOL
    assert out["blink"] == 0.5                              # blink stays tracked (the renderer's override rules)
    c.t = 100_000_000
    out = ov.apply(tracked)
    assert out["happy"] == 1.0 and out["sad"] == 0.0
    ov.trigger("happy", 0.0, fade_ms=200)                   # release: fades out from 1
    c.t = 150_000_000
    assert abs(ov.weights()["happy"] - 0.75) < WEIGHT_TOL
    c.t = 300_000_000
    assert ov.weights() == {} and ov.apply(tracked) is tracked
    with pytest.raises(ValueError, match="weight"):
        ov.trigger("happy", 1.5)


def test_hotkeys_default_and_configured():
    names = ["blink", "aa", "happy", "sad", "Wink"]
    assert hotkeys({}, names) == {"f1": "happy", "f2": "sad", "f3": "Wink"}
    assert hotkeys({"keys": {"sad": "J", "nope": "k"}}, names) == {"j": "sad"}
    with pytest.raises(ValueError, match="window key"):
        check_expressions({"keys": {"happy": "r"}})
    with pytest.raises(ValueError, match="also the key of"):
        check_expressions({"keys": {"happy": "j", "sad": "J"}})


def test_saved_tables_load_back_through_config(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('fps = 24\nbackground = "green"\n[hair]\nk = 1.0\n')
    hair = {"k": 60.5, "c": 4.0, "gravity": [0.0, -9.81, 0.0], "springs": {"Bang*": {"k": 90.0}, "a b": {"c": 2.0}}}
    expr = {"mode": "hold", "fade_ms": 80, "keys": {"happy": "f1"}}
    cal = {"eyeBlinkLeft": [0.1, 0.6]}
    save_tables(cfg, {"hair": hair, "expressions": expr, "calibration": cal})
    back = load_toml(cfg)
    assert back.hair == hair and back.expressions == expr and back.calibration == cal
    assert back.fps == 24 and back.background == "green" and back.config_path == str(cfg)
    save_tables(cfg, {"hair": {}})                           # an empty table removes it
    assert load_toml(cfg).hair == {}
    cfg.write_text("[calibration]\neyeBlinkLeft = [0.6, 0.1]\n")
    with pytest.raises(ConfigError, match="calibration.eyeBlinkLeft"):
        load_toml(cfg)


def test_calibration_ranges_from_the_three_phases():
    from tracking.expressions import BLENDSHAPE_INDEX

    col = CalibrationCollector()
    rows = {"neutral": (0.1, 0.05), "blink": (0.9, 0.05), "mouth": (0.1, 0.7)}
    for phase, (blink, jaw) in rows.items():
        col.start(phase)
        for _ in range(10):
            b = np.zeros(52)
            b[BLENDSHAPE_INDEX["eyeBlinkLeft"]] = b[BLENDSHAPE_INDEX["eyeBlinkRight"]] = blink
            b[BLENDSHAPE_INDEX["jawOpen"]] = jaw
            col.feed(b, True)
        col.feed(np.ones(52), False)                         # no face: not counted
    col.stop()
    assert col.ranges() == {"eyeBlinkLeft": [0.1, 0.9], "eyeBlinkRight": [0.1, 0.9], "jawOpen": [0.05, 0.7]}
    col.start("blink")                                       # a phase run again without a face
    with pytest.raises(ValueError, match="'blink' has 0 frames"):
        col.ranges()
    assert MIN_SPAN == 0.2



class FakeTap:
    """A frame tap whose copy becomes ready after ``ready_after`` polls."""

    def __init__(self, ready_after: int):
        self.size = (4, 2)
        self.ready_after = ready_after
        self.polls = 0
        self.requests = []
        self.takes = 0

    @property
    def pending(self):
        return bool(self.requests) and self.takes < len(self.requests)

    @property
    def ready(self):
        self.polls += 1
        return self.polls > self.ready_after

    def request(self, tag):
        self.requests.append(tag)
        self.polls = 0

    def take(self, out):
        self.takes += 1
        out[:] = 7
        return out, self.requests[-1]

    def release(self):
        pass


@pytest.mark.parametrize("ready_after, taken_at", [(0, 1), (2, 3), (50, 1 + MAX_DEFER_FRAMES)])
def test_preview_takes_a_frame_once_the_gpu_finished_it_or_after_max_defer_frames(ready_after, taken_at):
    tap = PreviewTap(max_fps=1000.0)
    fake = tap._tap = FakeTap(ready_after)
    tap.connect()
    try:
        tap.frame_drawn(None, 0)
        assert fake.requests == [0]
        k = 0
        while not fake.takes:
            k += 1
            tap.frame_drawn(None, k * 10_000_000)
        assert k == taken_at and tap.frames_read == 1
        assert tap.wait_next(0, timeout_s=5.0)[1][:2] == b"\xff\xd8"      # the encoder made a JPEG
    finally:
        tap.close()


#: a tracked face making each emotion (MediaPipe blendshapes, both sides), after
#: tracking.expressions' emotion ramps (each saturates below these values)
EMOTION_FACES = {
    "happy": {"mouthSmileLeft": 0.9, "mouthSmileRight": 0.9},
    "angry": {"browDownLeft": 0.8, "browDownRight": 0.8},
    "sad": {"mouthFrownLeft": 0.6, "mouthFrownRight": 0.6, "browInnerUp": 0.4},
    "relaxed": {"eyeSquintLeft": 0.95, "eyeSquintRight": 0.95},
    "surprised": {"browOuterUpLeft": 0.7, "browOuterUpRight": 0.7, "eyeWideLeft": 0.5, "eyeWideRight": 0.5},
}


def test_every_emotion_has_a_hotkey_and_a_face_morph_on_the_default_avatar():
    """Issue 34 finding 9: the generated default had one emotion (happy). Each of the five now
    gets a default hotkey, and the tracker's emotion and the panel's button both reach a morph
    target of the face at full weight."""
    from avatars import load_avatar
    from avatars.generate import build_default_avatar
    from render import expression_weights
    from tracking.expressions import BLENDSHAPE_INDEX, NUM_BLENDSHAPES, ExpressionMapper

    avatar = load_avatar("default.vrm", build_default_avatar())
    assert hotkeys({}, avatar.expressions) == {"f1": "happy", "f2": "angry", "f3": "sad", "f4": "relaxed",
                                              "f6": "surprised"}
    k = next(i for i, mi in enumerate(avatar.mesh_instances) if avatar.meshes[mi.mesh].name == "Face")
    names = avatar.meshes[avatar.mesh_instances[k].mesh].target_names
    mapper = ExpressionMapper()
    for emotion, values in EMOTION_FACES.items():
        b = np.zeros(NUM_BLENDSHAPES)
        for name, v in values.items():
            b[BLENDSHAPE_INDEX[name]] = v
        tracked = mapper.map_dict(b)
        assert tracked[emotion] == 1.0, (emotion, tracked)
        weights = expression_weights(avatar, {emotion: tracked[emotion]})[k]
        assert weights[names.index(emotion)] == 1.0 and np.count_nonzero(weights) == 1, (emotion, weights)
