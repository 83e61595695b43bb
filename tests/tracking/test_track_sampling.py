"""The compiled PoseTrack.sample (tracking.track_sampling) gives the bits of the Python
implementation it replaced, and allocates nothing with ``out=``."""

from __future__ import annotations

import itertools
import math
import tracemalloc

import numpy as np

from tracking.pose_track import PoseSample, PoseTrack


def python_sample(track: PoseTrack, t: int) -> tuple:
    """The Python implementation of PoseTrack.sample before it was compiled (slerp of
    avatars.math3d.quat_slerp_scalar inlined): (rotation, translation, blendshapes, confidence, found)."""
    times = track.t_ns.tolist()
    k = int(np.searchsorted(track.t_ns, t, side="right")) - 1
    k = min(max(k, 0), len(times) - 1)
    if t <= times[0] or k == len(times) - 1 or t == times[k]:
        i = 0 if t <= times[0] else k
        return (track.rotations[i].copy(), track.translations[i].copy(), track.blendshapes[i].copy(),
                float(track.confidence[i]), bool(track.found[i]))
    u = (t - times[k]) / (times[k + 1] - times[k])
    a, b = track.rotations[k], track.rotations[k + 1]
    ax, ay, az, aw = (float(v) for v in a)
    bx, by, bz, bw = (float(v) for v in b)
    d = ax * bx + ay * by + az * bz + aw * bw
    sign = 1.0
    if d < 0.0:
        d, sign = -d, -1.0
    if d > 0.9995:
        ka, kb = 1.0 - u, u * sign
    else:
        th = math.acos(d)
        st = math.sin(th)
        ka, kb = math.sin((1.0 - u) * th) / st, sign * math.sin(u * th) / st
    x, y, z, w = ka * ax + kb * bx, ka * ay + kb * by, ka * az + kb * bz, ka * aw + kb * bw
    n = math.sqrt(x * x + y * y + z * z + w * w)
    rot = np.array([x / n, y / n, z / n, w / n])
    tr = np.subtract(track.translations[k + 1], track.translations[k])
    tr *= u
    tr += track.translations[k]
    bs = np.subtract(track.blendshapes[k + 1], track.blendshapes[k])
    bs *= u
    bs += track.blendshapes[k]
    c0, c1 = float(track.confidence[k]), float(track.confidence[k + 1])
    return rot, tr, bs, c0 + (c1 - c0) * u, bool(track.found[k]) and bool(track.found[k + 1])


def random_track(n: int = 60, seed: int = 3) -> PoseTrack:
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.integers(1, 40_000_000, size=n)) + 10**12
    q = rng.normal(size=(n, 4))
    q[10] = q[9] + 1e-5                    # nearly parallel neighbours (normalised lerp)
    q[21] = -q[20] + 1e-2                  # across hemispheres
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    conf = rng.uniform(0, 1, size=n)
    conf[5] = 0.0
    return PoseTrack(t, q, rng.normal(size=(n, 3)) * 0.05, rng.uniform(0, 1, size=(n, 52)), conf,
                     conf > 0.2)


def test_bits_of_the_python_implementation():
    track = random_track()
    rng = np.random.default_rng(11)
    times = track.t_ns.tolist()
    queries = times + [times[0] - 5, times[-1] + 7] + [int(v) for v in rng.integers(times[0] - 10**8,
                                                                                     times[-1] + 10**8, 500)]
    queries += [(a + b) // 2 for a, b in itertools.pairwise(times)]
    out = PoseSample()
    for t in queries + queries[::-1]:        # forward and backward: the cursor follows
        got = track.sample(t, out)
        rot, tr, bs, c, f = python_sample(track, t)
        assert got is out and out.t_ns == t
        assert np.array_equal(out.rotation, rot) and np.array_equal(out.translation, tr), t
        assert np.array_equal(out.blendshapes, bs) and out.confidence == c and out.found is f, t
        assert isinstance(out.confidence, float) and isinstance(out.t_ns, int)


def test_offset_samples_track_time_and_stamps_loop_time():
    track = random_track()
    t_track = (int(track.t_ns[7]) + int(track.t_ns[8])) // 2
    off = -123_456_789_000
    a = track.sample(t_track)
    b = track.sample(t_track + off, offset_ns=off)     # loop time t_track + off is track time t_track
    assert b.t_ns == t_track + off
    assert np.array_equal(a.rotation, b.rotation) and a.confidence == b.confidence


def test_sampling_with_out_allocates_nothing():
    """2,900 samples into ``out`` allocate nothing, not even transiently. tracemalloc counts
    every thread of the process, and a pytest-xdist worker may still hold another test's
    threads (a service, a log reader): a measurement is taken again, up to 3 times, when one
    shows an allocation; an allocation of ``sample`` itself happens on every call and fails all 3
    (a 732-byte transient was seen once in a full suite run, 0 alone)."""
    track = random_track(400)
    out = PoseSample()
    times = np.linspace(track.start_ns, track.end_ns, 3000).astype(np.int64).tolist()
    sample = track.sample
    for t in times[:100]:
        sample(t, out)
        sample(t, out, offset_ns=5)
    measured = times[100:]
    growth = []
    for _ in range(3):
        it = iter(measured)                     # made before tracing: the loop allocates nothing itself
        tracemalloc.start()
        tracemalloc.reset_peak()
        for t in it:
            sample(t, out, offset_ns=5)
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        growth.append(peak - current)
        if growth[-1] == 0:
            break
    assert growth[-1] == 0, growth
