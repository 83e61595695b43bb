"""Issue 34 item 10: an avatar whose head bone has zero scale. Its springs have no rest frame
to simulate in: building them is a ChainBuildError naming the file, the spring, the joint and
the zero-scale node (``run`` and ``check-fps`` printed a bare "Singular matrix": their test is
tests/runtime/test_run_errors.py; the framing's tests/render/test_framing_zero_head.py)."""

from __future__ import annotations

import pytest

from avatars import load_avatar
from solver.errors import ChainBuildError
from solver.topology import chain_topology
from tests.avatars.glb import with_scale
from tests.conftest import asset

MESSAGE = ("zero.vrm: spring 'springbone_collider_sphere_x0p02_r0p1_chain': joint node 19 'spring_joint_0' has no "
           "rest frame: node 4 'head' has a zero scale (its transform cannot be inverted); give it a non-zero scale "
           "or remove the spring")


def _zero_head(src, dst, scale=(0.0, 0.0, 0.0)):
    return with_scale(src, dst, scale)


@pytest.fixture
def zero(tmp_path):
    return _zero_head(asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm"), tmp_path / "zero.vrm")


def test_springs_under_a_zero_scale_head_name_file_spring_joint_and_node(zero):
    with pytest.raises(ChainBuildError) as err:
        chain_topology(load_avatar(zero))
    assert str(err.value) == f"{zero.parent}/{MESSAGE}"


def test_a_flattened_head_is_singular_too_and_a_small_one_is_not(tmp_path):
    src = asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm")
    with pytest.raises(ChainBuildError, match="node 4 'head' has a zero scale"):
        chain_topology(load_avatar(_zero_head(src, tmp_path / "flat.vrm", (1.0, 0.0, 1.0))))
    assert len(chain_topology(load_avatar(_zero_head(src, tmp_path / "small.vrm", (1e-3,) * 3))).chains) == 1
