"""Blendshapes -> VRM presets: sides under mirror, visemes, calibration, perfect sync."""

import numpy as np
import pytest

from tracking.expressions import (
    BLENDSHAPE_INDEX,
    BLENDSHAPE_NAMES,
    NUM_BLENDSHAPES,
    VRM_PRESETS,
    ExpressionCalibration,
    ExpressionMapper,
    ExpressionOptions,
    PerfectSync,
    mirror_name,
)


def face(**values):
    b = np.zeros(NUM_BLENDSHAPES)
    for k, v in values.items():
        b[BLENDSHAPE_INDEX[k]] = v
    return b


def mapped(b, **opts):
    return ExpressionMapper(ExpressionOptions(**opts), ExpressionCalibration({})).map_dict(b)


def test_names_match_mediapipe_layout():
    assert len(BLENDSHAPE_NAMES) == 52 and BLENDSHAPE_NAMES[0] == "_neutral"
    assert BLENDSHAPE_INDEX["eyeBlinkLeft"] == 9 and BLENDSHAPE_INDEX["jawOpen"] == 25
    assert "tongueOut" not in BLENDSHAPE_INDEX
    assert mirror_name("eyeLookInLeft") == "eyeLookInRight" and mirror_name("jawOpen") == "jawOpen"


def test_resting_face_gives_zero_everywhere():
    out = ExpressionMapper().map(face(eyeBlinkLeft=0.05, eyeBlinkRight=0.06, jawOpen=0.01))
    assert out.shape == (len(VRM_PRESETS),)
    assert np.all(out == 0.0)


def test_both_eyes_closed_is_blink_not_wink():
    m = mapped(face(eyeBlinkLeft=0.9, eyeBlinkRight=0.85))
    assert m["blink"] == pytest.approx(0.875) and m["blinkLeft"] == 0 and m["blinkRight"] == 0


@pytest.mark.parametrize("mirror, side", [(True, "blinkRight"), (False, "blinkLeft")])
def test_user_left_wink_drives_the_mirror_correct_side(mirror, side):
    m = mapped(face(eyeBlinkLeft=1.0, eyeBlinkRight=0.0), mirror=mirror)
    other = "blinkLeft" if side == "blinkRight" else "blinkRight"
    assert m[side] == 1.0 and m[other] == 0.0 and m["blink"] == 0.0


@pytest.mark.parametrize("mirror, side", [(True, "lookRight"), (False, "lookLeft")])
def test_user_looking_left_drives_the_mirror_correct_side(mirror, side):
    m = mapped(face(eyeLookOutLeft=0.8, eyeLookInRight=0.8), mirror=mirror)
    other = "lookLeft" if side == "lookRight" else "lookRight"
    assert m[side] > 0.9 and m[other] == 0.0


@pytest.mark.parametrize(
    "shape, viseme",
    [
        (dict(jawOpen=0.9), "aa"),
        (dict(mouthPucker=0.9), "ou"),
        (dict(mouthFunnel=0.9, jawOpen=0.6), "oh"),
        (dict(mouthStretchLeft=0.8, mouthStretchRight=0.8), "ee"),
    ],
)
def test_visemes(shape, viseme):
    m = mapped(face(**shape))
    mouth = {k: m[k] for k in ("aa", "ih", "ou", "ee", "oh")}
    assert max(mouth, key=mouth.get) == viseme
    assert sum(mouth.values()) <= 1.0 + 1e-12


def test_emotions_and_switch():
    assert mapped(face(mouthSmileLeft=0.95, mouthSmileRight=0.95))["happy"] == 1.0
    assert mapped(face(browDownLeft=0.8, browDownRight=0.8))["angry"] == 1.0
    assert mapped(face(mouthSmileLeft=0.95, mouthSmileRight=0.95), emotions=False)["happy"] == 0.0


def test_calibration_from_samples_fits_a_users_range():
    rng = np.random.default_rng(0)
    n = 1000
    b = np.zeros((n, NUM_BLENDSHAPES))
    # this user's open eyes read 0.30, closed 0.55 (blinks 3 % of the time); mouth 0.05..0.4
    closed = rng.random(n) < 0.03
    b[:, BLENDSHAPE_INDEX["eyeBlinkLeft"]] = np.where(closed, 0.55, 0.30) + rng.normal(0, 0.01, n)
    b[:, BLENDSHAPE_INDEX["eyeBlinkRight"]] = b[:, BLENDSHAPE_INDEX["eyeBlinkLeft"]]
    b[:, BLENDSHAPE_INDEX["jawOpen"]] = rng.uniform(0.05, 0.4, n)
    cal = ExpressionCalibration.from_samples(b)
    lo, hi = cal.ranges["eyeBlinkLeft"]
    assert 0.30 <= lo <= 0.33 and hi >= lo + 0.2
    m = ExpressionMapper(calibration=cal)
    assert m.map_dict(face(eyeBlinkLeft=0.30, eyeBlinkRight=0.30))["blink"] == 0.0
    assert m.map_dict(face(eyeBlinkLeft=0.56, eyeBlinkRight=0.56))["blink"] > 0.9
    # the default (uncalibrated) ranges read this user's open eyes as half closed
    assert ExpressionMapper().map_dict(face(eyeBlinkLeft=0.30, eyeBlinkRight=0.30))["blink"] > 0.2
    with pytest.raises(ValueError, match="shape"):
        ExpressionCalibration.from_samples(np.zeros((3, 4)))


def test_perfect_sync_passthrough_with_mirror():
    b = face(eyeBlinkLeft=0.9, eyeBlinkRight=0.1, jawOpen=0.4, mouthLeft=0.3)
    avatar = ["EyeBlinkLeft", "eyeBlinkRight", "jawOpen", "mouthRight", "Joy", "_neutral"]
    ps = PerfectSync(avatar, mirror=True)
    assert ps.names == ["EyeBlinkLeft", "eyeBlinkRight", "jawOpen", "mouthRight"]
    assert ps.as_dict(b) == {"EyeBlinkLeft": 0.1, "eyeBlinkRight": 0.9, "jawOpen": 0.4, "mouthRight": 0.3}
    assert PerfectSync(avatar, mirror=False).as_dict(b)["EyeBlinkLeft"] == 0.9
