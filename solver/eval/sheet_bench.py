"""What linked sheets cost (``swaycam bench solver --sheets``): one 60 fps frame (2 substeps)
of an avatar's chain set with its sheet links against the same avatar without them, timed
interleaved in one process (frame by frame: without, with, without...), so both see the same
machine load; the head follows ``motion`` as in :func:`solver.eval.bench.bench_avatar`.

This is a measurement, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import time

import numpy as np

from avatars import Avatar

from ..chains import ChainSet
from ..params import RATE_HZ
from .bench import POSES, SAMPLES, Motion, _percentiles
from .posing import SubtreePoser


def bench_sheets(avatar: Avatar, motion: Motion, *, links=None, samples: int = SAMPLES) -> dict:
    """Returns {"links", "joints", "off_frame_us", "on_frame_us" (stats, µs), "ratio" (on
    median / off median)} for ``avatar`` with ``links`` (:class:`solver.build_options.BuildOptions`
    ``links``; the try-on's sheets need none) against ``sheets="off"``."""
    off = ChainSet.from_avatar(avatar, sheets="off")
    on = ChainSet.from_avatar(avatar, links=links)
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    worlds = [poser.world(motion((n + 1) / RATE_HZ)).copy() for n in range(POSES)]
    for cs in (off, on):
        for w in worlds[:8]:
            cs.step(w)                   # compile / load the cached kernels
        cs.reset(worlds[0])
    clock = time.perf_counter_ns
    n = samples // 2
    t_off = np.empty(n, np.int64)
    t_on = np.empty(n, np.int64)
    for i in range(n):
        w0 = worlds[(2 * i) % POSES]
        w1 = worlds[(2 * i + 1) % POSES]
        for cs, out in ((off, t_off), (on, t_on)) if i % 2 == 0 else ((on, t_on), (off, t_off)):
            t0 = clock()
            cs.step(w0)
            cs.step(w1)
            out[i] = clock() - t0
    a, b = _percentiles(t_off), _percentiles(t_on)
    return {"links": on.link_count, "joints": on.segment_count, "off_frame_us": a, "on_frame_us": b,
            "ratio": b["median"] / a["median"], "cap_bindings": on.cap_bindings}
