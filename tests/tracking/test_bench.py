"""Tracker timing. The pytest-benchmark cases are skipped by default (addopts has
--benchmark-skip); run them with ``pytest tests/tracking/test_bench.py --benchmark-only``.
``swaycam bench tracker`` prints median and p95 per size."""

import cv2
import numpy as np
import pytest

from tracking.eval.bench import bench_tracker
from tracking.face_tracker import FaceTracker, FaceTrackerOptions
from tracking.frame_sources import open_source


@pytest.fixture(scope="module")
def selfie_frames(selfie_mp4):
    with open_source(selfie_mp4) as src:
        return [f.image for _, f in zip(range(60), src)]


def test_bench_tracker_reports_median_and_p95(selfie_frames, model_path):
    res = bench_tracker(selfie_frames[:8], sizes=((320, 180), (640, 360)), model_path=model_path, warmup=2)
    assert [(r.width, r.height, r.frames) for r in res] == [(320, 180, 6), (640, 360, 6)]
    assert all(0 < r.median_ms <= r.p95_ms for r in res)
    with pytest.raises(ValueError, match="more than 5 frames"):
        bench_tracker(selfie_frames[:3], sizes=((64, 36),), model_path=model_path)


def test_fit_frame_keeps_the_aspect_ratio():
    from tracking.eval.bench import fit_frame

    portrait = np.full((564, 300, 3), 200, np.uint8)
    out = fit_frame(portrait, 640, 360)
    assert out.shape == (360, 640, 3)
    cols = np.flatnonzero(out[180, :, 0] == 200)            # 300 x 564 scaled by 360/564: 191 x 360
    assert (cols[0], cols[-1]) == (224, 414) and out[:, :224].max() == 0 and out[:, 415:].max() == 0
    landscape = np.arange(720 * 1280 * 3, dtype=np.uint32).astype(np.uint8).reshape(720, 1280, 3)
    assert fit_frame(landscape, 1280, 720) is landscape
    assert fit_frame(landscape, 640, 360).shape == (360, 640, 3)
    assert (fit_frame(landscape, 640, 360) == cv2.resize(landscape, (640, 360), interpolation=cv2.INTER_AREA)).all()


@pytest.mark.parametrize("size", [(640, 360), (1280, 720)], ids=["640x360", "1280x720"])
def test_tracker_ms_per_frame(benchmark, selfie_frames, model_path, size):
    frames = [cv2.resize(f, size, interpolation=cv2.INTER_LINEAR) if f.shape[1::-1] != size else f
              for f in selfie_frames]  # fmt: skip
    with FaceTracker(FaceTrackerOptions(model_path=model_path)) as tracker:
        state = {"k": 0}

        def step():
            k = state["k"]
            state["k"] += 1
            return tracker.process(frames[k % len(frames)], k * 40_000_000)

        for _ in range(5):
            step()
        obs = benchmark.pedantic(step, rounds=100, iterations=1)
    assert obs.found and np.isfinite(obs.rotation).all()
