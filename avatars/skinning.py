"""CPU linear-blend skinning (numpy): the try-on's contact set-up
(:mod:`avatars.tryon.skin_contact`) and the hair-mesh measures (solver/eval) pose meshes with it.

It computes exactly what the vertex shader does (render/): morph targets first,
``p' = p + Σ_t w_t Δp_t``, then ``v = Σ_i w_i · (W[joint_i] · IBM_i) · p'`` (glTF 2.0 §3.7.3
skins); a mesh without a skin is drawn with its node's world matrix. Vertices whose weights are
all zero (invalid glTF, which the loader keeps) follow their first listed joint rigidly, as
the shader does. Shapes: positions (V, 3) metres in mesh space, world matrices (N, 4, 4)
column-vector, result (V, 3) world. tests/render/test_skinning_matches_cpu.py checks the
agreement with the shader (transform feedback) within 1e-5 m. A mesh instance with a
``contact`` (:mod:`avatars.contact`, the try-on hair) is then pushed out of its head proxy and
colliders, as the shader does (:func:`skin_instance`).
"""

from __future__ import annotations

import numpy as np

from .contact import apply_contact, contact_frame
from .model import Avatar, Primitive


ZERO_WEIGHT_SUM = 1e-6  #: vertices whose weights sum to no more than this follow their first joint (as mesh.vert)


def joint_matrices(avatar: Avatar, skin: int, world: np.ndarray) -> np.ndarray:
    """Skinning matrices (J, 4, 4) = W[joints] @ inverse_bind for ``avatar.skins[skin]``."""
    s = avatar.skins[skin]
    return world[s.joints] @ s.inverse_bind


def skin_positions(prim: Primitive, jm: np.ndarray | None, node_world: np.ndarray | None = None,
                   morph_weights: np.ndarray | None = None, vertices: np.ndarray | None = None) -> np.ndarray:
    """Skinned world positions (V', 3) float64 of a primitive.

    Args:
        prim: the primitive (positions, joints, weights, morph targets).
        jm: (J, 4, 4) skinning matrices from :func:`joint_matrices`, or None for a rigid mesh.
        node_world: (4, 4) world matrix of the mesh node, used when ``jm`` is None.
        morph_weights: (T,) morph weights, or None.
        vertices: optional (V',) vertex indices to skin (default: all).
    """
    idx = slice(None) if vertices is None else vertices
    p = prim.positions[idx].astype(np.float64)
    if morph_weights is not None and prim.morph_positions.shape[0]:
        w = np.asarray(morph_weights, np.float64)
        nz = np.nonzero(w)[0]
        if nz.size:
            p = p + np.tensordot(w[nz], prim.morph_positions[nz][:, idx].astype(np.float64), axes=1)
    if jm is None or prim.joints is None or prim.weights is None:
        m = np.eye(4) if node_world is None else node_world
        return p @ m[:3, :3].T + m[:3, 3]
    j = prim.joints[idx].astype(np.int64)
    wts = prim.weights[idx].astype(np.float64)
    unweighted = wts.sum(axis=1) <= ZERO_WEIGHT_SUM
    if unweighted.any():  # as mesh.vert: rigid with the first listed joint, not collapsed to the origin
        wts[unweighted] = (1.0, 0.0, 0.0, 0.0)
    # blended matrix per vertex: (V, 3, 4)
    blend = np.einsum("vk,vkab->vab", wts, jm[j][:, :, :3, :])
    return np.einsum("vab,vb->va", blend[:, :, :3], p) + blend[:, :, 3]


def skin_instance(avatar: Avatar, instance: int, primitive: int, world: np.ndarray,
                  morph_weights: np.ndarray | None = None, vertices: np.ndarray | None = None) -> np.ndarray:
    """World positions (V', 3) of primitive ``primitive`` of mesh instance ``instance`` as
    drawn under node world matrices ``world`` (N, 4, 4): skinned (or rigid), then, when the
    instance has a ``contact``, corrected (:func:`avatars.contact.apply_contact`)."""
    inst = avatar.mesh_instances[instance]
    prim = avatar.meshes[inst.mesh].primitives[primitive]
    jm = joint_matrices(avatar, inst.skin, world) if inst.skin >= 0 else None
    z = skin_positions(prim, jm, world[inst.node], morph_weights, vertices)
    if inst.contact is not None:
        z = apply_contact(z, contact_frame(avatar, inst.contact, world))
    return z
