"""The adaptive face count: one face tracked while one is in view, more while a second is near.

The policy's logic with exact counts (no MediaPipe), then the tracker on real clips: on one
face its output is a plain num_faces=1 landmarker's, bit for bit, while the probe ran; a
second face is reported from the first probe that sees it on; a bundle without a face
detector falls back to the landmarker probe and says why."""

from __future__ import annotations

import logging
import zipfile

import cv2
import numpy as np
import pytest
from PIL import Image

from tracking.adaptive import MANY, ONE, PROBE, AdaptiveOptions, FaceCountPolicy
from tracking.errors import TrackingError
from tracking.face_probe import DETECTOR_MEMBER, FaceCounter, detector_model_from_bundle
from tracking.face_tracker import FaceTracker, FaceTrackerOptions
from tracking.frame_sources import open_source

PROBE_EVERY = AdaptiveOptions().probe_every
SETTLE = AdaptiveOptions().settle_frames


def _frames(clip, n=None):
    with open_source(clip) as src:
        return [f for _, f in zip(range(n or 10**9), src)]


def _same(a, b) -> bool:
    """Two frames' face lists hold the same faces, bit for bit."""
    return len(a) == len(b) and all(
        np.array_equal(p.rotation, q.rotation) and np.array_equal(p.translation, q.translation)
        and np.array_equal(p.blendshapes, q.blendshapes) and np.array_equal(p.landmarks, q.landmarks)
        for p, q in zip(a, b))  # fmt: skip


def run(policy: FaceCountPolicy, faces_in_view) -> list[str]:
    """What ran per frame ("one", "many", "probe+one", "probe+many", "one+many" for a
    fallback), the probe and MANY seeing ``faces_in_view[k]`` faces and ONE at most one."""
    ran = []
    for n in faces_in_view:
        r = policy.choose()
        tag = ""
        if r == PROBE:
            r = policy.probed(n)
            tag = "probe+"
        found = min(n, 1) if r == ONE else n
        fb = policy.fallback(r, found)
        if fb:
            r, found, tag = MANY, n, "one+"
        policy.seen(r, found, fallback=fb)
        ran.append(tag + ("one" if r == ONE else "many"))
    return ran


def test_one_face_runs_the_one_face_landmarker_on_every_frame_and_probes_every_n():
    p = FaceCountPolicy(AdaptiveOptions(probe_every=5, settle_frames=3))
    ran = run(p, [1] * 20)
    assert ran == (["probe+one"] + ["one"] * 4) * 4                   # the first frame probes too
    assert p.counts == {ONE: 20, MANY: 0, "fallback": 0, "probe": 4}


def test_a_probe_that_counts_two_faces_runs_many_on_that_frame_until_settle_frames_with_one():
    p = FaceCountPolicy(AdaptiveOptions(probe_every=5, settle_frames=3))
    ran = run(p, [1] * 7 + [2] * 6 + [1] * 8)
    # the second face comes at frame 7 (ONE sees one of the two); the probe at frame 10 counts
    # it: MANY from that frame, while the two are there (to frame 12) and 3 frames more; then
    # ONE, and the next probe 5 frames after the return (frame 20)
    assert ran == (["probe+one"] + ["one"] * 4 + ["probe+one", "one", "one", "one", "one"]
                   + ["probe+many", "many", "many"] + ["many"] * 3 + ["one"] * 4 + ["probe+one"])
    assert p.counts == {ONE: 15, MANY: 6, "fallback": 0, "probe": 4} and p.mode == ONE


def test_many_finding_one_face_after_the_probe_counted_two_settles_back_to_one():
    """The detector counted two, the landmarker finds one (e.g. a face-like poster):
    settle_frames of MANY, then back to ONE."""
    p = FaceCountPolicy(AdaptiveOptions(probe_every=100, settle_frames=3))
    assert p.choose() == PROBE and p.probed(2) == MANY
    p.seen(MANY, 1)
    assert [p.choose() for _ in range(1)] == [MANY]
    p.seen(MANY, 1)
    assert p.choose() == MANY
    p.seen(MANY, 1)
    assert p.mode == ONE and p.choose() == ONE


def test_no_face_in_the_one_face_landmarker_runs_the_full_one_on_the_same_frame():
    p = FaceCountPolicy(AdaptiveOptions(probe_every=100, settle_frames=3))
    ran = run(p, [1, 1, 1, 0, 0, 1])
    assert ran == ["probe+one", "one", "one", "one+many", "one+many", "one"]
    assert p.counts == {ONE: 4, MANY: 0, "fallback": 2, "probe": 1}


def test_landmarker_probe_without_a_detector_is_the_old_policy():
    """No face counter: the tracker answers PROBE with MANY and tells seen() what it found."""
    p = FaceCountPolicy(AdaptiveOptions(probe_every=3, settle_frames=2))
    ran = []
    for n in [1, 1, 1, 2, 2, 1, 1, 1]:
        r = p.choose()
        r = MANY if r == PROBE else r
        p.seen(r, n if r == MANY else min(n, 1))
        ran.append(r)
    # probes at frames 0 and 3; frame 3 sees two: MANY to frame 4, and 2 frames more
    assert ran == [MANY, ONE, ONE, MANY, MANY, MANY, MANY, ONE]
    assert p.counts["probe"] == 2


def test_policy_options_are_checked():
    with pytest.raises(ValueError, match="probe_every"):
        FaceCountPolicy(AdaptiveOptions(probe_every=0))
    with pytest.raises(ValueError, match="settle_frames"):
        FaceCountPolicy(AdaptiveOptions(settle_frames=0))


# --- the detector from the bundle -------------------------------------------------------


def test_the_detector_is_read_from_the_landmarker_bundle_and_counts_faces(model_path, crowd_gif, selfie_mp4):
    import mediapipe as mp

    model = detector_model_from_bundle(model_path)
    assert model[4:8] == b"TFL3"                                       # a tflite flatbuffer
    with FaceCounter(model) as counter:
        for clip, want in ((selfie_mp4, 1), (crowd_gif, 4)):            # both clips' first frames
            with open_source(clip) as src:
                img = next(iter(src)).image
            assert counter.count(mp.Image(image_format=mp.ImageFormat.SRGB, data=np.ascontiguousarray(img))) == want
        assert counter.probes == 2
    with pytest.raises(TrackingError, match="closed"):
        counter.count(None)


def test_bundle_errors_name_the_file(tmp_path):
    no_zip = tmp_path / "plain.task"
    no_zip.write_bytes(b"not a zip")
    with pytest.raises(TrackingError, match="plain.task: not a zip bundle"):
        detector_model_from_bundle(no_zip)
    empty = tmp_path / "empty.task"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("face_landmarks_detector.tflite", b"")
    with pytest.raises(TrackingError, match=f"empty.task: the bundle has no {DETECTOR_MEMBER}"):
        detector_model_from_bundle(empty)
    with pytest.raises(TrackingError, match="cannot read"):
        detector_model_from_bundle(tmp_path / "absent.task")


def test_a_detector_mediapipe_cannot_load_is_a_tracking_error_naming_the_source():
    with pytest.raises(TrackingError, match="x.task: MediaPipe could not load the face detector"):
        FaceCounter(b"not a tflite model", source="x.task")


@pytest.mark.parametrize("failure", ["unreadable", "unloadable"])
def test_without_a_usable_detector_the_landmarker_probes_and_the_log_says_why(model_path, monkeypatch, caplog,
                                                                              selfie_mp4, failure):  # fmt: skip
    """MediaPipe's landmarker itself needs face_detector.tflite in its bundle (FileNotFoundError
    "No file with name: face_detector.tflite" without it, checked with mediapipe 1.2.3), so a
    bundle the tracker can load but not probe with is one whose detector cannot be read here
    or that the FaceDetector task cannot load: both made so, on the real bundle."""
    import tracking.face_tracker as ft

    def unreadable(path):
        raise TrackingError(f"face model {path}: the bundle has no {DETECTOR_MEMBER}")

    monkeypatch.setattr(ft, "detector_model_from_bundle",
                        unreadable if failure == "unreadable" else (lambda path: b"not a tflite model"))
    frames = _frames(selfie_mp4, PROBE_EVERY + 2)
    with caplog.at_level(logging.WARNING, logger="tracking.face_tracker"):
        tracker = FaceTracker(FaceTrackerOptions(model_path=model_path))
    with tracker:
        assert tracker.probe == "landmarker"
        for f in frames:
            assert len(tracker.detect(f.image, f.timestamp_ns, index=f.index)) == 1
        # the probes at frames 0 and PROBE_EVERY ran the 4-face landmarker, which gave the output
        assert tracker.policy.counts == {ONE: len(frames) - 2, MANY: 2, "fallback": 0, "probe": 2}
    why = f"the bundle has no {DETECTOR_MEMBER}" if failure == "unreadable" else "could not load the face detector"
    assert why in caplog.text and "probing with the 4-face landmarker instead" in caplog.text


# --- the tracker on real clips --------------------------------------------------------


def test_one_face_output_is_a_one_face_landmarkers_output_and_the_probe_never_replaces_it(selfie_mp4, model_path):
    """The whole selfie clip (225 frames, one person): the adaptive tracker's faces equal a
    plain num_faces=1 tracker's on every frame, exactly (MediaPipe is deterministic for the
    same frames and timestamps); the detector probed every PROBE_EVERY frames and ONE gave
    every output. The old landmarker probe differed on each probe frame."""
    frames = _frames(selfie_mp4)
    with FaceTracker(FaceTrackerOptions(model_path=model_path)) as ours, \
            FaceTracker(FaceTrackerOptions(model_path=model_path, num_faces=1)) as plain:
        assert ours.probe == "detector" and plain.policy is None
        for f in frames:
            a = ours.detect(f.image, f.timestamp_ns, index=f.index)
            b = plain.detect(f.image, f.timestamp_ns, index=f.index)
            assert len(a) == 1 and _same(a, b), f.index
        counts = ours.policy.counts
    probes = -(-len(frames) // PROBE_EVERY)                                # frames 0, 15, 30, ...
    assert counts == {ONE: len(frames), MANY: 0, "fallback": 0, "probe": probes}
    assert ours._counter is None                                          # closed with the tracker


def test_crowd_clip_reports_every_face_the_fixed_tracker_does_from_the_first_frame(crowd_gif, model_path):
    """The 4-person clip: the first frame's probe counts them, so MANY runs from frame 0 and
    the output is num_faces=4 fixed's, bit for bit, on every frame."""
    frames = _frames(crowd_gif)
    with FaceTracker(FaceTrackerOptions(model_path=model_path)) as ours, \
            FaceTracker(FaceTrackerOptions(model_path=model_path, adaptive=False)) as fixed:
        for f in frames:
            a = ours.detect(f.image, f.timestamp_ns, index=f.index)
            b = fixed.detect(f.image, f.timestamp_ns, index=f.index)
            assert len(b) >= 2 and _same(a, b), f.index
        assert ours.policy.counts == {ONE: 0, MANY: len(frames), "fallback": 0, "probe": 1}


# the astronaut's face pasted into the selfie frames' lower right (200 px: the detector and the
# landmarker both find it there; the selfie face is at x 282-386) from frame ARRIVES to LEAVES
ARRIVES, LEAVES, CLIP_FRAMES = 20, 50, 90


@pytest.fixture(scope="module")
def second_face_frames(selfie_mp4, astronaut_png):
    ast = np.asarray(Image.open(astronaut_png).convert("RGB"))
    patch = cv2.resize(ast[30:230, 125:325], (200, 200), interpolation=cv2.INTER_AREA)
    frames = []
    for f in _frames(selfie_mp4, CLIP_FRAMES):
        img = f.image.copy()
        if ARRIVES <= f.index < LEAVES:
            img[160:360, 440:640] = patch
        frames.append((f.index, f.timestamp_ns, img))
    return frames


def test_a_second_face_is_reported_from_the_next_probe_until_it_leaves(second_face_frames, model_path):
    """ONE tracks the selfie; the second face comes at frame 20 (fixed num_faces=4 finds it
    at once), the probe at frame 30 counts it and from there the adaptive tracker reports as
    many faces as the fixed one; settle_frames after it left, ONE again. The selector keeps
    the same person throughout."""
    with FaceTracker(FaceTrackerOptions(model_path=model_path)) as ours, \
            FaceTracker(FaceTrackerOptions(model_path=model_path, adaptive=False)) as fixed:
        got = []
        for k, t, img in second_face_frames:
            ours.process(img, t, index=k)
            fixed.process(img, t, index=k)
            got.append((len(ours.last_faces), len(fixed.last_faces)))
        counts, switches = ours.policy.counts, ours.selector.switches
    seen_at = -(-ARRIVES // PROBE_EVERY) * PROBE_EVERY                    # the first probe from ARRIVES on
    assert [b for _, b in got] == [1] * ARRIVES + [2] * (LEAVES - ARRIVES) + [1] * (CLIP_FRAMES - LEAVES)
    assert [a for a, _ in got] == [1] * seen_at + [2] * (LEAVES - seen_at) + [1] * (CLIP_FRAMES - LEAVES)
    many = LEAVES - seen_at + SETTLE                                       # MANY until SETTLE frames alone
    back = LEAVES + SETTLE
    probes = -(-seen_at // PROBE_EVERY) + 1 + (CLIP_FRAMES - back - 1) // PROBE_EVERY
    assert counts == {ONE: CLIP_FRAMES - many, MANY: many, "fallback": 0, "probe": probes}
    assert switches == 0
