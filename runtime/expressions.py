"""Expression weights (VRM 1.0 names, 0..1) -> morph target weights per mesh instance.

Follows VRMC_vrm-1.0 expressions.md: each expression's morphTargetBinds add
``weight · bind.weight`` to their target (summed, then clamped to [0, 1]); ``isBinary``
expressions snap to 0/1 at 0.5; ``override*`` of an active expression suppresses blink,
lookAt or mouth expressions ("block": fully while the overriding weight > 0; "blend":
scaled by 1 - weight).
"""

from __future__ import annotations

import numpy as np

from avatars import Avatar

_BLINK = ("blink", "blinkLeft", "blinkRight")
_LOOK = ("lookUp", "lookDown", "lookLeft", "lookRight")
_MOUTH = ("aa", "ih", "ou", "ee", "oh")


class ExpressionMixer:
    """Map expression weights to per-instance morph weight arrays, allocation-light.

    ``weights[i]`` is a (T_i,) float32 array for ``avatar.mesh_instances[i]`` (T_i = its
    mesh's morph target count), starting from the mesh's default weights.
    """

    def __init__(self, avatar: Avatar):
        self.avatar = avatar
        self._instance_of_node = {mi.node: k for k, mi in enumerate(avatar.mesh_instances)}
        self._defaults = [np.asarray(avatar.meshes[mi.mesh].default_weights, np.float32)
                          for mi in avatar.mesh_instances]
        self.weights = [d.copy() for d in self._defaults]
        self.names = tuple(avatar.expressions)

    def has(self, name: str) -> bool:
        return name in self.avatar.expressions

    def mix(self, values: dict[str, float]) -> list[np.ndarray]:
        """Compute morph weights for expression ``values`` (unknown names are ignored)."""
        ex = self.avatar.expressions
        active = {k: float(np.clip(v, 0.0, 1.0)) for k, v in values.items() if k in ex}
        for k, v in list(active.items()):
            if ex[k].is_binary:
                active[k] = 1.0 if v >= 0.5 else 0.0
        scale = {"blink": 1.0, "look": 1.0, "mouth": 1.0}
        for k, v in active.items():
            if v <= 0:
                continue
            e = ex[k]
            for group, mode in (("blink", e.override_blink), ("look", e.override_look_at), ("mouth", e.override_mouth)):
                if mode == "block":
                    scale[group] = 0.0
                elif mode == "blend":
                    scale[group] = min(scale[group], 1.0 - v)
        for w, d in zip(self.weights, self._defaults):
            w[:] = d
        for k, v in active.items():
            group = "blink" if k in _BLINK else "look" if k in _LOOK else "mouth" if k in _MOUTH else None
            v = v * (scale[group] if group else 1.0)
            if v <= 0:
                continue
            for b in ex[k].morph_target_binds:
                inst = self._instance_of_node.get(b.node)
                if inst is not None:
                    self.weights[inst][b.index] += v * b.weight
        for w in self.weights:
            np.clip(w, 0.0, 1.0, out=w)
        return self.weights
