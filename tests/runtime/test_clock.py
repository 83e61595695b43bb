"""FixedStepDriver: integer-nanosecond grid, alpha, cap and dropped debt."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.clock import NS_PER_S, FixedStepDriver, MonotonicClock, ReplayClock

T0 = 1_234_567_890_123


def _recorder():
    times: list[int] = []
    return times, times.append


def test_h_is_exactly_one_over_120():
    d = FixedStepDriver(lambda t: None)
    assert d.h == 1.0 / 120.0
    assert d.rate_hz == 120


def test_substep_times_come_from_n_not_accumulation():
    d = FixedStepDriver(lambda t: None, t0_ns=T0)
    for n in (0, 1, 2, 3, 119, 120, 121, 10**6, 10**9 + 7):
        assert d.substep_time_ns(n) == T0 + (n * NS_PER_S) // 120
    # the intervals are 8_333_333 or 8_333_334 ns, never drifting
    gaps = np.diff([d.substep_time_ns(n) for n in range(1000)])
    assert set(gaps.tolist()) <= {8_333_333, 8_333_334}
    assert d.substep_time_ns(120) - T0 == NS_PER_S


def test_first_advance_starts_the_run():
    times, fn = _recorder()
    d = FixedStepDriver(fn)
    assert tuple(d.advance(T0)) == (0, 0.0)
    assert d.t0_ns == T0 and times == []
    n, alpha = d.advance(T0 + NS_PER_S // 120)
    assert n == 1 and times == [T0 + NS_PER_S // 120] and alpha == 0.0


@pytest.mark.parametrize("fps", [24, 30, 60, 120, 144])
def test_every_grid_time_is_stepped_once_in_order(fps):
    times, fn = _recorder()
    d = FixedStepDriver(fn, t0_ns=T0)
    frame_ns = [T0 + (f * NS_PER_S) // fps for f in range(1, 2 * fps + 1)]
    for t in frame_ns:
        n, alpha = d.advance(t)
        assert 0.0 <= alpha < 1.0
        assert d.last_time_ns <= t < d.substep_time_ns(d.substep_index + 1)
    expected = [T0 + (n * NS_PER_S) // 120 for n in range(1, len(times) + 1)]
    assert times == expected
    assert d.last_time_ns <= frame_ns[-1] and len(times) == 240


def test_jittered_frames_visit_the_same_grid():
    rng = np.random.default_rng(3)
    times, fn = _recorder()
    d = FixedStepDriver(fn, t0_ns=T0)
    t = T0
    while t < T0 + 2 * NS_PER_S:
        t += int(rng.uniform(0.002, 0.045) * NS_PER_S)
        d.advance(t)
    assert times == [T0 + (n * NS_PER_S) // 120 for n in range(1, len(times) + 1)]
    assert d.dropped_substeps == 0


def test_alpha_is_the_fraction_of_the_next_interval():
    d = FixedStepDriver(lambda t: None, t0_ns=0)
    t1, t2 = d.substep_time_ns(1), d.substep_time_ns(2)
    n, alpha = d.advance(t1 + (t2 - t1) // 4)
    assert n == 1
    assert alpha == pytest.approx(0.25, abs=1e-6)
    # time going backwards runs nothing
    assert tuple(d.advance(t1 - 5)) == (0, 0.0)


def test_cap_drops_the_oldest_debt_and_counts_it():
    times, fn = _recorder()
    d = FixedStepDriver(fn, t0_ns=T0, max_substeps=4)
    res = d.advance(T0 + NS_PER_S)          # 120 substeps owed
    assert res.substeps == 4 and res.dropped == 116
    assert d.dropped_substeps == 116
    # the newest substeps ran, on the grid
    assert times == [T0 + (n * NS_PER_S) // 120 for n in range(117, 121)]
    assert d.substep_index == 120
    res = d.advance(T0 + NS_PER_S + NS_PER_S // 60)
    assert res.substeps == 2 and res.dropped == 0
    assert times[-2:] == [T0 + (n * NS_PER_S) // 120 for n in (121, 122)]


def test_start_restarts_the_grid():
    times, fn = _recorder()
    d = FixedStepDriver(fn, t0_ns=0)
    d.advance(NS_PER_S // 10)
    d.start(5_000)
    assert d.substep_index == 0 and d.t0_ns == 5_000
    d.advance(5_000 + NS_PER_S // 120)
    assert times[-1] == 5_000 + NS_PER_S // 120


@pytest.mark.parametrize("kw", [dict(rate_hz=0), dict(rate_hz=119.5), dict(max_substeps=0)])
def test_bad_arguments(kw):
    with pytest.raises(ValueError):
        FixedStepDriver(lambda t: None, **kw)


def test_a_paused_clock_stops_loop_time_and_keeps_wall_time():
    clock = ReplayClock(T0)
    clock.advance(NS_PER_S)
    assert clock.now_ns() == clock.wall_ns() == T0 + NS_PER_S and not clock.paused
    clock.pause()
    clock.advance(NS_PER_S // 2)
    assert clock.paused and clock.now_ns() == T0 + NS_PER_S       # loop time stands still
    assert clock.wall_ns() == T0 + 3 * NS_PER_S // 2 and clock.paused_ns == NS_PER_S // 2
    clock.pause()                                                 # no-op while paused
    clock.advance(NS_PER_S // 2)
    assert clock.toggle_pause() is False                          # resume: loop time goes on from there
    assert clock.now_ns() == T0 + NS_PER_S and clock.paused_ns == NS_PER_S
    clock.sleep_until(clock.wall_ns() + 5)
    assert clock.now_ns() == T0 + NS_PER_S + 5
    assert clock.to_wall_ns(clock.now_ns()) == clock.wall_ns()    # loop -> wall time (camera timestamps)
    clock.resume()                                                # no-op when running
    assert clock.paused_ns == NS_PER_S
    clock.sleep_until(0)                                          # a replay clock never goes back
    assert clock.wall_ns() == T0 + 2 * NS_PER_S + 5
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_the_monotonic_clock_pauses_the_same_way():
    clock = MonotonicClock()
    clock.pause()
    t = clock.now_ns()
    clock.sleep_until(clock.wall_ns() + 2_000_000)
    assert clock.now_ns() == t and clock.paused_ns >= 2_000_000
    clock.resume()
    assert clock.now_ns() >= t


def test_offline_frame_schedule_matches_frame_times():
    from runtime.clock import frame_offset_ns, frame_times
    from runtime.schedule import offline_frame_count

    for fps, dur in ((30, 12 * NS_PER_S), (25, 9 * NS_PER_S), (12.5, 6 * NS_PER_S), (29.97, NS_PER_S)):
        n = offline_frame_count(fps, dur)
        times = list(frame_times(fps, dur, start_ns=T0))
        assert [T0 + frame_offset_ns(k, fps) for k in range(n)] == times[:-1]    # all but the end frame
        assert frame_offset_ns(n, fps) >= dur > frame_offset_ns(n - 1, fps)
