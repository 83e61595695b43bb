"""Issue 34 item 10: springs behave the same at any model scale. A VRM scaled by s (its scene
roots' scale, written with pygltflib) swings s times as far on the standard head turn with the
same angles, in every solver mode: stiffness and dragForce are mapped with the link length in
the joint's own units, gravity and the "vrm" pushes are multiplied by the joint's scale
(hitRadius and the VRM 0.x 7 cm tail already were), the teleport distance too. Before, the
x100 default avatar's tip trajectory / 100 was off by up to 0.33 m (swing 290 mm vs 141 mm)."""

from __future__ import annotations

import numpy as np
import pygltflib
import pytest

from avatars import load_avatar
from avatars.generate import default_avatar_path
from runtime.cli.args import load_pose_track
from runtime.replay import replay
from solver.chains import ChainSet
from tests.conftest import asset

#: Largest difference of a tail's displacement (from its first substep), metres at scale 1,
#: between the scaled avatar's (divided by s) and the original's: round-off only.
TRAJECTORY_TOL = 1e-9
#: The same with contacts resting on an authored overlap: its allowance keeps a margin of
#: solver.build_options.REST_OVERLAP_MARGIN (1e-6 m) in model metres, not scaled.
CONTACT_TRAJECTORY_TOL = 2e-6
DURATION_NS = 6_000_000_000


def _scaled(src, dst, s: float):
    g = pygltflib.GLTF2().load_binary(str(src))
    for root in g.scenes[g.scene or 0].nodes:
        g.nodes[root].scale = [s * v for v in (g.nodes[root].scale or [1.0, 1.0, 1.0])]
    g.save_binary(str(dst))
    return dst


def _displacements(avatar, solver):
    tails = replay(avatar, load_pose_track("turn-test"), 30, solver=solver, duration_ns=DURATION_NS).tails
    return tails - tails[0]


@pytest.mark.parametrize("solver", ["rest-shape", "legacy", "vrm"])
@pytest.mark.parametrize("s", [100.0, 0.25])
def test_the_default_avatar_scaled_swings_the_same(tmp_path, solver, s):
    src = default_avatar_path()
    one = _displacements(load_avatar(src), solver)
    big = _displacements(load_avatar(_scaled(src, tmp_path / "scaled.vrm", s)), solver) / s
    assert np.abs(big - one).max() < TRAJECTORY_TOL
    swing = np.linalg.norm(one, axis=-1).max()
    assert swing > 0.1                     # the head turn does swing the hair (metres)


def test_a_vrm0_avatar_scaled_100_swings_the_same(tmp_path):
    src = asset("vrm", "Godette_vrm_v4.vrm")
    one = _displacements(load_avatar(src), "rest-shape")
    big = _displacements(load_avatar(_scaled(src, tmp_path / "godette100.vrm", 100.0)), "rest-shape") / 100.0
    assert np.abs(big - one).max() < CONTACT_TRAJECTORY_TOL
    assert np.linalg.norm(one, axis=-1).max() > 0.3


def test_scale_one_builds_bit_identically_and_scaled_parameters_scale(tmp_path):
    """joint_scale is exactly 1.0 on the real avatars (so their builds are unchanged); on the
    x100 file k and c are the original's and gravity and hit radius are 100 times."""
    from solver.build import joint_scale

    src = default_avatar_path()
    av = load_avatar(src)
    assert {joint_scale(av.skeleton.rest_world[j.node]) for sp in av.springs for j in sp.joints} == {1.0}
    one, big = ChainSet.from_avatar(av), ChainSet.from_avatar(load_avatar(_scaled(src, tmp_path / "x.vrm", 100.0)))
    p1, p100 = one.get_params(), big.get_params()
    for name in p1:
        assert np.allclose(p100[name].k, p1[name].k, rtol=1e-12)
        assert np.allclose(p100[name].c, p1[name].c, rtol=1e-12)
        assert np.allclose(np.asarray(p100[name].gravity), 100.0 * np.asarray(p1[name].gravity), rtol=1e-12)
        assert np.allclose(p100[name].hit_radius, 100.0 * np.asarray(p1[name].hit_radius), rtol=1e-12)
