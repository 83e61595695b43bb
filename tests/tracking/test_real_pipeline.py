"""Tracker + pose filter on real frames: jitter and lag of the default filter settings
(measured here, reported in the tracking notes), and the lost-face behaviour on the
selfie clip with frames blanked in the middle."""

import math

import numpy as np
import pytest
from PIL import Image

from avatars.math3d import quat_angle, quat_from_axis_angle
from tracking.eval.bench import filter_report, lag_ms, rotation_jitter_deg
from tracking.face_tracker import FaceTracker, FaceTrackerOptions
from tracking.pose_filter import PoseFilter, PoseFilterOptions
from tracking.video import VideoFileSource

FRAME_30 = 33_333_333
H = 1_000_000_000 // 120
SENSOR_NOISE = 3.0  # grey levels, std: a typical webcam at indoor light
# Noisy still, default tracker (adaptive: MediaPipe's one-face tracking, whose next crop comes
# from the last frame's landmarks), frames 20-59: raw 0.061 deg, filtered 0.033 deg, 1.84x;
# lag 44 ms (selfie), 11 ms (android). With num_faces=4 detecting on every frame (the bounds
# before issue 20: raw >= 0.25, filtered <= 0.16, >= 2.5x) it was raw 0.36, filtered 0.14,
# 2.61x: a fresh detection box per frame adds jitter the filter removes more of, because it
# changes from frame to frame (lag-1 autocorrelation of yaw/pitch/roll 0.15/0.33/0.19), where
# one-face tracking's jitter is slower (0.74/0.86/0.62) and more of it is below the cutoff.
MIN_RAW_JITTER_DEG = 0.04       # the sensor noise makes jitter to remove (noise-free: 0.012 deg)
MAX_FILTERED_JITTER_DEG = 0.05
MIN_ATTENUATION = 1.5
# A noise-free still repeated: num_faces=4 detects on every frame and gives the same pose on
# every frame (0). One-face tracking (the default; raw MediaPipe num_faces=1 gives exactly
# this) crops each frame from the last one's landmarks, so the pose settles over the first
# frames (steps 0.18, 0.35, 0.24, 0.15, 0.08 deg, then < 0.03): after STILL_SETTLE_FRAMES the
# RMS about the mean over frames 10-39 is 0.017 deg. A probe that replaced the output (the
# first adaptive version) stepped ~0.85 deg at frames 15 and 30.
STILL_SETTLE_FRAMES = 10
STILL_FRAMES = 40
MAX_SETTLED_STILL_JITTER_DEG = 0.03
MAX_LAG_MS = {"selfie": 55.0, "android": 60.0}
STILL_DEG_S = 1e-9  # rounding only
FILTER_LAG_DEG = 3.0  # the head moves < 60 deg/s here: 50 ms of lag
MIN_LAG_MS = 10.0  # a smoothing filter must lag: a zero here means the measure is broken


def track_images(images, model_path, **options):
    with FaceTracker(FaceTrackerOptions(model_path=model_path, **options)) as tr:
        return [tr.process(img, k * FRAME_30, index=k) for k, img in enumerate(images)]


@pytest.fixture(scope="module")
def astronaut_still(astronaut_png, model_path):
    img = np.asarray(Image.open(astronaut_png).convert("RGB")).astype(np.float64)
    rng = np.random.default_rng(0)
    noisy = [np.clip(img + rng.normal(0, SENSOR_NOISE, img.shape), 0, 255).astype(np.uint8) for _ in range(60)]
    return track_images(noisy, model_path)


def test_still_image_without_noise_has_no_model_jitter(astronaut_png, model_path):
    img = np.asarray(Image.open(astronaut_png).convert("RGB"))
    fixed = track_images([img] * 8, model_path, adaptive=False)          # detection on every frame
    assert rotation_jitter_deg(np.array([o.rotation for o in fixed[2:]])) < 1e-6
    obs = track_images([img] * STILL_FRAMES, model_path)                  # the default: one-face tracking
    assert all(o.found for o in obs)
    assert rotation_jitter_deg(np.array([o.rotation for o in obs[STILL_SETTLE_FRAMES:]])) \
        <= MAX_SETTLED_STILL_JITTER_DEG


def test_default_filter_jitter_and_lag(astronaut_still, selfie_tracked, android_tracked):
    rep = filter_report(astronaut_still, {"selfie": selfie_tracked.chosen, "android": android_tracked.chosen})
    assert all(o.found for o in astronaut_still)
    assert rep.jitter_raw_deg >= MIN_RAW_JITTER_DEG
    assert rep.jitter_filtered_deg <= MAX_FILTERED_JITTER_DEG
    assert rep.jitter_raw_deg / rep.jitter_filtered_deg >= MIN_ATTENUATION
    for clip, bound in MAX_LAG_MS.items():
        assert MIN_LAG_MS <= rep.lag_ms[clip] <= bound, (clip, rep.lag_ms[clip])


def test_lag_measure_recovers_a_known_delay():
    t = np.arange(0, 3_000_000_000, 40_000_000)
    raw = np.sin(2 * np.pi * 0.7 * t * 1e-9)
    assert lag_ms(t, raw, np.sin(2 * np.pi * 0.7 * (t * 1e-9 - 0.037))) == 37.0
    qs = np.array([quat_from_axis_angle([0, 1, 0], 0.01 * k) for k in range(5)])
    assert rotation_jitter_deg(qs) == pytest.approx(math.degrees(np.sqrt(np.mean((0.01 * (np.arange(5) - 2)) ** 2))), rel=1e-3)


@pytest.fixture(scope="module")
def blanked_selfie(selfie_mp4, model_path):
    """Frames 0..124 of the selfie clip (5 s) with 50..87 (1.52 s) blanked to black."""
    obs = []
    with FaceTracker(FaceTrackerOptions(model_path=model_path)) as tr, VideoFileSource(selfie_mp4) as src:
        for f in src:
            if f.index >= 125:
                break
            img = np.zeros_like(f.image) if 50 <= f.index < 88 else f.image
            obs.append(tr.process(img, f.timestamp_ns, index=f.index))
    return obs


def test_lost_face_holds_eases_and_reacquires_smoothly(blanked_selfie):
    obs = blanked_selfie
    assert [o.found for o in obs] == [not 50 <= k < 88 for k in range(125)]
    opts = PoseFilterOptions(recenter_at_start=False)  # far from neutral: a real ease to watch
    lost = opts.lost
    pf = PoseFilter(opts)
    rows, k = [], 0
    for n in range(5_200_000_000 // H):
        t = n * H
        while k < len(obs) and obs[k].timestamp_ns <= t:
            pf.push(obs[k])
            k += 1
        s = pf.sample(t)
        rows.append((t - opts.delay_ns, s.rotation.copy(), s.found))  # the time the pose stands for
    t_lf, t_r = obs[49].timestamp_ns, obs[88].timestamp_ns
    speed = [(b[0], math.degrees(quat_angle(a[1], b[1])) / (H * 1e-9)) for a, b in zip(rows, rows[1:])]

    def phase(lo, hi):
        return [v for t, v in speed if lo < t <= hi]

    def angle_at(t):
        return math.degrees(quat_angle(min(rows, key=lambda r: abs(r[0] - t))[1], [0, 0, 0, 1]))

    theta = angle_at(t_lf)
    assert theta > 10.0  # the held pose is well away from neutral
    # hold: not a hair of motion for hold_s
    assert max(phase(t_lf + H, t_lf + int(lost.hold_s * 1e9))) < STILL_DEG_S
    # ease: smoothstep, peak speed 1.5 * theta / ease_s
    ease = phase(t_lf + int(lost.hold_s * 1e9), t_lf + int((lost.hold_s + lost.ease_s) * 1e9))
    assert max(ease) <= 1.5 * theta / lost.ease_s * 1.05
    assert angle_at(t_r - 10_000_000) < 1e-9  # fully neutral before the face is back
    assert not any(r[2] for r in rows if t_lf + 300_000_000 < r[0] < t_r)
    # re-acquire: starts at neutral (no jump), then at most the blend speed plus the live motion
    first_back = next(r for r in rows if r[0] >= t_r)
    assert math.degrees(quat_angle(first_back[1], [0, 0, 0, 1])) < 0.5
    live_speed = max(math.degrees(quat_angle(a.rotation, b.rotation)) / 0.04 for a, b in zip(obs[88:], obs[89:]))
    back = angle_at(t_r + int(lost.reacquire_s * 1e9))
    assert max(phase(t_r, t_r + int(lost.reacquire_s * 1e9))) <= 1.5 * back / lost.reacquire_s + live_speed
    # ... and it is back on the face: within the filter's lag of the raw pose there
    k_back = 88 + int(lost.reacquire_s / 0.04)
    raw_q = pf.mapper.apply(obs[k_back].rotation, obs[k_back].translation)[0]
    assert abs(back - math.degrees(quat_angle(raw_q, [0, 0, 0, 1]))) < FILTER_LAG_DEG
    assert all(r[2] for r in rows if r[0] >= t_r + int(lost.reacquire_s * 1e9))
