"""The per-vertex contact of a try-on hair mesh (:class:`avatars.contact.SkinContact`).

The spring contact keeps the chain links out of the colliders, but a fitted hair's
vertices between chains, or farther from their chain than its hit radius, were not tested:
during the standard head turn ponytail01 (default avatar) passed 8.3 mm into a shoulder
capsule, long01 44 mm, bob01 (Godette) 5 mm into the head mesh (docs/history/tryon-notes.md). The
hair mesh instance therefore gets a contact correction applied after skinning (renderer and
CPU measure alike):

- head proxy: the head's radial envelope (:class:`avatars.tryon.geometry.RadialEnvelope`,
  which contains the head surface), carried by the head bone. The fit pushed every hair node
  out of it, so at rest the correction moves nothing; a kept placement (hair rebuilt on the
  avatar it came from, never pushed out) whose rest vertices lie inside the envelope gets
  the envelope floored under them (:meth:`RadialEnvelope.floored`: every cell's radius at most
  that of the rest hair in it, less a margin), so at rest nothing moves either, and hair that
  swings deeper than it rests is pushed out (no head proxy when even that moves rest hair);
- colliders: those the try-on springs check (sphere and capsule), except any that holds a
  rest vertex of the hair (same reason).
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from avatars import Avatar
from avatars.contact import MAX_COLLIDERS, SkinContact, apply_contact, contact_frame

from ..skinning import skin_instance
from .head import HeadModel

log = logging.getLogger(__name__)

#: Rest vertices this deep inside a proxy (metres) make the proxy unusable for the mesh.
REST_TOLERANCE = 1e-6


def with_contact(avatar: Avatar, instance: int, head: HeadModel, spring_prefix: str = "TryOn"
                 ) -> tuple[Avatar, list[str]]:
    """(``avatar`` with a :class:`SkinContact` on mesh instance ``instance``, notes).

    The colliders are those of the collider groups of the springs whose name starts with
    ``spring_prefix`` (sphere and capsule shapes, at most :data:`MAX_COLLIDERS`, in index
    order)."""
    notes = []
    groups = {g for s in avatar.springs if s.name.startswith(spring_prefix) for g in s.collider_groups}
    cols = sorted({c for g in groups for c in avatar.collider_groups[g].colliders
                   if avatar.colliders[c].shape in ("sphere", "capsule")})
    if len(cols) > MAX_COLLIDERS:
        notes.append(f"contact: {len(cols)} colliders, the first {MAX_COLLIDERS} used")
        cols = cols[:MAX_COLLIDERS]
    rest = avatar.skeleton.rest_world
    env_local = np.linalg.inv(rest[head.node]) @ _translation(head.envelope.center)
    contact = SkinContact(head=head.node, env_local=env_local, grid=head.envelope.grid.astype(np.float32),
                          colliders=tuple(cols))
    inst = avatar.mesh_instances[instance]
    prims = avatar.meshes[inst.mesh].primitives
    plain = [skin_instance(avatar, instance, p, rest) for p in range(len(prims))]
    # a proxy that already moves rest vertices would change the author's rest shape: leave it out
    head_only = replace(contact, colliders=())
    moved = max((float(np.abs(apply_contact(z, contact_frame(avatar, head_only, rest)) - z).max(initial=0))
                 for z in plain), default=0.0)
    if moved > REST_TOLERANCE:
        # a kept hair hugs the head closer than its envelope: floor the envelope under the rest hair
        inv = np.linalg.inv(rest[head.node])
        pts = np.concatenate(plain)
        for margin in (0.001, 0.003, 0.01):
            env = head.envelope.floored(pts, margin * float(head.size[1]) / 0.22)
            floored = replace(head_only, grid=env.grid.astype(np.float32))
            again = max(float(np.abs(apply_contact(z, contact_frame(avatar, floored, rest)) - z).max(initial=0))
                        for z in plain)
            if again <= REST_TOLERANCE:
                break
        del inv
        if again <= REST_TOLERANCE:
            notes.append(f"contact: rest hair lies up to {1e3 * moved:.1f} mm inside the head envelope: the head "
                         "proxy is floored under it")
            contact = replace(contact, grid=floored.grid)
        else:
            notes.append(f"contact: rest hair lies up to {1e3 * moved:.1f} mm inside the head envelope: no head proxy")
            contact = replace(contact, head=-1)
    keep = []
    for c in contact.colliders:
        one = replace(contact, head=-1, colliders=(c,))
        d = max((float(np.abs(apply_contact(z, contact_frame(avatar, one, rest)) - z).max(initial=0)) for z in plain),
                default=0.0)
        if d > REST_TOLERANCE:
            notes.append(f"contact: rest hair lies up to {1e3 * d:.1f} mm inside collider {c}: not used per vertex")
        else:
            keep.append(c)
    contact = replace(contact, colliders=tuple(keep))
    for n in notes:
        log.info(n)
    mi = list(avatar.mesh_instances)
    mi[instance] = replace(inst, contact=contact)
    return replace(avatar, mesh_instances=tuple(mi)), notes


def _translation(t: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = t
    return m
