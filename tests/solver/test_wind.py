"""Wind and impulses (solver/wind.py, solver/kernels/forces.py).

Equilibrium of one link under a steady wind W across its rest direction, no gravity: the
rest-shape step is u = D (v + h (f + r W)), y = x + h u projected onto |y − o| = L, with
f = k (r_rest − x). A fixed point (v = 0, y projected back onto x) needs the force to be along
the link: with x = o + L (cos θ d + sin θ ŵ) the part of k (r_rest − x) + r W along the tangent
t = −sin θ d + cos θ ŵ is −k L sin θ + r |W| cos θ, so tan θ = r |W| / (k L) exactly
(the solver's own force model, solver/kernels/forces.py; no small-angle step in it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver import BuildOptions, ChainSet, SpringOverride
from solver.errors import HairParamsError
from solver.eval.posing import SubtreePoser
from solver.eval.synthetic import hair_cap_avatar, strand_avatar
from solver.wind import MAX_IMPULSE, MAX_WIND, Wind, impulse, set_wind, wind_of, wind_series

#: tan θ of the settled link against the analytic r|W|/(kL)
EQUILIBRIUM = 1e-6


def _still(av):
    return SubtreePoser(av.skeleton, av.head_node()).world(np.array([0.0, 0.0, 0.0, 1.0])).copy()


def test_a_steady_wind_deflects_one_link_to_the_analytic_equilibrium():
    av = strand_avatar([(0.0, 1.5, 0.0), (0.0, 1.3, 0.0)])          # one link, 0.2 m, down
    k, c, r, w = 150.0, 8.0, 2.0, 6.0
    cs = ChainSet.from_avatar(av, BuildOptions(overrides=SpringOverride(k=k, c=c, g=(0.0, 0.0, 0.0)),
                                               wind_drag=r))
    world = _still(av)
    cs.reset(world)
    set_wind(cs, Wind(direction=(0.0, 0.0, 1.0), strength=w, ramp_s=0.25))
    for _ in range(120 * 20):
        cs.step(world)
    d = cs.tails[0] - np.array([0.0, 1.5, 0.0])
    tan = d[2] / -d[1]
    expected = r * w / (k * 0.2)
    print(f"tan θ {tan:.12f}, analytic {expected:.12f}, difference {abs(tan - expected):.2g}")
    assert abs(tan - expected) <= EQUILIBRIUM
    assert abs(d[0]) <= 1e-12
    assert np.allclose(wind_of(cs), [0.0, 0.0, w], rtol=0, atol=1e-12)
    assert float(np.abs(cs.velocities).max()) < 1e-6


def test_the_wind_eases_in_over_its_ramp_and_never_jumps():
    av = strand_avatar([(0.0, 1.5, 0.0), (0.0, 1.3, 0.0)])
    cs = ChainSet.from_avatar(av)
    world = _still(av)
    set_wind(cs, Wind(direction=(1.0, 0.0, 0.0), strength=10.0, ramp_s=0.5))
    series = wind_series(cs, 120)
    assert 0.0 < series[0, 0] < 10.0 * 3.0 / 60.0 ** 2 + 1e-12   # smoothstep start: 3u² of the mean
    assert series[59, 0] == pytest.approx(10.0)
    assert np.all(np.diff(series[:, 0]) >= 0.0)
    cs.step(world)
    assert wind_of(cs)[0] == series[0, 0]


def test_gusts_are_seeded_bounded_and_a_function_of_the_substep_count_only():
    av = hair_cap_avatar(16, colliders=4, joints_per_chain=4)
    a, b = ChainSet.from_avatar(av), ChainSet.from_avatar(av)
    set_wind(a, Wind(direction=(1.0, 0.0, 1.0), strength=8.0, gusts=0.6, seed=3, ramp_s=0.0))
    set_wind(b, Wind(direction=(1.0, 0.0, 1.0), strength=8.0, gusts=0.6, seed=3, ramp_s=0.0))
    sa, sb = wind_series(a, 1200), wind_series(b, 1200)
    assert np.array_equal(sa, sb)
    mean = np.array([1.0, 0.0, 1.0]) / math.sqrt(2.0) * 8.0
    along = sa @ (mean / 8.0)
    assert along.min() >= 8.0 * 0.4 - 1e-9 and along.max() <= 8.0 * 1.6 + 1e-9
    assert along.max() - along.min() > 2.0                      # the gusts do blow
    c = ChainSet.from_avatar(av)
    set_wind(c, Wind(direction=(1.0, 0.0, 1.0), strength=8.0, gusts=0.6, seed=4, ramp_s=0.0))
    assert not np.array_equal(wind_series(c, 1200), sa)


def test_an_impulse_is_one_velocity_change_at_the_next_substep():
    av = strand_avatar([(0.0, 1.5, 0.0), (0.0, 1.3, 0.0), (0.0, 1.1, 0.0)])
    cs = ChainSet.from_avatar(av, BuildOptions(overrides=SpringOverride(g=(0.0, 0.0, 0.0))))
    ref = ChainSet.from_avatar(av, BuildOptions(overrides=SpringOverride(g=(0.0, 0.0, 0.0))))
    world = _still(av)
    impulse(cs, (0.0, 0.0, 2.0))
    cs.step(world)
    ref.step(world)
    assert cs.tails[:, 2].min() > 0.005            # both tails moved toward +Z
    assert np.array_equal(ref.tails, ref.prev_tails)
    for _ in range(10):
        cs.step(world)
    assert not cs.sections["forces"].active[()]   # off again: no cost
    with pytest.raises(HairParamsError, match="above 10"):
        impulse(cs, (0.0, MAX_IMPULSE + 0.1, 0.0))
    with pytest.raises(HairParamsError, match="three finite"):
        impulse(cs, (0.0, float("nan"), 0.0))


def test_out_of_range_wind_is_a_clear_error():
    with pytest.raises(HairParamsError, match=r"wind.strength: 41.0 is outside \[0, 40\] m/s"):
        Wind(strength=MAX_WIND + 1.0)
    with pytest.raises(HairParamsError, match="wind.gusts"):
        Wind(strength=1.0, gusts=1.5)
    with pytest.raises(HairParamsError, match="no direction"):
        Wind(direction=(0.0, 0.0, 0.0), strength=1.0)
    with pytest.raises(HairParamsError, match="wind.seed"):
        Wind(seed=-1)
    with pytest.raises(HairParamsError, match="wind.direction"):
        Wind(direction=(1.0, "x", 0.0))


def _gusty_replay(avatar, frame_times_ns, **build):
    from avatars.clips.head_turn import head_turn_rotation
    from runtime.clock import NS_PER_S, FixedStepDriver

    t0 = 987_654_321_000
    cs = ChainSet.from_avatar(avatar, **build)
    set_wind(cs, Wind(direction=(1.0, 0.0, 0.5), strength=12.0, gusts=0.8, seed=11, ramp_s=0.3))
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.rest.copy()
    states = {}

    def step(t_ns):
        poser.world(head_turn_rotation((t_ns - t0) / NS_PER_S), out=w)
        cs.step(w)
        states[len(states) + 1] = (cs.tails.copy(), cs.velocities.copy())

    drv = FixedStepDriver(step, t0_ns=t0, max_substeps=16)
    for t in frame_times_ns:
        drv.advance(t)
        cs.apply(w.copy(), alpha=0.5)
    return states, t0, NS_PER_S


@pytest.mark.parametrize("limited", [False, True])
def test_gusts_are_bit_identical_at_every_frame_rate(godette, limited):
    """check-fps with gusty wind on (and with a cone limit on every joint): 24/30/60/144 fps
    against 120 fps, every common substep."""
    from avatars import JointLimit

    build = {"limits": {"*": JointLimit("cone", 0.3)}} if limited else {}
    frames = lambda t0, ns, fps: [t0 + (f * ns) // fps for f in range(1, int(2.0 * fps) + 1)]  # noqa: E731
    _, t0, ns = _gusty_replay(godette, [], **build)
    reference, _, _ = _gusty_replay(godette, frames(t0, ns, 120), **build)
    assert len(reference) == 240
    still = ChainSet.from_avatar(godette)
    assert float(np.abs(reference[240][0] - still.tails).max()) > 0.01     # the wind does move the hair
    for fps in (24, 30, 60, 144):
        states, _, _ = _gusty_replay(godette, frames(t0, ns, fps), **build)
        common = sorted(set(states) & set(reference))
        assert len(common) >= 228, fps
        for n in common:
            assert np.array_equal(states[n][0], reference[n][0]), f"{fps} fps: tails differ at substep {n}"
            assert np.array_equal(states[n][1], reference[n][1]), f"{fps} fps: velocities differ at substep {n}"


def test_a_wind_change_mid_motion_is_continuous(godette):
    """A strong change of the wind during a head turn (what POST /wind does between frames): no
    tail's travel in the substeps of the change differs from its travel one substep earlier by
    more than the motion alone ever changes a substep's travel (the second difference of the run
    without the change): the tails take no step beyond one substep's travel."""
    from avatars.clips.head_turn import head_turn_rotation

    poser = SubtreePoser(godette.skeleton, godette.head_node())

    def run(change):
        cs = ChainSet.from_avatar(godette)
        set_wind(cs, Wind(direction=(1.0, 0.0, 0.0), strength=4.0, ramp_s=0.0))
        xs = []
        for n in range(360):
            if change and n == 180:
                set_wind(cs, Wind(direction=(-0.3, 0.2, 1.0), strength=25.0, gusts=0.5, ramp_s=0.5))
            cs.step(poser.world(head_turn_rotation(n / 120.0)).copy())
            xs.append(cs.tails.copy())
        return np.array(xs)

    base, changed = run(False), run(True)
    travel = lambda xs: np.linalg.norm(np.diff(xs, axis=0), axis=2)  # noqa: E731
    kink = lambda xs: np.linalg.norm(xs[2:] - 2 * xs[1:-1] + xs[:-2], axis=2)  # noqa: E731
    assert float(np.abs(changed - base).max()) > 0.01            # the change does act
    limit = kink(base).max()
    assert np.abs(np.diff(travel(changed)[176:190], axis=0)).max() <= limit
    assert kink(changed)[176:190].max() <= limit


def test_the_vrm_verlet_takes_the_wind_through_its_history():
    """In the "vrm" mode the velocity is the tail history (x − x⁻): the wind's h² a displacement
    comes out of it, so the strand leans into the wind as in the other modes."""
    av = strand_avatar([(0.0, 1.5, 0.0), (0.0, 1.3, 0.0)], gravity_power=0.0)
    for solver in ("vrm", "legacy"):
        cs = ChainSet.from_avatar(av, solver=solver)
        world = _still(av)
        set_wind(cs, Wind(direction=(0.0, 0.0, 1.0), strength=8.0, ramp_s=0.0))
        for _ in range(600):
            cs.step(world)
        d = cs.tails[0] - np.array([0.0, 1.5, 0.0])
        assert d[2] > 0.005 and abs(d[0]) < 1e-12, solver
