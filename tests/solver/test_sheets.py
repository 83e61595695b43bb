"""Linked sheets (issue 29 items 1 and 5): a link pair's behaviour against an independent
model of the pass, the caps and their counters, the neighbours the groups link, links off,
bit-identity across frame rates, allocation-free substeps, the phase measure."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from avatars import Avatar, Meta, Skeleton, Spring, SpringJoint
from avatars.clips.head_turn import head_turn_rotation
from runtime.clock import NS_PER_S, FixedStepDriver
from solver.chains import ChainSet
from solver.errors import SolverOptionError
from solver.eval.posing import SubtreePoser
from solver.eval.sheet_phase import PhaseMeter
from solver.params import SpringOverride
from solver.sheets import LinkSetting, group_links

H = 1.0 / 120
D0 = 0.04          # the pair's roots (and rest tails) are this far apart, metres
L0 = 0.1           # link length, metres
EXACT = 1e-12      # the kernel and the model of the pass agree to round-off (metres)
FREE = SpringOverride(k=0.0, c=0.0, g=(0.0, 0.0, 0.0))    # no spring force: only the link acts


def _pair() -> Avatar:
    """Two one-segment strands hanging (−Y, VRM 0.x tails) from a head node, roots ±D0/2 on x."""
    names, parents = ["head", "a", "b"], np.array([-1, 0, 0], np.int64)
    t = np.array([[0.0, 0.0, 0.0], [-D0 / 2, 0.0, 0.0], [D0 / 2, 0.0, 0.0]])
    rot = np.zeros((3, 4))
    rot[:, 3] = 1.0
    sk = Skeleton(names=tuple(names), parents=parents, rest_translation=t, rest_rotation=rot,
                  rest_scale=np.ones((3, 3)))
    springs = tuple(Spring(name=f"strand_{n}", joints=(SpringJoint(node=i),), tail_offset=np.array([0.0, -L0, 0.0]))
                    for i, n in ((1, "a"), (2, "b")))
    return Avatar(path="<pair>", vrm_version="0.0", meta=Meta(name="pair"), skeleton=sk, humanoid={"head": 0},
                  springs=springs)


def _chains(rate, stretch=10.0, squish=1.0, **kw):
    return ChainSet.from_avatar(_pair(), overrides=FREE,
                                links={"strand_*": LinkSetting(link=True, rate=rate, stretch=stretch, squish=squish)},
                                **kw)


def _spread(cs, theta):
    """Both tails turned by ``theta`` (rad) away from each other in the x-y plane, at rest speed."""
    s, c = math.sin(theta), math.cos(theta)
    cs.state.tails[0] = (-D0 / 2 - L0 * s, -L0 * c, 0.0)
    cs.state.tails[1] = (D0 / 2 + L0 * s, -L0 * c, 0.0)
    cs.state.prev_tails[:] = cs.state.tails
    cs.state.velocities[:] = 0.0


def _model(theta, rate, n, lo=0.0, hi=math.inf):
    """The pass in the plane, independently: the distance D = 2 x goes to D0 + e^(−r h)(D − D0),
    clamped to [lo, hi] D0, half the correction each; then each tail back onto its circle.
    Returns the half-distances x_n of the right tail from the middle."""
    rx = D0 / 2
    x, y = rx + L0 * math.sin(theta), -L0 * math.cos(theta)
    keep = math.exp(-rate * H)
    out = []
    for _ in range(n):
        d = 2.0 * x
        target = min(max(D0 + keep * (d - D0), lo * D0), hi * D0)
        x -= 0.5 * (d - target)
        u, v = x - rx, y
        r = math.hypot(u, v)
        x, y = rx + L0 * u / r, L0 * v / r
        out.append(x)
    return np.array(out)


def test_a_spread_pair_closes_at_the_sheet_rate_without_gaining_speed():
    rate, theta, n = 30.0, 0.2, 90
    cs = _chains(rate)
    assert cs.link_count == 1 and cs.report.sheet_links == (("strand_a", "strand_b", 1),)
    rest = cs.rest_arc_tails(_pair().skeleton.rest_world)
    world = _pair().skeleton.rest_world.copy()
    _spread(cs, theta)
    expect = _model(theta, rate, n)
    got = []
    for _ in range(n):
        cs.step(world)
        got.append(cs.tails[1, 0])
        assert np.abs(cs.velocities).max() < 1e-9      # a correction never becomes velocity
    np.testing.assert_allclose(got, expect, rtol=0, atol=EXACT)
    # mirror images, and on the way back to rest: the error is e^(-r t) of the start, to first order
    np.testing.assert_allclose(cs.tails[0, 0], -cs.tails[1, 0], rtol=0, atol=EXACT)
    err0 = 2 * L0 * math.sin(theta)
    assert abs((2 * cs.tails[1, 0] - D0) / err0 - math.exp(-rate * n * H)) < 0.02
    assert np.linalg.norm(cs.tails - rest, axis=1).max() < err0
    assert cs.cap_bindings == 0


@pytest.mark.parametrize("kind", ["stretch", "squish"])
def test_a_cap_holds_the_distance_and_is_counted(kind):
    theta = 0.15 if kind == "stretch" else -0.08
    lo, hi = (0.0, 1.1) if kind == "stretch" else (0.9, math.inf)
    cs = _chains(0.0, stretch=hi - 1.0 if kind == "stretch" else 10.0, squish=1.0 - lo if kind == "squish" else 1.0)
    world = _pair().skeleton.rest_world.copy()
    _spread(cs, theta)
    cs.step(world)
    np.testing.assert_allclose(cs.tails[1, 0], _model(theta, 0.0, 1, lo, hi)[0], rtol=0, atol=EXACT)
    assert cs.cap_bindings == 1
    assert cs.last_caps == ((1, 0) if kind == "stretch" else (0, 1))
    for _ in range(5):             # held at the cap (no pull back: rate 0); the circles' second-order
        cs.step(world)             # push past it binds it again while it lasts
    np.testing.assert_allclose(cs.tails[1, 0], _model(theta, 0.0, 6, lo, hi)[-1], rtol=0, atol=EXACT)
    assert 2 <= cs.cap_bindings <= 6
    d = cs.tails[1, 0] - cs.tails[0, 0]
    assert abs(d - (hi if kind == "stretch" else lo) * D0) < 1e-4 * D0


def test_a_link_takes_its_share_of_the_separating_speed_and_keeps_the_common_motion():
    rate = 30.0
    runs = {}
    for label, kw in (("free", {"sheets": "off"}), ("capped", {"stretch": 0.05})):
        cs = _chains(rate, **kw)
        world = _pair().skeleton.rest_world.copy()
        _spread(cs, 0.1)                            # already beyond a 5 % cap
        cs.state.velocities[0] = (-0.2, 0.0, 0.3)   # apart at 0.2 m/s each, together at 0.3 m/s across
        cs.state.velocities[1] = (0.2, 0.0, 0.3)
        cs.step(world)
        runs[label] = cs.velocities.copy()
    free, capped = runs["free"], runs["capped"]
    assert free[1, 0] - free[0, 0] > 0.3                      # without links they keep separating
    # the link (at its cap) leaves e^(-r h) of the separating speed: the correction adds none
    assert abs((capped[1, 0] - capped[0, 0]) - math.exp(-rate * H) * (free[1, 0] - free[0, 0])) < EXACT
    assert abs(capped[0, 0] + capped[1, 0]) < EXACT and abs(free[0, 0] + free[1, 0]) < EXACT
    np.testing.assert_array_equal(capped[:, 2], free[:, 2])               # the common motion stays


def test_links_are_off_unless_asked_for_and_settings_are_checked(generated_layered):
    assert ChainSet.from_avatar(generated_layered).link_count == 0
    assert _chains(30.0, sheets="off").link_count == 0
    assert _chains(30.0, solver="legacy").link_count == 0        # solved in the rest-shape relaxation only
    with pytest.raises(SolverOptionError, match="squish"):
        LinkSetting(squish=1.5)
    with pytest.raises(SolverOptionError, match="sheets"):
        _chains(30.0, sheets="sometimes")


def test_a_layer_group_links_each_strand_to_its_neighbours(generated_layered):
    cs = ChainSet.from_avatar(generated_layered, links={"Inner*": LinkSetting(link=True)})
    pairs = {(a, b) for a, b, _ in cs.report.sheet_links}
    # Inner1/2 hang either side of the back, 3/4 next to them, ... 9/10 at the sides
    assert pairs == {("Inner1", "Inner2")} | {(f"Inner{k}", f"Inner{k + 2}") for k in range(1, 9)}
    assert cs.link_count == 9 * 5              # every joint past the root of the 6-joint strands


def test_group_neighbours_of_a_row_and_a_fan():
    row = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0], [3.1, 0, 0]])
    down = np.tile([0.0, -1.0, 0.0], (4, 1))
    assert group_links(row, down) == [(0, 1), (1, 2), (2, 3)]
    fan = down.copy()
    fan[3] = (1.0, 0.0, 0.0)                 # pointing 90° away: not part of the sheet
    assert group_links(row, fan) == [(0, 1), (1, 2)]


def _replay(avatar, links, frame_times_ns, t0):
    cs = ChainSet.from_avatar(avatar, links=links)
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.rest.copy()
    states = []

    def step(t_ns: int) -> None:
        poser.world(head_turn_rotation((t_ns - t0) / NS_PER_S), out=w)
        cs.step(w)
        states.append((cs.tails.copy(), cs.velocities.copy()))

    drv = FixedStepDriver(step, t0_ns=t0, max_substeps=16)
    for t in frame_times_ns:
        drv.advance(t)
        cs.apply(w.copy(), alpha=0.5)
    return states, cs


def test_linked_sheets_are_bit_identical_at_any_frame_rate(generated_layered):
    links = {"Inner*": LinkSetting(link=True, rate=60.0), "Outer*": LinkSetting(link=True, stretch=0.05)}
    t0, seconds = 123_456_789_000, 2.0
    frames = {fps: [t0 + (f * NS_PER_S) // fps for f in range(1, int(seconds * fps) + 1)] for fps in (24, 60, 120, 144)}
    ref, cs = _replay(generated_layered, links, frames[120], t0)
    assert cs.link_count > 0 and cs.cap_bindings > 0           # links and caps were at work
    for fps in (24, 60, 144):
        got, _ = _replay(generated_layered, links, frames[fps], t0)
        n = min(len(got), len(ref))
        assert n >= int(seconds * 120) - 3
        for k in range(n):
            assert np.array_equal(got[k][0], ref[k][0]) and np.array_equal(got[k][1], ref[k][1]), (fps, k)


def test_linked_substeps_allocate_nothing(generated_layered):
    from numba.core.runtime import _nrt_python, rtsys

    cs = ChainSet.from_avatar(generated_layered, links={"*": LinkSetting(link=True, stretch=0.05)})
    poser = SubtreePoser(generated_layered.skeleton, generated_layered.head_node())
    worlds = np.array([poser.world(head_turn_rotation(n / 120)) for n in range(1, 201)])
    for w in worlds[:10]:
        cs.step(w)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for w in worlds:
        cs.step(w)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(st.size_diff for st in after.compare_to(before, "filename") if st.size_diff > 0)
    assert grown < 1024, f"{grown} bytes allocated over 200 substeps"
    _nrt_python.memsys_enable_stats()
    cs.step_many(worlds[:10])
    a0 = rtsys.get_allocation_stats().alloc
    cs.step_many(worlds[:10])
    a1 = rtsys.get_allocation_stats().alloc
    cs.step_many(worlds)
    a2 = rtsys.get_allocation_stats().alloc
    assert a1 - a0 == a2 - a1 <= 3
    assert cs.cap_bindings > 0


def test_the_phase_measure_reads_the_phase_of_two_swings():
    t = np.arange(0, 2.0, 1 / 30)[:60]                 # two whole periods of 1 s at 30 Hz
    meter = PhaseMeter(np.array([[0, 1], [2, 3]]))
    arc = np.zeros((4, 3))
    for ti in t:
        tails = np.zeros((4, 3))
        tails[0, 0] = 0.01 * math.sin(2 * math.pi * ti)
        tails[1, 0] = 0.01 * math.sin(2 * math.pi * ti + math.radians(60.0)) + 0.5   # offset: removed
        tails[2, 2] = 0.02 * math.sin(2 * math.pi * ti)
        tails[3, 2] = 0.02 * math.sin(2 * math.pi * ti)
        meter.update(tails, arc)
    res = meter.result()
    np.testing.assert_allclose(res.phase_deg, [60.0, 0.0], atol=1e-6)
    # relative swing of two 10 mm sinusoids 60° apart: 10 mm rms amplitude ratio 2 sin(30°) / √2
    np.testing.assert_allclose(res.shear_mm[0], 10.0 * 2 * math.sin(math.radians(30.0)) / math.sqrt(2), rtol=1e-9)
    assert res.shear_mm[1] == 0.0


def test_the_config_links_springs_and_names_bad_values(generated_layered):
    from runtime.errors import SettingsError
    from runtime.rig import AvatarRig
    from runtime.rig.hair_params import parse_hair, parse_links

    hair = {"link_stretch": 0.1, "springs": {"Inner*": {"link": True, "link_rate": 20, "link_shear_rate": 4},
                                             "Bang*": {"k": 90.0}}}
    assert parse_links(hair) == {"Inner*": LinkSetting(link=True, rate=20.0, stretch=0.1, shear_rate=4.0),
                                 "*": LinkSetting(stretch=0.1)}
    assert parse_hair(hair)["Bang*"].k == 90.0         # the spring parameters are read as before
    assert AvatarRig(generated_layered, hair=hair).chains.link_count == 9 * 5
    with pytest.raises(SettingsError, match=r"hair\.springs\.Inner\*\.link: 3"):
        parse_links({"springs": {"Inner*": {"link": 3}}})
    with pytest.raises(SettingsError, match=r"hair\.link_squish: 2 is above 1"):
        parse_links({"link_squish": 2})
    with pytest.raises(SettingsError, match=r"hair\.link_shear_rate"):
        parse_links({"link_shear_rate": -1})
    with pytest.raises(SettingsError, match="unknown hair setting 'linkk'"):
        parse_hair({"springs": {"Inner*": {"linkk": True}}})


def test_linked_chains_stay_within_their_angle_limits(generated_layered):
    """Angle limits keep the last word: a link that pulls a joint beyond its limit is
    undone by the limit pass run again on the chains the links moved."""
    from avatars import JointLimit
    from tests.solver.test_limits import LIMIT_TOL, _violations

    cone = JointLimit("cone", math.radians(8.0), source="config")
    cs = ChainSet.from_avatar(generated_layered, limits={"Inner*": cone},
                              links={"Inner*": LinkSetting(link=True, rate=200.0, stretch=0.02, squish=0.02)})
    limits = [{**lim, "rotation": cone.rotation} for lim in cs.report.angle_limits]
    assert cs.link_count == 45 and len(limits) == 10 * 5
    poser = SubtreePoser(generated_layered.skeleton, generated_layered.head_node())
    worst = -np.inf
    for n in range(240):
        w = poser.world(head_turn_rotation(2.0 * n / 120.0)).copy()
        cs.step(w)
        if n % 4 == 0:
            worst = max(worst, _violations(cs, generated_layered, w, limits))
    assert cs.cap_bindings > 0 and worst <= LIMIT_TOL


def test_a_sideways_error_decays_at_the_shear_rate_not_the_sheet_rate():
    """Tails swung out of phase (one forward, one back: across the rest offset) are pulled
    toward their rest offset at the shear rate r_s; the sheet rate r plays no part (model:
    z -> e^(−r_s h) z, then each tail back onto its circle)."""
    phi, n, shear = 0.3, 30, 12.0
    for rate in (5.0, 80.0):
        cs = ChainSet.from_avatar(_pair(), overrides=FREE, links={"strand_*": LinkSetting(
            link=True, rate=rate, shear_rate=shear, stretch=10.0, squish=1.0)})
        world = _pair().skeleton.rest_world.copy()
        for k, sign in ((0, -1.0), (1, 1.0)):
            cs.state.tails[k] = (sign * D0 / 2, -L0 * math.cos(phi), sign * L0 * math.sin(phi))
        cs.state.prev_tails[:] = cs.state.tails
        cs.state.velocities[:] = 0.0
        y, z = -L0 * math.cos(phi), L0 * math.sin(phi)
        keep = math.exp(-shear * H)
        for _ in range(n):
            cs.step(world)
            z *= keep
            r = math.hypot(y, z)
            y, z = L0 * y / r, L0 * z / r
            np.testing.assert_allclose(cs.tails[1], (D0 / 2, y, z), rtol=0, atol=EXACT)
            np.testing.assert_allclose(cs.tails[0], (-D0 / 2, y, -z), rtol=0, atol=EXACT)
        assert np.abs(cs.velocities).max() < 1e-9      # a correction never becomes velocity
    assert cs.cap_bindings == 0
