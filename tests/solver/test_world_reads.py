"""ChainSet.world_reads() is exactly what step/reset read: with every other world matrix
poisoned (NaN), the hair states are bit-identical to those from the full pose — for every
solver, with centre nodes, authored joints and branched chains. (The runtime poses only
these nodes per substep: runtime.rig.posing.)"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser
from solver.eval.synthetic import branched_avatar, hair_cap_avatar

SUBSTEPS = 480   # the 4 s of head motion at 120 Hz


def _poisoned(world: np.ndarray, reads: np.ndarray) -> np.ndarray:
    out = np.full_like(world, np.nan)
    out[reads] = world[reads]
    return out


def _run_both(avatar, *, solver="rest-shape", authored=()):
    a = ChainSet.from_avatar(avatar, solver=solver)
    b = ChainSet.from_avatar(avatar, solver=solver)
    if authored:
        a.set_authored(authored)
        b.set_authored(authored)
    reads = b.world_reads()
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.world(head_turn_rotation(0.0))
    a.reset(w)
    b.reset(_poisoned(w, reads))
    contacts = 0
    for n in range(1, SUBSTEPS + 1):
        w = poser.world(head_turn_rotation(n / 120), out=w)
        a.step(w)
        b.step(_poisoned(w, reads))
        contacts += a.last_contacts
        assert np.array_equal(a.tails, b.tails) and np.array_equal(a.velocities, b.velocities), n
    assert np.isfinite(a.tails).all()
    return a, reads, contacts


@pytest.mark.parametrize("solver", ["rest-shape", "legacy", "vrm"])
def test_godette_reads(godette, solver):
    _, reads, contacts = _run_both(godette, solver=solver)
    assert len(reads) < godette.skeleton.node_count // 4
    assert contacts > 0


def test_centre_nodes_and_authored_joints(godette):
    hips = godette.humanoid["hips"]
    av = replace(godette, springs=tuple(replace(s, center=hips) for s in godette.springs))
    first = [s.joints[0].node for s in av.springs][:2] + [av.springs[0].joints[1].node]
    _, reads, _ = _run_both(av, authored=first)
    assert hips in reads
    assert set(first) <= set(reads.tolist())


def test_branched_chain_and_hair_cap():
    _run_both(branched_avatar(), solver="legacy")
    _run_both(branched_avatar())
    _, _, contacts = _run_both(hair_cap_avatar(64, colliders=16))
    assert contacts > 0


def test_reads_name_anchor_colliders_and_body_joints(godette):
    cs = ChainSet.from_avatar(godette)
    reads = set(cs.world_reads().tolist())
    assert set(cs.chain_anchor.tolist()) <= reads
    roots = {int(n) for n, sp in zip(cs.segment_nodes, cs.simulated_parents) if sp < 0}
    assert roots <= reads
    assert all(int(n) not in reads for n, sp in zip(cs.segment_nodes, cs.simulated_parents) if sp >= 0)
