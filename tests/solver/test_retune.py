"""Parameters in place (ChainSet.set_params / set_overrides / get_params) and the motion state
taken over across a solver switch (ChainSet.copy_state_from, from_avatar(state_from=...)).

Continuity is measured on the standard head turn (docs/design.md §4.5): the largest tail
displacement across the substep right after the change is compared with the largest tail
displacement of the neighbouring substeps (one substep's travel). Rebuilding the chain set
(what the runtime did before: the hair snaps to rest) fails that by a factor 5-13.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from solver import layout as L
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser
from solver.eval.synthetic import hair_cap_avatar
from solver.params import SpringOverride

#: Largest tail displacement across the switching substep, as a multiple of the largest tail
#: displacement in the NEIGHBOURS substeps before and after it. A change of parameters or of
#: solver changes the motion from that substep on — Godette's damping cut to 3/s lets the
#: next substep travel 1.3-1.5x farther, the stiff rest-shape spring taking over the hair cap
#: from the sagging vrm Verlet pulls it 1.9x farther — but the hair continues from where it
#: is; a rebuild or a new solver without the state snaps it to rest (5.7-12.6x).
SWITCH_TRAVEL_TOLERANCE = 2.5
NEIGHBOURS = 4
#: Substeps of the standard head turn (120 Hz) where the switches happen: t = 1, 2, 3 s.
SWITCH_AT = (120, 240, 360)


@pytest.fixture(scope="module")
def default_avatar():
    from avatars import load_avatar
    from avatars.generate import default_avatar_path

    return load_avatar(default_avatar_path())


@pytest.fixture(scope="module")
def cap():
    """A synthetic hair cap: 64 joints in 8-joint chains, 16 colliders, gravity."""
    return hair_cap_avatar(64, colliders=16)


def _turn(avatar, cs, n_steps: int, *, switch_at: int | None = None, switch=None, first: int = 1):
    """Step ``cs`` through substeps first..first+n_steps-1 of the standard head turn; at substep
    ``switch_at`` call ``switch(cs, world)`` first (it may return a new chain set).
    Returns (chain set, tails (n_steps + 1, S, 3) from before the first substep on)."""
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.rest.copy()
    if first > 1:
        poser.world(head_turn_rotation((first - 1) / 120.0), out=w)
    out = [cs.tails.copy()]
    for n in range(first, first + n_steps):
        if n == switch_at:
            got = switch(cs, w)
            cs = got if isinstance(got, ChainSet) else cs
        poser.world(head_turn_rotation(n / 120.0), out=w)
        cs.step(w)
        out.append(cs.tails.copy())
    return cs, np.array(out)


def _switch_ratio(tails: np.ndarray, s: int) -> float:
    """Largest tail displacement across substep s over the largest in the neighbouring
    substeps (``tails[n]`` after substep n)."""
    d = np.linalg.norm(np.diff(tails, axis=0), axis=2).max(axis=1)      # d[n - 1]: across substep n
    around = np.concatenate([d[s - 1 - NEIGHBOURS:s - 1], d[s:s + NEIGHBOURS]])
    return float(d[s - 1] / around.max())


def _median(a) -> float:
    return float(np.median(a))


CHANGES = {
    "k x2": lambda cs: dict(k=2.0 * _median(cs.params.k)),
    "k x0.5": lambda cs: dict(k=0.5 * _median(cs.params.k)),
    "c 3/s": lambda cs: dict(c=3.0),
    "c x2": lambda cs: dict(c=2.0 * _median(cs.params.c)),
    "gravity": lambda cs: dict(gravity=(0.0, -9.81, 0.0)),
    "hit x0.5": lambda cs: dict(hit_radius=0.5 * float(cs.params.hit_radius.max())),
    "all": lambda cs: dict(k=2.0 * _median(cs.params.k), c=3.0, gravity=(0.0, -9.81, 0.0),
                           hit_radius=0.5 * float(cs.params.hit_radius.max())),
}


@pytest.mark.parametrize("which", ["godette", "cap"])
def test_retuning_mid_turn_keeps_the_hair_where_it_is(which, request):
    avatar = request.getfixturevalue(which)
    for name, change in CHANGES.items():
        for s in SWITCH_AT:
            seen = {}

            def switch(cs, world, change=change, seen=seen):
                before = cs.state.array.copy(), cs.scratch.array.copy()
                cs.set_params(**change(cs))
                # the state (and the substep scratch) are not touched, let alone reset
                seen["kept"] = (np.array_equal(cs.state.array, before[0])
                                and np.array_equal(cs.scratch.array, before[1]))
                seen["moving"] = bool(np.abs(cs.velocities).max() > 0.0)

            _, tails = _turn(avatar, ChainSet.from_avatar(avatar), s + NEIGHBOURS, switch_at=s, switch=switch)
            assert seen == {"kept": True, "moving": True}, (name, s)
            ratio = _switch_ratio(tails, s)
            assert ratio <= SWITCH_TRAVEL_TOLERANCE, (name, s, ratio)
    # the measure has teeth: a rebuild (the old POST /hair) snaps the hair to rest
    s = SWITCH_AT[1]
    _, tails = _turn(avatar, ChainSet.from_avatar(avatar), s + NEIGHBOURS, switch_at=s,
                     switch=lambda cs, w: ChainSet.from_avatar(avatar))
    assert _switch_ratio(tails, s) > 1.5 * SWITCH_TRAVEL_TOLERANCE


def test_a_larger_hit_radius_pushes_hair_out_as_a_build_with_it_would(cap):
    """A larger hit radius makes links that rest against a collider overlap it: the next
    substep's contact pushes them out (on the hair cap at t = 1 s, +25 % radius moves the
    tails ~10 mm, 3.7x a substep's travel: the link turns about its root until its contact
    point clears). That push is exactly what a chain set built with the larger radius does
    from the same state — the state itself is kept."""
    s = SWITCH_AT[0]
    hit = 1.25 * float(ChainSet.from_avatar(cap).params.hit_radius.max())
    kept = {}

    def switch(cs, world):
        state = cs.state.array.copy()
        cs.set_params(hit_radius=hit)
        kept["state"] = np.array_equal(cs.state.array, state)
        built = ChainSet.from_avatar(cap, overrides=SpringOverride(hit_radius=hit), state_from=cs)
        kept["built"] = built

    cs, tails = _turn(cap, ChainSet.from_avatar(cap), s, switch_at=s, switch=switch)
    assert kept["state"]
    assert _switch_ratio(np.concatenate([tails, tails[-1:]]), s) > 1.0   # a real push here...
    built = kept["built"]
    poser = SubtreePoser(cap.skeleton, cap.head_node())
    built.step(poser.world(head_turn_rotation(s / 120.0)))
    assert np.array_equal(built.tails, cs.tails)                           # ...the contact response
    assert np.array_equal(built.velocities, cs.velocities)


@pytest.mark.parametrize("which", ["godette", "cap"])
@pytest.mark.parametrize("solver", ["rest-shape", "legacy", "vrm"])
def test_retuning_to_the_built_values_changes_no_bit(which, solver, request):
    """set_params with the values the set was built with (overrides), and set_overrides with
    the build's own overrides (None: the file's per-joint values): the buffers stay
    bit-identical, so the motion is bit-identical to never retuning."""
    avatar = request.getfixturevalue(which)
    ov = SpringOverride(k=55.0, c=3.5, g=(0.0, -4.0, 0.5), hit_radius=0.012)
    for overrides, retune in (
        (ov, lambda cs: cs.set_params(k=55.0, c=3.5, gravity=(0.0, -4.0, 0.5), hit_radius=0.012)),
        ({"*": ov}, lambda cs: cs.set_overrides({"*": ov})),
        (None, lambda cs: cs.set_overrides(None)),
    ):
        ref = ChainSet.from_avatar(avatar, solver=solver, overrides=overrides)
        _, want = _turn(avatar, ref, 300)
        cs = ChainSet.from_avatar(avatar, solver=solver, overrides=overrides)

        def switch(cs_, world, retune=retune):
            F = cs_._F.copy()
            retune(cs_)
            assert np.array_equal(cs_._F, F)

        _, got = _turn(avatar, cs, 300, switch_at=150, switch=switch)
        assert np.array_equal(got, want)
        assert cs.report == ref.report


@pytest.mark.parametrize("solver", ["rest-shape", "legacy", "vrm"])
def test_retuning_gives_the_parameters_a_build_with_those_overrides_has(godette, cap, solver):
    """What a retune rederives (exp(-c h), the gravity preload, hit radii, the chain reach,
    the rest-overlap allowances, the report's rest overlaps) equals a build with the same
    overrides; the state is the chain set's own (its history). Retuned before the first
    substep, the whole run is the build's, bit for bit."""
    ov = {"boneGroup0/*": SpringOverride(k=80.0, c=5.0, g=(0.0, -9.81, 0.0), hit_radius=0.03),
          "*": SpringOverride(k=40.0, hit_radius=0.006)}
    for avatar in (godette, cap):
        built = ChainSet.from_avatar(avatar, solver=solver, overrides=ov)
        cs = ChainSet.from_avatar(avatar, solver=solver)
        _, _ = _turn(avatar, cs, 100)
        state = cs.state.array.copy()
        cs.set_overrides(ov)
        assert np.array_equal(cs.params.array, built.params.array)
        assert np.array_equal(cs.sections["allowances"].array, built.sections["allowances"].array)
        assert np.array_equal(cs.sections["chains"].reach, built.sections["chains"].reach)
        assert cs.report == built.report
        assert np.array_equal(cs.state.array, state)          # its own history, not the build's rest
        assert not np.array_equal(cs.state.array, built.state.array)
        # retuned before any substep: the same run as the build
        fresh = ChainSet.from_avatar(avatar, solver=solver)
        fresh.set_overrides(ov)
        assert np.array_equal(fresh._F, built._F)
        _, a = _turn(avatar, fresh, 240)
        _, b = _turn(avatar, built, 240)
        assert np.array_equal(a, b)


def test_set_params_by_spring_name_and_reading_back(godette):
    cs = ChainSet.from_avatar(godette)
    before = cs.get_params()
    assert list(before) == list(cs.chain_names)
    changed = cs.set_params(k=90.0, gravity=[0, -2, 0], springs="boneGroup0/*")
    assert changed and all(n.startswith("boneGroup0/") for n in changed)
    after = cs.get_params()
    for name in cs.chain_names:
        p = after[name]
        assert len(p.nodes) == len(p.k) == len(p.c) == len(p.gravity) == len(p.hit_radius)
        if name in changed:
            assert p.k == (90.0,) * len(p.k) and p.gravity == ((0.0, -2.0, 0.0),) * len(p.k)
            assert p.c == before[name].c and p.hit_radius == before[name].hit_radius
        else:
            assert p == before[name]
    assert after[changed[0]].as_dict()["gravity"][0] == [0.0, -2.0, 0.0]
    # rest-shape: the preload follows gravity (across-link part, anchor frame); legacy has none
    rows = cs.spring_segments("boneGroup0/*")
    assert np.all(np.linalg.norm(cs.params.gravity_preload[rows], axis=1) > 0.0)
    legacy = ChainSet.from_avatar(godette, solver="legacy")
    legacy.set_params(gravity=(0, -2, 0))
    assert np.all(legacy.params.gravity_preload == 0.0)
    assert [float(d) for d in cs.params.damp] == [float(np.exp(-c * cs.h)) for c in cs.params.c]


def test_a_retune_writes_only_parameters_and_what_derives_from_them(cap):
    cs = ChainSet.from_avatar(cap)
    _turn(cap, cs, 120)
    F, I = cs._F.copy(), cs._I.copy()  # noqa: E741
    cs.set_params(k=10.0, c=1.0, gravity=(0.1, -3.0, 0.0), hit_radius=0.02)
    assert np.array_equal(cs._I, I)
    touched = np.zeros(F.size, bool)
    for sec, cols in ((L.SEG_PARAMS, None), (L.ALLOWANCE, None), (L.CHAIN, (L.K_REACH, L.K_REACH + 1))):
        of = int(I[getattr(L, sec.header)])
        if sec.flat:
            touched[of:of + L.row_count(sec, I)] = True
            continue
        c0, c1 = cols or (getattr(L, sec.fields[0].const), getattr(L, sec.fields[0].const) + sec.width)
        rows = touched[of:of + L.section_size(sec, L.row_count(sec, I))].reshape(-1, L.stride(sec))
        rows[:, c0:c1] = True
    changed = cs._F != F
    assert changed.any() and not (changed & ~touched).any()


@pytest.mark.parametrize("kwargs, message", [
    (dict(k=-1.0), "k=-1.0 is below 0"),
    (dict(c=math.nan), "c=nan is not finite"),
    (dict(hit_radius=math.inf), "hit_radius=inf is not finite"),
    (dict(k="stiff"), "k='stiff' is not a number"),
    (dict(c=True), "c=True is not a number"),
    (dict(gravity=(0.0, -9.81)), "gravity=(0.0, -9.81) is not three numbers"),
    (dict(gravity=(0.0, math.inf, 0.0)), "gravity=(0.0, inf, 0.0) is not finite"),
    (dict(gravity="down"), "gravity='down' is not three numbers"),
    (dict(k=1.0, springs="nothing/*"), "springs='nothing/*' matches no spring"),
])
def test_set_params_refuses_bad_values_and_changes_nothing(godette, kwargs, message):
    cs = ChainSet.from_avatar(godette)
    F = cs._F.copy()
    with pytest.raises(ValueError, match=re.escape(message)):
        cs.set_params(k=1.0, **kwargs) if "k" not in kwargs else cs.set_params(**kwargs)
    assert np.array_equal(cs._F, F)
    with pytest.raises(ValueError, match=r"override 'boneGroup0/FrontHair_L'\.c=-2\.0 is below 0"):
        cs.set_overrides({"boneGroup0/FrontHair_L": SpringOverride(c=-2.0)})
    assert np.array_equal(cs._F, F)


# ------------------------------------------------------------------ the state across a solver switch
@pytest.mark.parametrize("which", ["godette", "cap"])
def test_switching_solvers_mid_turn_keeps_the_hair_where_it_is(which, request):
    """rest-shape -> legacy -> vrm -> rest-shape at t = 1, 2, 3 s of the head turn, each new chain
    set built with state_from=the running one: the hair continues (no snap to rest)."""
    avatar = request.getfixturevalue(which)
    order = ["legacy", "vrm", "rest-shape"]
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.rest.copy()
    cs = ChainSet.from_avatar(avatar, solver="rest-shape")
    tails = [cs.tails.copy()]
    switches = {s: order[j] for j, s in enumerate(SWITCH_AT)}
    for n in range(1, SWITCH_AT[-1] + NEIGHBOURS + 1):
        if n in switches:
            new = ChainSet.from_avatar(avatar, solver=switches[n], state_from=cs)
            assert new.mode == switches[n]
            for f in L.SEG_STATE.fields:          # every segment's state taken over, bit for bit
                assert np.array_equal(getattr(new.state, f.attr), getattr(cs.state, f.attr))
            for attr in L.CHAIN_STATE:
                assert np.array_equal(getattr(new.sections["chains"], attr), getattr(cs.sections["chains"], attr))
            cs = new
        poser.world(head_turn_rotation(n / 120.0), out=w)
        cs.step(w)
        tails.append(cs.tails.copy())
    tails = np.array(tails)
    for s in SWITCH_AT:
        assert _switch_ratio(tails, s) <= SWITCH_TRAVEL_TOLERANCE, (s, _switch_ratio(tails, s))
    assert cs.auto_resets == 0
    # without the state: the new solver starts at rest and the hair snaps
    _, snapped = _turn(avatar, ChainSet.from_avatar(avatar), SWITCH_AT[1] + NEIGHBOURS, switch_at=SWITCH_AT[1],
                       switch=lambda cs_, w_: ChainSet.from_avatar(avatar, solver="legacy"))
    assert _switch_ratio(snapped, SWITCH_AT[1]) > 1.5 * SWITCH_TRAVEL_TOLERANCE


@pytest.mark.parametrize("there", ["legacy", "vrm"])
def test_a_switch_there_and_back_changes_no_bit(godette, cap, there):
    """rest-shape -> another solver -> rest-shape between two substeps: the state is all a
    solver carries, so the motion continues bit for bit as if nothing happened."""
    for avatar in (godette, cap):
        _, want = _turn(avatar, ChainSet.from_avatar(avatar), 300)

        def switch(cs, world):
            away = ChainSet.from_avatar(avatar, solver=there, state_from=cs)
            return ChainSet.from_avatar(avatar, state_from=away)

        _, got = _turn(avatar, ChainSet.from_avatar(avatar), 300, switch_at=150, switch=switch)
        assert np.array_equal(got, want)


def test_copy_state_from_matches_joints_by_node(godette, cap):
    old = ChainSet.from_avatar(godette)
    _turn(godette, old, 100)
    new = ChainSet.from_avatar(godette, solver="vrm", collisions=False)
    assert new.copy_state_from(old) == new.segment_count
    assert np.array_equal(new.tails, old.tails) and np.array_equal(new.velocities, old.velocities)
    assert new.steps == 0                      # counters are the chain set's own
    # a partial match: the others stay where they were (or at rest under ``world``)
    poser = SubtreePoser(godette.skeleton, godette.head_node())
    world = poser.world(head_turn_rotation(100 / 120.0))
    part = ChainSet.from_avatar(godette)
    keep = part.segment_chain == 0
    fake = ChainSet.from_avatar(godette)
    fake.copy_state_from(old)
    fake.segment_nodes = np.where(keep, fake.segment_nodes, -5)      # only chain 0 "exists" there
    at_rest = ChainSet.from_avatar(godette)
    at_rest.reset(world)
    assert part.copy_state_from(fake, world=world) == int(keep.sum())
    assert np.array_equal(part.tails[keep], old.tails[keep])
    assert np.array_equal(part.tails[~keep], at_rest.tails[~keep])
    with pytest.raises(ValueError, match="another avatar"):
        ChainSet.from_avatar(cap).copy_state_from(old)


# ---------------------------------------------------------------- stability of overridden (k, c)
def test_stability_bounds_are_the_period_two_limit():
    """At the bound the two-substep characteristic has a double root at −√D (no faster
    flip); above it a root leaves the unit circle's safe side."""
    import math

    from solver.params import max_stable_stiffness, min_stable_damping

    h = 1.0 / 120.0
    for c in (0.0, 4.0, 30.0, 318.0):
        k = max_stable_stiffness(c, h)
        d = math.exp(-c * h)
        b = 1.0 + d - d * h * h * k                     # λ² − b λ + D
        assert b * b - 4.0 * d == pytest.approx(0.0, abs=1e-9) and b < 0.0
        assert min_stable_damping(k, h) == pytest.approx(c, rel=1e-9, abs=1e-9)
    assert min_stable_damping(4.0 / h ** 2, h) == 0.0     # h √k ≤ 2: any damping


def test_an_override_that_is_not_stable_is_refused_naming_the_spring_and_the_damping_it_needs(default_avatar):
    from solver.params import SpringOverride

    with pytest.raises(ValueError, match=r"spring 'Ahoge' joint node \d+: k = 137504 1/s² with c = 30 1/s is not "
                                         r"stable .* use c >= 176\.9"):
        ChainSet.from_avatar(default_avatar, overrides=SpringOverride(c=30.0))
    cs = ChainSet.from_avatar(default_avatar)
    before = cs.params.c.copy()
    with pytest.raises(ValueError, match="'Ahoge'.*not stable"):
        cs.set_params(c=30.0)
    with pytest.raises(ValueError, match="'Ahoge'.*not stable"):
        cs.set_overrides({"*": SpringOverride(c=30.0)})
    assert np.array_equal(cs.params.c, before)                       # nothing written
    cs.set_params(c=30.0, springs="Bang*")                           # the softer springs take it
    cs.set_params(k=60.0, c=4.0)                                     # k and c together: fine
    ChainSet.from_avatar(default_avatar, solver="vrm", overrides=SpringOverride(c=30.0))   # vrm reads neither
