"""A file played as a camera (runtime.pose_inputs.live.PlayedAsCamera): newest frame wins,
and after the end a polling consumer waits for its timeout instead of spinning (a spinning
tracking thread held the GIL and stalled the last frames of a live run by 0.3-1 s)."""

from __future__ import annotations

import time

import numpy as np

from runtime.pose_inputs.live import PlayedAsCamera
from tracking.frame_sources import ArraySource

POLL_S = 0.05


def test_after_the_end_a_timed_read_waits_and_a_blocking_read_returns_at_once():
    images = [np.full((8, 8, 3), k, np.uint8) for k in range(3)]
    cam = PlayedAsCamera(ArraySource(images, fps=1000.0))
    cam.start()
    assert cam.ended.wait(5.0)
    got = cam.read(timeout_s=POLL_S)
    assert got is not None and int(got.image[0, 0, 0]) == 2          # the newest frame won
    t0 = time.perf_counter()
    polls = 0
    while time.perf_counter() - t0 < 4 * POLL_S:
        assert cam.read(timeout_s=POLL_S) is None
        polls += 1
    assert polls <= 5                        # each poll waited its timeout: no busy loop
    t0 = time.perf_counter()
    assert cam.read() is None and time.perf_counter() - t0 < POLL_S
    cam.close()
