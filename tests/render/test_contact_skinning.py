"""The vertex shader's per-vertex contact (glsl/contact.glsl) equals the CPU one
(:func:`avatars.skinning.skin_instance`, :mod:`avatars.contact`) that the try-on measures use.

long01 on the generated default avatar, in the standard head turn while its back sheet
passes into the right shoulder capsule (t = 2.3 s, docs/history/tryon-notes.md; ponytail01 at
2.47 s was used until its weights, pipeline version 2, kept it out of the capsule without the
correction): the shader's ``v_world`` (transform feedback,
as tests/render/test_skinning_matches_cpu.py) agrees with the corrected CPU positions within
:data:`TOLERANCE_M`, and the correction is really exercised (some vertex moves more than
:data:`MOVED_M`). Meshes without contact are drawn as before (the other primitives agree
with plain skinning).
"""

from __future__ import annotations

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from avatars.hair import load_hair
from avatars.skinning import joint_matrices, skin_instance, skin_positions
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser
from tests.conftest import asset

from .test_skinning_matches_cpu import _capture_v_world, _source_primitives

pytestmark = pytest.mark.gl

TOLERANCE_M = 1e-5      #: float32 shader vs float64 numpy, metres
MOVED_M = 2e-3          #: the correction moves some vertex at least this far at this pose
TURN_T = 2.3            #: seconds into the standard head turn


@pytest.fixture(scope="module")
def tryon_pose():
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from avatars.tryon import try_on

    res = try_on(load_avatar(default_avatar_path()), load_hair(asset("hair", "long01", "long01.obj")))
    av = res.avatar
    poser = SubtreePoser(av.skeleton, av.head_node())
    world = poser.rest.copy()
    cs = ChainSet.from_avatar(av)
    cs.reset(world)
    for n in range(1, int(round(TURN_T * 120)) + 1):
        poser.world(head_turn_rotation(n / 120), out=world)
        cs.step(world)
    cs.apply(world, 1.0)
    return res, world


@pytest.mark.parametrize("storage", ["ubo", "texture"])
def test_shader_contact_matches_cpu(tryon_pose, storage, make_renderer):
    res, world = tryon_pose
    av = res.avatar
    assert av.mesh_instances[res.hair_instance].contact is not None
    r = make_renderer((64, 64), samples=0, joint_storage=storage)
    r.set_avatar(av)
    captured = _capture_v_world(r, world, None)
    moved = 0.0
    for (k, j), got in zip(_source_primitives(av), captured):
        mi = av.mesh_instances[k]
        cpu = skin_instance(av, k, j, world)
        diff = float(np.abs(got - cpu).max())
        assert diff < TOLERANCE_M, f"instance {k} primitive {j}: shader and CPU differ by {diff:.3e} m"
        plain = skin_positions(av.meshes[mi.mesh].primitives[j], joint_matrices(av, mi.skin, world) if mi.skin >= 0
                               else None, world[mi.node])
        if mi.contact is None:
            assert np.array_equal(plain, cpu)
        else:
            moved = max(moved, float(np.linalg.norm(cpu - plain, axis=1).max()))
    assert moved > MOVED_M, f"the contact moved no vertex more than {moved:.2e} m: the pose does not test it"
