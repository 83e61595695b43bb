"""Every collider kind of VRMC_springBone_extended_collider (plane, inside sphere, inside capsule,
with the outside sphere and capsule) against three-vrm 3.5.5, on a file carrying them.

The file (a VRM 1.0 glTF written by avatars/vrm1.py, the extended shapes in the extension, read
back by our loader) has one-link strands that gravity swings into their collider from the first
step, the head still (so no root moves: the comparison of tests/solver/eval/test_threevrm_reference.py).
three-vrm (Node) builds its colliders from the same data (solver/eval/reference.py) and runs
``update(1/120)``; our ``vrm`` mode is stepped at 120 Hz. Both are the tail-sphere Verlet of the
VRM spec; for the inside shapes and the plane our segment contact of the other solvers tests the
tail as well (they are convex: the tail inside keeps the whole link inside), so the same
geometry serves every solver.
"""

from __future__ import annotations

import json
import shutil
import struct

import numpy as np
import pytest

from avatars import load_avatar
from avatars.vrm1 import write_vrm1
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser
from solver.eval.reference import run_threevrm
from solver.eval.synthetic import extended_collider_avatar

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")

#: our vrm mode against three-vrm, metres
THREEVRM_TOL = 1e-9
KINDS = ("plane", "inside_sphere", "inside_capsule", "sphere", "capsule")


@pytest.fixture(scope="module")
def extended_file(tmp_path_factory):
    """The synthetic avatar written as a VRM 1.0 .gltf (no binary data: its JSON alone) and loaded back."""
    glb = write_vrm1(extended_collider_avatar())
    n = struct.unpack_from("<I", glb, 12)[0]
    doc = json.loads(glb[20:20 + n])
    doc.pop("buffers", None)                  # nothing binary: no meshes
    path = tmp_path_factory.mktemp("extended") / "extended_colliders.gltf"
    path.write_text(json.dumps(doc))
    assert "VRMC_springBone_extended_collider" in doc["extensionsUsed"]
    return load_avatar(path)


def _still(t: float) -> np.ndarray:
    return np.array([0.0, 0.0, 0.0, 1.0])


def test_the_file_carries_every_kind(extended_file):
    assert tuple(c.shape for c in extended_file.colliders) == KINDS


@needs_node
def test_every_extended_collider_kind_gives_threevrms_tails(extended_file):
    av = extended_file
    steps = 240
    ref = run_threevrm(av, _still, frames=steps, rate_hz=120.0, keep_tails=steps)
    cs = ChainSet.from_avatar(av, solver="vrm")
    world = SubtreePoser(av.skeleton, av.head_node()).world(_still(0.0)).copy()
    cs.reset(world)
    order = {int(n): k for k, n in enumerate(cs.segment_nodes)}
    idx = [order[int(n)] for n in ref["nodes"]]
    start = cs.tails.copy()
    worst = {k: 0.0 for k in KINDS}
    contacts = 0
    kind_of = [cs.chain_names[cs.segment_chain[i]].split("/")[0] for i in idx]
    for k in range(steps):
        cs.step(world)
        contacts += cs.last_contacts
        err = np.abs(cs.tails[idx] - ref["tails"][k]).max(axis=1)
        for e, kind in zip(err, kind_of):
            worst[kind] = max(worst[kind], float(e))
    print("largest difference from three-vrm per kind (m):", {k: f"{v:.2g}" for k, v in worst.items()})
    assert max(worst.values()) <= THREEVRM_TOL, worst
    moved = np.linalg.norm(cs.tails - start, axis=1)
    assert moved.min() > 0.003                # every strand moved (the capsule ones rest on it at once)
    assert contacts > 1000                    # and the colliders did their work


@pytest.mark.parametrize("solver", ["rest-shape", "legacy"])
def test_segment_contact_holds_for_every_kind_through_a_head_turn(extended_file, solver):
    """The segment-contact solvers on the same file, the head turning (docs/design.md §4.5): after
    every substep no link is inside an outside shape, outside an inside shape or below the plane
    by more than the contact tolerance beyond what the authored rest pose already overlaps (the
    allowance), measured with the contact test's own geometry (solver/kernels/contact.py)."""
    from avatars.clips.head_turn import head_turn_rotation
    from solver.build_options import CONTACT_TOLERANCE
    from solver.kernels.contact import pair_depth

    av = extended_file
    cs = ChainSet.from_avatar(av, solver=solver)
    poser = SubtreePoser(av.skeleton, av.head_node())
    col = cs.sections["colliders"].array
    shapes = cs.collider_shapes
    allow = cs.sections["allowances"].allowance
    seg = cs.sections["segment_ints"]
    worst, contacts, touched = 0.0, 0, set()
    for n in range(480):
        world = poser.world(head_turn_rotation(n / 120.0)).copy()
        cs.step(world)
        contacts += cs.last_contacts
        for i in range(cs.segment_count):
            o = world[int(cs.segment_nodes[i])][:3, 3]
            x = cs.tails[i]
            for p in range(int(seg.pair_begin[i]), int(seg.pair_end[i])):
                c = int(cs.sections["pairs"].collider[p])
                d = pair_depth(int(shapes[c]), col, c, *o, *x, float(cs.hit_radii[i]), True) - allow[p]
                worst = max(worst, d)
                if d > -1e-4:
                    touched.add(int(shapes[c]))
    assert worst <= CONTACT_TOLERANCE
    assert contacts > 100
    # every kind was in contact (legacy, without the gravity preload, hangs its inside strands
    # away from the walls)
    assert len(touched) == (len(KINDS) if solver == "rest-shape" else 3)
