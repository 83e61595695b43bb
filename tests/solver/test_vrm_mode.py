"""The "vrm" mode against a line-by-line numpy transcription of three-vrm's
VRMSpringBoneJoint.update (Verlet, stiffness/gravity per frame, tail-only sphere/capsule
collision with length restore, rotation = initial local rotation * shortest arc)."""

from __future__ import annotations

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from avatars.math3d import mat3_from_quat, quat_from_vecs, quat_mul
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser

from .geometry import point_segment_distance

SAME_M = 1e-12


class ThreeVrmReference:
    """three-vrm's spring update, transcribed for the tests (world space, no centre)."""

    def __init__(self, avatar):
        self.av = avatar
        sk = avatar.skeleton
        self.sk = sk
        self.joints = []
        for spring in avatar.springs:
            cols = [ci for g in spring.collider_groups for ci in avatar.collider_groups[g].colliders]
            for i, j in enumerate(spring.joints):
                if i + 1 < len(spring.joints):
                    child = sk.rest_translation[spring.joints[i + 1].node]
                elif spring.tail_offset is not None:
                    child = spring.tail_offset
                else:
                    continue
                self.joints.append(dict(node=j.node, joint=j, child=np.asarray(child, float), cols=cols))
        order = {n: d for d, level in enumerate(sk.levels) for n in level}
        self.joints.sort(key=lambda jt: order[jt["node"]])
        self.local_rot = sk.rest_rotation.copy()
        rest = sk.rest_world
        for jt in self.joints:
            jt["cur"] = rest[jt["node"]][:3, :3] @ jt["child"] + rest[jt["node"]][:3, 3]
            jt["prev"] = jt["cur"].copy()

    def _fk(self, world_in):
        """World matrices: the animated input, with the hair joints' local rotations applied."""
        sk = self.sk
        w = world_in.copy()
        hair = {jt["node"] for jt in self.joints}
        for level in sk.levels:
            for n in level:
                p = sk.parents[n]
                if p < 0:
                    continue
                if n in hair or any(self._is_below(n, h) for h in hair):
                    loc = np.eye(4)
                    loc[:3, :3] = mat3_from_quat(self.local_rot[n]) * sk.rest_scale[n]
                    loc[:3, 3] = sk.rest_translation[n]
                    w[n] = w[p] @ loc
        return w

    def _is_below(self, n, h):
        return self.sk.is_ancestor(h, n)

    def update(self, world_in, delta):
        sk = self.sk
        for jt in self.joints:
            w = self._fk(world_in)
            n = jt["node"]
            j = jt["joint"]
            parent = w[sk.parents[n]]
            init_local = sk.rest_local[n]
            bone = parent @ init_local
            pos = bone[:3, 3]
            axis = jt["child"] / np.linalg.norm(jt["child"])
            length = np.linalg.norm(bone[:3, :3] @ jt["child"])
            d = (parent @ init_local)[:3, :3] @ axis
            d = d / np.linalg.norm(d)
            nxt = jt["cur"] + (jt["cur"] - jt["prev"]) * (1 - j.drag_force) + d * j.stiffness * delta \
                + j.gravity_dir * j.gravity_power * delta
            nxt = pos + (nxt - pos) / np.linalg.norm(nxt - pos) * length
            for ci in jt["cols"]:
                col = self.av.colliders[ci]
                m = w[col.node]
                a = m[:3, :3] @ col.offset + m[:3, 3]
                b = m[:3, :3] @ (col.offset if col.tail is None else col.tail) + m[:3, 3]
                e = b - a
                t = 0.0 if e @ e == 0 else np.clip((nxt - a) @ e / (e @ e), 0.0, 1.0)
                v = nxt - (a + t * e)
                dist = np.linalg.norm(v) - (j.hit_radius + col.radius)
                if dist < 0.0:
                    nxt = nxt + v / np.linalg.norm(v) * -dist
                    nxt = pos + (nxt - pos) / np.linalg.norm(nxt - pos) * length
            jt["prev"], jt["cur"] = jt["cur"], nxt
            inv = np.linalg.inv(parent @ init_local)
            local_dir = inv[:3, :3] @ nxt + inv[:3, 3]
            q = quat_from_vecs(axis, local_dir / np.linalg.norm(local_dir))
            self.local_rot[n] = quat_mul(sk.rest_rotation[n], q)
        return np.array([jt["cur"] for jt in self.joints])


@pytest.mark.parametrize("name", ["godette", "smoke", "smoke_collider"])
def test_vrm_mode_is_three_vrm(name, request):
    av = request.getfixturevalue(name)
    ref = ThreeVrmReference(av)
    cs = ChainSet.from_avatar(av, solver="vrm", substep=1.0 / 60.0, torso_capsule="off")
    order = [int(np.nonzero(cs.segment_nodes == jt["node"])[0][0]) for jt in ref.joints]
    poser = SubtreePoser(av.skeleton, av.head_node())
    w = poser.rest.copy()
    for f in range(1, 121):                      # 2 s at 60 fps
        poser.world(head_turn_rotation(f / 60.0), out=w)
        tails_ref = ref.update(w, 1.0 / 60.0)
        cs.step(w)
        np.testing.assert_allclose(cs.tails[order], tails_ref, rtol=0, atol=SAME_M)


def test_vrm_mode_pushes_the_rest_pose_out_of_the_sphere_collider(smoke_collider):
    """three-vrm pushes a rest pose that overlaps a collider (this file's chain runs through
    its sphere); the rest-shape solver by default keeps the authored overlap (allowance)."""
    w = smoke_collider.skeleton.rest_world.copy()
    vrm = ChainSet.from_avatar(smoke_collider, solver="vrm", torso_capsule="off")
    rest = ChainSet.from_avatar(smoke_collider, torso_capsule="off")
    x0 = rest.tails.copy()
    for _ in range(240):
        vrm.step(w)
        rest.step(w)
    col = vrm.collider_world[0]
    d0 = min(point_segment_distance(x, col[:3], col[3:6]) for x in x0)
    d1 = min(point_segment_distance(x, col[:3], col[3:6]) for x in vrm.tails)
    assert d1 > d0 + 0.03
    assert np.abs(rest.tails - x0).max() < 1e-9
    assert rest.report.rest_overlaps
