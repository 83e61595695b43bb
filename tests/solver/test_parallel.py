"""Large chain sets step their chain groups in parallel (kernels.step_kernel_par): the result
must be bit-identical to the serial kernel, and the substep must allocate nothing."""

import numpy as np
import pytest

from solver import kernels as K
from solver import layout as L
from solver.chains import ChainSet
from solver.posing import SubtreePoser
from solver.synthetic import hair_cap_avatar
from tracking.head_turn import head_turn_rotation


@pytest.fixture(scope="module")
def cap():
    av = hair_cap_avatar(256, colliders=16)
    poser = SubtreePoser(av.skeleton, av.head_node())
    worlds = np.array([poser.world(head_turn_rotation(n / 120)) for n in range(1, 241)])
    return av, worlds


def test_partition_keeps_groups_independent(cap):
    av, _ = cap
    cs = ChainSet.from_avatar(av)
    I = cs._I  # noqa: E741
    n = int(I[L.H_NPART])
    assert n == 2
    bounds = I[L.H_PART:L.H_PART + n + 1]
    assert bounds[0] == 0 and bounds[-1] == cs.chain_count and np.all(np.diff(bounds) > 0)


def test_parallel_kernel_bit_equal_to_serial(cap):
    av, worlds = cap
    a = ChainSet.from_avatar(av)
    b = ChainSet.from_avatar(av)
    contacts_a, contacts_b = [], []
    for w in worlds:
        K.step_kernel(w, a._F, a._I)
        K.step_kernel_par(w, b._F, b._I)
        contacts_a.append(int(a._I[L.H_N_CONTACT]))
        contacts_b.append(int(b._I[L.H_N_CONTACT]))
    assert sum(contacts_a) > 0
    assert contacts_a == contacts_b
    assert np.array_equal(a.tails, b.tails)
    assert np.array_equal(a.velocities, b.velocities)
    assert np.array_equal(a._F, b._F)
    assert np.array_equal(a._I[:L.H_NPART], b._I[:L.H_NPART])


def test_parallel_substeps_allocate_nothing(cap):
    from numba.core.runtime import _nrt_python, rtsys

    av, worlds = cap
    cs = ChainSet.from_avatar(av)
    _nrt_python.memsys_enable_stats()
    K.step_many_kernel_par(worlds[:10], cs._F, cs._I)
    a0 = rtsys.get_allocation_stats().alloc
    K.step_many_kernel_par(worlds[:10], cs._F, cs._I)
    a1 = rtsys.get_allocation_stats().alloc
    K.step_many_kernel_par(worlds, cs._F, cs._I)
    a2 = rtsys.get_allocation_stats().alloc
    assert a1 - a0 == a2 - a1 <= 3
