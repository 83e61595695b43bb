"""Pose tracks: record -> load -> sample round trip, slerp between samples, validation
errors with line numbers."""

import json

import numpy as np
import pytest

from avatars.math3d import quat_angle, quat_from_euler, quat_slerp_scalar
from tracking.errors import TrackFormatError
from tracking.expressions import BLENDSHAPE_INDEX, NUM_BLENDSHAPES
from tracking.observation import FaceObservation
from tracking.pose_track import PoseSample, PoseTrack, TrackHeader
from tracking.track_io import PoseTrackWriter, load_track, record, save_track

TIGHT = 1e-12


def random_track(n=20, seed=3):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.integers(20_000_000, 50_000_000, n))
    rot = np.array([quat_from_euler(*rng.uniform(-0.6, 0.6, 3)) for _ in range(n)])
    tr = rng.normal(0, 0.05, (n, 3))
    bs = rng.uniform(0, 1, (n, NUM_BLENDSHAPES))
    conf = rng.uniform(0.5, 1.0, n)
    found = np.ones(n, bool)
    found[7] = False
    return PoseTrack(t, rot, tr, bs, conf, found, header=TrackHeader(source="random", settings={"seed": seed}))


def test_round_trip_is_exact_at_recorded_times(tmp_path):
    tr = random_track()
    path = tmp_path / "t.jsonl"
    save_track(tr, path)
    back = load_track(path)
    assert back.header.source == "random" and back.header.settings == {"seed": 3}
    s = PoseSample()
    for i, t in enumerate(tr.t_ns):
        back.sample(int(t), out=s)
        assert np.array_equal(s.rotation, tr.rotations[i])
        assert np.array_equal(s.translation, tr.translations[i])
        assert np.array_equal(s.blendshapes, tr.blendshapes[i])
        assert s.confidence == tr.confidence[i] and s.found == tr.found[i]


def test_sampling_between_samples_slerps_and_lerps(tmp_path):
    tr = random_track()
    save_track(tr, tmp_path / "t.jsonl")
    back = load_track(tmp_path / "t.jsonl")
    k = 4
    t0, t1 = int(tr.t_ns[k]), int(tr.t_ns[k + 1])
    for u in (0.25, 0.5, 0.9):
        t = t0 + int(round(u * (t1 - t0)))
        uu = (t - t0) / (t1 - t0)
        s = back.sample(t)
        expected = quat_slerp_scalar(tr.rotations[k], tr.rotations[k + 1], uu)
        assert quat_angle(s.rotation, expected) < 1e-9
        # on the geodesic: angles to both ends add up to the whole arc
        whole = quat_angle(tr.rotations[k], tr.rotations[k + 1])
        assert quat_angle(s.rotation, tr.rotations[k]) == pytest.approx(uu * whole, abs=1e-9)
        assert np.allclose(s.translation, (1 - uu) * tr.translations[k] + uu * tr.translations[k + 1], atol=TIGHT)
        assert np.allclose(s.blendshapes, (1 - uu) * tr.blendshapes[k] + uu * tr.blendshapes[k + 1], atol=TIGHT)


def test_sampling_clamps_outside_and_is_deterministic_in_any_order():
    tr = random_track()
    assert np.array_equal(tr.sample(int(tr.t_ns[0]) - 10**9).rotation, tr.rotations[0])
    assert np.array_equal(tr.sample(int(tr.t_ns[-1]) + 10**9).rotation, tr.rotations[-1])
    times = np.linspace(tr.start_ns, tr.end_ns, 97).astype(np.int64)
    forward = [tr.sample(int(t)).rotation.copy() for t in times]
    backward = [tr.sample(int(t)).rotation.copy() for t in times[::-1]][::-1]
    assert all(np.array_equal(a, b) for a, b in zip(forward, backward))
    # found is False on either side of the lost observation
    assert not tr.sample(int(tr.t_ns[7]) - 1).found and not tr.sample(int(tr.t_ns[7]) + 1).found


def test_record_raw_observations(tmp_path):
    obs = [FaceObservation(timestamp_ns=0, found=True, rotation=quat_from_euler(0.1, 0, 0),
                           translation=np.array([0.0, 0.01, -0.5]), confidence=1.0),
           FaceObservation.empty(40_000_000)]  # fmt: skip
    obs[0].blendshapes[BLENDSHAPE_INDEX["jawOpen"]] = 0.7
    n = record(obs, tmp_path / "raw.jsonl", TrackHeader(frame="camera", source="x"))
    back = load_track(tmp_path / "raw.jsonl")
    assert n == 2 and back.header.frame == "camera"
    assert back.blendshapes[0, BLENDSHAPE_INDEX["jawOpen"]] == 0.7
    assert list(back.found) == [True, False] and back.confidence[1] == 0.0
    line = json.loads((tmp_path / "raw.jsonl").read_text().splitlines()[1])
    assert set(line) == {"t_ns", "rotation", "translation", "blendshapes", "confidence", "found"}
    assert line["blendshapes"]["jawOpen"] == 0.7


GOOD_HEADER = json.dumps({"schema": "swaycam.posetrack", "version": 1, "frame": "avatar", "source": "", "settings": {}})
GOOD_LINE = json.dumps({"t_ns": 0, "rotation": [0, 0, 0, 1], "translation": [0, 0, 0], "confidence": 1.0})


@pytest.mark.parametrize(
    "lines, message",
    [
        ([GOOD_HEADER, GOOD_LINE, '{"t_ns": 5, "rotation": [0, 0, 0, 1]'], "line 3: not valid JSON"),
        ([GOOD_HEADER, GOOD_LINE, GOOD_LINE], "line 3: t_ns 0 is not after the previous 0"),
        ([GOOD_HEADER, '{"t_ns": 1.5, "rotation": [0,0,0,1]}'], "line 2: t_ns must be an integer"),
        ([GOOD_HEADER, '{"t_ns": 1, "rotation": [0,0,1]}'], "line 2: rotation must be a list of 4 numbers, got 3 values"),
        ([GOOD_HEADER, '{"t_ns": 1, "rotation": [0,0,0,2]}'], "line 2: rotation is not a unit quaternion"),
        ([GOOD_HEADER, '{"t_ns": 1, "rotation": [0,0,0,1], "blendshapes": {"smile": 1}}'], "line 2: unknown blendshape 'smile'"),
        ([GOOD_HEADER, '{"t_ns": 1, "rotation": [0,0,0,1], "confidence": 3}'], "line 2: confidence must be a number in [0, 1]"),
        ([GOOD_HEADER, "", GOOD_LINE, "[1, 2]"], "line 4: expected a JSON object"),
        (['{"schema": "other"}', GOOD_LINE], "line 1: not a pose track header"),
        ([GOOD_HEADER.replace('"version": 1', '"version": 9'), GOOD_LINE], "line 1: unsupported version 9"),
        ([GOOD_HEADER], "has a header but no observations"),
        ([], "is empty"),
    ],
)
def test_bad_tracks_name_file_and_line(tmp_path, lines, message):
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + ("\n" if lines else ""))
    with pytest.raises(TrackFormatError) as exc:
        load_track(p)
    assert message in str(exc.value)
    assert str(p) in str(exc.value)


def test_a_recording_cut_off_mid_line_loads_without_its_last_line(tmp_path):
    p = tmp_path / "cut.jsonl"
    second = GOOD_LINE.replace('"t_ns": 0', '"t_ns": 5')
    p.write_text("\n".join([GOOD_HEADER, GOOD_LINE, second]) + "\n" + second.replace("5", "9")[:23])
    with pytest.warns(UserWarning, match=r"cut\.jsonl line 4: incomplete last line"):
        track = load_track(p)
    assert list(track.t_ns) == [0, 5]
    p.write_text("\n".join([GOOD_HEADER, GOOD_LINE, second]))   # complete, only the newline missing
    assert list(load_track(p).t_ns) == [0, 5]


def test_missing_track_file(tmp_path):
    with pytest.raises(TrackFormatError, match="does not exist"):
        load_track(tmp_path / "nope.jsonl")


def test_writer_rejects_time_going_back(tmp_path):
    with PoseTrackWriter(tmp_path / "w.jsonl") as w:
        w.write(10, [0, 0, 0, 1], [0, 0, 0], np.zeros(NUM_BLENDSHAPES), 1.0)
        with pytest.raises(TrackFormatError, match="not after the previous 10"):
            w.write(10, [0, 0, 0, 1], [0, 0, 0], np.zeros(NUM_BLENDSHAPES), 1.0)


