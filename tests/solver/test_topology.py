"""solver/topology.py: which joints form which chains, their order, anchors and simulated
parents; solver/build_options.py: the build options are checked when made."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from solver.build_options import BuildOptions
from solver.chains import ChainSet
from solver.errors import ChainBuildError, SolverError, SolverOptionError
from solver.eval.synthetic import branched_avatar, strand_avatar
from solver.topology import chain_topology

# branched_avatar nodes: head 0, a0 1, a1 2, a2 3, b0 4, b1 5


def test_branch_chain_comes_after_the_chain_it_hangs_from():
    av = branched_avatar()
    reordered = dataclasses.replace(av, springs=av.springs[::-1])      # B listed first
    for a in (av, reordered):
        topo = chain_topology(a)
        assert [c.spring.name for c in topo.chains] == ["A", "B"]
        assert [c.anchor for c in topo.chains] == [0, 0]                # B's anchor: the head, not a1
        assert [c.first for c in topo.chains] == [0, 3]
        links = topo.links
        assert [lk.joint.node for lk in links] == [1, 2, 3, 4, 5]
        assert [lk.parent for lk in links] == [-1, 0, 1, 1, 3]          # b0 hangs from a1's segment
        assert [lk.tail_node for lk in links] == [2, 3, -1, 5, -1]
        assert [lk.at_parent_tail for lk in links] == [False, True, True, False, True]
        assert topo.simulated == {1: "A", 2: "A", 3: "A", 4: "B", 5: "B"}
        # every node but the head is moved, by its nearest simulated ancestor's segment
        assert topo.affected == ((1, 0), (2, 1), (3, 2), (4, 3), (5, 4))


def test_rest_geometry_of_the_links():
    av = strand_avatar([(0, 0, 0), (0, -0.1, 0), (0, -0.25, 0)])
    (chain,) = chain_topology(av).chains
    assert len(chain.links) == 2                                         # VRM 1.0: the last joint has none
    np.testing.assert_allclose([lk.length for lk in chain.links], [0.1, 0.15], atol=1e-15)
    np.testing.assert_allclose(chain.links[1].head, [0, -0.1, 0], atol=1e-15)
    np.testing.assert_allclose(chain.links[1].tail, [0, -0.25, 0], atol=1e-15)


def test_a_spring_simulating_a_simulated_node_is_skipped_with_a_note():
    av = branched_avatar()
    again = dataclasses.replace(av.springs[1], name="B2")
    topo = chain_topology(dataclasses.replace(av, springs=av.springs + (again,)))
    assert [c.spring.name for c in topo.chains] == ["A", "B"]
    assert topo.notes == ("spring 'B2': node 4 already simulated by 'B'; skipped",)


def test_springs_it_cannot_build_raise_chain_build_errors():
    av = strand_avatar([(0, 0, 0), (0, 0, 0), (0, -0.1, 0)])
    with pytest.raises(ChainBuildError, match="strand.*zero-length link"):
        chain_topology(av)
    # X = a0 -> a2 (first joint at depth 1) is processed before Y = a1 (depth 2), yet a2 hangs
    # from a1, which Y simulates
    av = branched_avatar()
    a = av.springs[0]

    def spring(name, *nodes):
        return dataclasses.replace(a, name=name, joints=tuple(dataclasses.replace(a.joints[0], node=n) for n in nodes))
    bad = dataclasses.replace(av, springs=(spring("Y", 2), spring("X", 1, 3)))
    with pytest.raises(ChainBuildError, match="'X': joint node 3 hangs from simulated node 2 .*interleaved") as err:
        chain_topology(bad)
    assert isinstance(err.value, SolverError) and isinstance(err.value, ValueError)
    with pytest.raises(ChainBuildError):
        ChainSet.from_avatar(bad)


def test_build_options_are_checked_when_made():
    for bad in ({"solver": "xpbd"}, {"torso_capsule": "maybe"}, {"bend_limit_deg": 0.0},
                {"bend_limit_deg": 180.0}, {"relax_passes": -1}, {"rest_overlap": "keep"}):
        with pytest.raises(SolverOptionError):
            BuildOptions(**bad)
    assert issubclass(SolverOptionError, ValueError)
    opts = BuildOptions(authored_nodes=[5, 3, 3])
    assert opts.authored_nodes == (3, 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.solver = "vrm"


def test_options_object_and_fields_build_the_same_chain_set():
    av = branched_avatar()
    a = ChainSet.from_avatar(av, BuildOptions(solver="legacy", bend_limit_deg=20.0))
    b = ChainSet.from_avatar(av, solver="legacy", bend_limit_deg=20.0)
    c = ChainSet.from_avatar(av, BuildOptions(solver="vrm"), solver="legacy", bend_limit_deg=20.0)
    for other in (b, c):
        assert np.array_equal(a._F, other._F) and np.array_equal(a._I, other._I)
    with pytest.raises(TypeError):
        ChainSet.from_avatar(av, stiffness=3.0)
