"""Frames in flight (render.frame_reader): the readback thread returns every frame, in order,
with the bytes the drawing context reads; errors reach the drawing thread."""

from __future__ import annotations

import math

import numpy as np
import pytest

from render.frame_reader import FrameReader
from tests.render.conftest import head_yaw_world

SIZE = (160, 90)


def _frames(avatar, n):
    return [head_yaw_world(avatar, math.radians(25.0) * math.sin(0.7 * k)) for k in range(n)]


def _stream(r, worlds, *, blink_every=2):
    """Draw ``worlds`` through read_rgba_async; returns [(tag, rgba copy)] in delivery order and
    the frames read synchronously right after each draw."""
    got, direct = [], []
    for k, w in enumerate(worlds):
        r.draw(w, {"blink": 1.0} if k % blink_every else None)
        direct.append(r.read_rgba().copy())          # the last drawn frame, whatever the slot
        g = r.read_rgba_async(tag=k)
        if g is not None:
            got.append((g[1], g[0].copy()))
    while (g := r.flush_readback()) is not None:
        got.append((g[1], g[0].copy()))
    return got, direct


@pytest.mark.parametrize("background", ["chroma", "transparent"])
def test_reader_returns_every_frame_in_order_with_the_drawn_bytes(make_renderer, default_avatar, background):
    worlds = _frames(default_avatar, 9)
    threaded = make_renderer(SIZE, background=background)
    threaded.set_avatar(default_avatar)
    assert threaded.start_reader() and threaded.reader is not None and threaded.targets.slots == 2
    pbo = make_renderer(SIZE, background=background)
    pbo.set_avatar(default_avatar)
    got, direct = _stream(threaded, worlds)
    ref, _ = _stream(pbo, worlds)
    assert [t for t, _ in got] == list(range(9)) == [t for t, _ in ref]
    for (_, a), (_, b), d in zip(got, ref, direct):
        assert np.array_equal(a, b) and np.array_equal(a, d)
    assert len({a.tobytes() for _, a in got}) > 3          # the head turned: the frames differ
    if background == "transparent":
        alpha = got[0][1][..., 3]
        assert (alpha == 0).any() and (alpha == 255).any()
    assert threaded.reader.frames == 9


def test_reader_output_is_copied_when_asked_and_survives_a_resize(make_renderer, default_avatar):
    r = make_renderer(SIZE)
    r.set_avatar(default_avatar)
    assert r.start_reader()
    out = np.zeros((SIZE[1], SIZE[0], 4), np.uint8)
    r.draw()
    assert r.read_rgba_async(tag="a", out=out) is None
    r.draw(head_yaw_world(default_avatar, 0.4))
    got = r.read_rgba_async(tag="b", out=out)
    assert got[0] is out and got[1] == "a" and out.any()
    assert r.flush_readback()[1] == "b" and r.flush_readback() is None
    r.resize((96, 54))                                   # the slots and the thread are made again
    assert r.reader is not None and r.reader.size == (96, 54)
    r.draw()
    r.read_rgba_async(tag=1)
    rgba, tag = r.flush_readback()
    assert tag == 1 and rgba.shape == (54, 96, 4) and np.array_equal(rgba, r.read_rgba())
    r.stop_reader()
    assert r.reader is None and r.targets.slots == 1


def test_compare_panes_arrive_together(make_renderer, default_avatar):
    """Two viewports drawn into one frame (compare mode) are read back as one image."""
    r = make_renderer(SIZE, background="chroma")
    r.set_avatar(default_avatar)
    r.start_reader()
    left, right = (0, 0, SIZE[0] // 2, SIZE[1]), (SIZE[0] // 2, 0, SIZE[0] - SIZE[0] // 2, SIZE[1])
    for k in range(3):
        r.draw(None, viewport=left)
        r.draw(head_yaw_world(default_avatar, 0.5 * k), viewport=right)
        direct = r.read_rgba().copy()
        r.read_rgba_async(tag=k)
    frames = []
    while (g := r.flush_readback()) is not None:
        frames.append(g[0].copy())
    assert np.array_equal(frames[-1], direct)
    green = np.all(direct[..., :3] == (0, 255, 0), axis=-1)
    assert not green[:, : SIZE[0] // 2].all() and not green[:, SIZE[0] // 2:].all()


def test_a_failed_readback_is_raised_on_the_drawing_thread(make_renderer, default_avatar):
    r = make_renderer(SIZE)
    r.set_avatar(default_avatar)
    r.start_reader()

    def broken(rgba):
        raise OSError("disk on fire")

    r.reader._straight = broken
    r.draw()
    r.read_rgba_async(tag=0)
    with pytest.raises(RuntimeError, match="frame readback failed: disk on fire"):
        r.flush_readback()


def test_no_reader_without_a_shareable_context(make_renderer, default_avatar):
    r = make_renderer(SIZE)
    r.set_avatar(default_avatar)
    real = r.context
    try:
        r.context = type("WindowLike", (), {"backend": "window"})()
        assert r.start_reader() is False and r.reader is None
    finally:
        r.context = real
    r.draw()
    assert r.read_rgba_async(tag=0) is None and r.flush_readback()[1] == 0   # the PBO path still works


def test_reader_refuses_a_slot_in_flight(gl_context, make_renderer, default_avatar):
    r = make_renderer(SIZE)
    r.set_avatar(default_avatar)
    reader = FrameReader(gl_context, [t.id for t in r.targets.final_texs], SIZE)
    try:
        r.draw()
        reader.submit(0, "x")
        with pytest.raises(RuntimeError, match="slot 0 is still in flight"):
            reader.submit(0, "y")
        rgba, tag = reader.collect()
        assert tag == "x" and np.array_equal(rgba, r.read_rgba()) and reader.collect() is None
    finally:
        reader.close()


def test_a_stream_without_synchronous_reads_matches_the_pbo_stream(make_renderer, default_avatar):
    """Frames drawn back to back (nothing else finishes them): the readback thread still gets
    each finished frame, the same bytes as the PBO double buffer's, in order."""
    worlds = _frames(default_avatar, 12)
    out = {}
    for mode in ("thread", "pbo"):
        r = make_renderer(SIZE, background="chroma")
        r.set_avatar(default_avatar)
        if mode == "thread":
            assert r.start_reader()
        got = []
        for k, w in enumerate(worlds):
            r.draw(w, {"blink": 1.0} if k % 3 == 0 else None)
            g = r.read_rgba_async(tag=k)
            if g is not None:
                got.append((g[1], g[0].copy()))
        while (g := r.flush_readback()) is not None:
            got.append((g[1], g[0].copy()))
        out[mode] = got
    assert [t for t, _ in out["thread"]] == list(range(12)) == [t for t, _ in out["pbo"]]
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(out["thread"], out["pbo"]))
