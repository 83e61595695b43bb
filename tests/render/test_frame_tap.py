"""The preview's frame tap (render/frame_tap.py): a GPU-downscaled, asynchronous copy of the
output that is taken only once the GPU finished it (``ready`` never waits)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from render._gl import GL
from render.frame_tap import FrameTap

SIZE = (320, 180)
TAP_WIDTH = 160
#: Mean absolute difference (0..255) between the GPU's linear 2:1 blit and OpenCV's area
#: average of the full readback (both average 2x2 blocks; sRGB decoding may differ by a step).
MEAN_DIFF_TOLERANCE = 2.0


@pytest.fixture()
def drawn(make_renderer, godette):
    r = make_renderer(SIZE, background="#202830", samples=0)
    r.set_avatar(godette)
    r.draw()
    return r


def test_tap_copies_the_output_downscaled_and_never_waits_to_say_ready(drawn):
    full = drawn.read_rgba()
    tap = FrameTap(drawn, width=TAP_WIDTH)
    assert tap.size == (160, 90) and not tap.pending and not tap.ready
    tap.request("tag-1")
    assert tap.pending
    GL.glFinish()
    assert tap.ready
    out = np.zeros((90, 160, 4), np.uint8)
    rgba, tag = tap.take(out)
    assert tag == "tag-1" and rgba is out and not tap.pending and not tap.ready
    want = cv2.resize(full, (160, 90), interpolation=cv2.INTER_AREA)
    assert np.abs(rgba.astype(float) - want).mean() < MEAN_DIFF_TOLERANCE
    assert tap.take(out) is None
    tap.release()


def test_tap_at_full_width_copies_the_output_exactly(drawn):
    full = drawn.read_rgba()
    tap = FrameTap(drawn, width=None)
    assert tap.size == SIZE
    tap.request()
    rgba, _ = tap.take()
    assert np.array_equal(rgba, full)
    tap.release()
