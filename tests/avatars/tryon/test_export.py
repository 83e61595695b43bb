"""The fitted avatar as a VRM 1.0 file: it reloads with no warning, the solver runs it bit for
bit like the in-memory avatar on the standard head turn, and three-vrm 3.5.5 loads it and
steps its springs (Node.js; skipped without it, like the other three-vrm tests)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from avatars import load_avatar
from avatars.clips.head_turn import DURATION_S, head_turn_rotation
from avatars.vrm1 import save_vrm1, write_vrm1
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
CASES = [("default", "bob01"), ("godette", "ponytail01")]


@pytest.fixture(scope="module")
def exported(fitted, tmp_path_factory):
    out = {}
    for avatar, style in CASES:
        res = fitted(avatar, style)
        path = tmp_path_factory.mktemp("export") / f"{avatar}-{style}.vrm"
        save_vrm1(res.avatar, path)
        out[avatar, style] = (res, path)
    return out


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_export_reloads_without_warnings_as_vrm1(exported, case):
    res, path = exported[case]
    back = load_avatar(path)
    assert back.warnings == () and back.vrm_version == "1.0"   # VRM 0.x (Godette) is written as 1.0
    assert back.skeleton.names == res.avatar.skeleton.names
    assert [s.name for s in back.springs] == [s.name for s in res.avatar.springs]
    assert len(back.colliders) == len(res.avatar.colliders) and back.humanoid == res.avatar.humanoid
    hair = back.meshes[back.mesh_instances[res.hair_instance].mesh]
    assert hair.name == f"TryOnHair_{case[1]}" and hair.vertex_count == res.hair_vertices


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_export_gives_bit_identical_hair_states_on_the_standard_head_turn(exported, case):
    res, path = exported[case]
    back = load_avatar(path)
    a = ChainSet.from_avatar(res.avatar)
    b = ChainSet.from_avatar(back)
    assert a.segment_count == b.segment_count > 0
    wa = SubtreePoser(res.avatar.skeleton, res.avatar.head_node())
    wb = SubtreePoser(back.skeleton, back.head_node())
    xa, xb = wa.rest.copy(), wb.rest.copy()
    assert np.array_equal(xa, xb)
    for n in range(1, int(DURATION_S * 120) + 1):
        q = head_turn_rotation(n / 120)
        wa.world(q, out=xa)
        wb.world(q, out=xb)
        a.step(xa)
        b.step(xb)
        assert np.array_equal(a.tails, b.tails) and np.array_equal(a.velocities, b.velocities), f"substep {n}"


def test_writer_is_deterministic(fitted):
    res = fitted("default", "bob01")
    assert write_vrm1(res.avatar) == write_vrm1(res.avatar)


@needs_node
@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_threevrm_loads_the_export_and_steps_its_springs(exported, case):
    from avatars.eval.threevrm_load import load_with_threevrm

    res, path = exported[case]
    got = load_with_threevrm(path, frames=180)
    assert got["finite"] and got["frames"] == 180
    cs = ChainSet.from_avatar(res.avatar)
    assert got["joints"] == cs.segment_count          # one three-vrm joint per simulated link
    av = res.avatar
    used = {c for s in av.springs for g in s.collider_groups for c in av.collider_groups[g].colliders}
    assert got["colliders"] == len(used)               # three-vrm keeps the colliders springs use
    assert got["humanoid"] == len(res.avatar.humanoid)
    assert 0.0 < got["max_tail_travel"] < 1.0
