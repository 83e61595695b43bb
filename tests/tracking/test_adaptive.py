"""The adaptive face count: one face tracked while one is in view, more while a second is near."""

from __future__ import annotations

import pytest

from tracking.adaptive import MANY, ONE, AdaptiveOptions, FaceCountPolicy
from tracking.face_tracker import FaceTracker, FaceTrackerOptions


def run(policy: FaceCountPolicy, faces_in_view) -> list[int]:
    """Which landmarker ran per frame, the landmarkers seeing ``faces_in_view[k]`` faces
    (ONE sees at most one)."""
    ran = []
    for n in faces_in_view:
        r = policy.choose()
        found = min(n, 1) if r == ONE else n
        fb = policy.fallback(r, found)
        if fb:
            r, found = MANY, n
        policy.seen(r, found, fallback=fb)
        ran.append(r)
    return ran


def test_one_face_runs_the_one_face_landmarker_with_a_probe_every_n_frames():
    p = FaceCountPolicy(AdaptiveOptions(probe_every=5, settle_frames=3))
    ran = run(p, [1] * 20)
    assert ran == [MANY] + [ONE, ONE, ONE, ONE, MANY] * 3 + [ONE] * 4     # the first frame probes
    assert p.counts == {ONE: 16, MANY: 4, "fallback": 0}


def test_a_second_face_switches_to_many_until_it_has_been_gone_for_settle_frames():
    p = FaceCountPolicy(AdaptiveOptions(probe_every=5, settle_frames=3))
    ran = run(p, [1] * 5 + [2] * 6 + [1] * 6)
    # the probe at frame 6 sees two faces: MANY while they are there, and 3 frames more
    assert ran == [MANY] + [ONE] * 4 + [MANY] * 6 + [MANY] * 3 + [ONE] * 3
    assert p.mode == ONE


def test_no_face_in_the_one_face_landmarker_runs_the_full_one_on_the_same_frame():
    p = FaceCountPolicy(AdaptiveOptions(probe_every=100, settle_frames=3))
    ran = run(p, [1, 1, 1, 0, 0, 1])
    assert ran == [MANY, ONE, ONE, MANY, MANY, ONE] and p.counts["fallback"] == 2


def test_policy_options_are_checked():
    with pytest.raises(ValueError, match="probe_every"):
        FaceCountPolicy(AdaptiveOptions(probe_every=0))


def test_adaptive_tracker_finds_every_face_the_fixed_one_finds(crowd_gif, selfie_mp4, model_path):
    """On the 4-person clip and the selfie clip, frame by frame: the adaptive tracker reports
    as many faces as num_faces=4 fixed (a second face is found within probe_every frames and
    then tracked like before), and runs the one-face landmarker on the one-person clip."""
    from tracking.frame_sources import open_source

    for clip, frames in ((crowd_gif, 30), (selfie_mp4, 40)):
        with open_source(clip) as src:
            images = [f for _, f in zip(range(frames), src)]
        with FaceTracker(FaceTrackerOptions(model_path=model_path, adaptive=True)) as ours, \
                FaceTracker(FaceTrackerOptions(model_path=model_path, adaptive=False)) as fixed:
            counts = []
            for f in images:
                a = len(ours.detect(f.image, f.timestamp_ns, index=f.index))
                b = len(fixed.detect(f.image, f.timestamp_ns, index=f.index))
                counts.append((a, b))
            policy = ours.policy
        probe = AdaptiveOptions().probe_every
        if clip == crowd_gif:
            assert all(b >= 2 for _, b in counts)
            assert all(a == b for a, b in counts)     # the first frame probes: every face from the start
            assert probe
            assert policy.mode == MANY
        else:
            assert all(a == b == 1 for a, b in counts)
            assert policy.counts[ONE] >= frames - frames // probe - 1 and policy.counts["fallback"] == 0
