"""The scene's light: one directional light and a uniform ambient light, as VRM viewers
light avatars (three-vrm's examples, VRoid-style viewers).

Units: both colours are linear RGB in "lit colour" units: an MToon surface fully facing
the light shows ``lit × color + lit × ambient``, a fully shaded one ``shade × color + lit ×
ambient`` (VRMC_materials_mtoon 1.0 "Lighting" and "Global Illumination"). In three.js
(r155 and later, physically based light units) the same scene is a ``DirectionalLight`` of
intensity π × ``color`` and an ``AmbientLight`` of intensity π × ``ambient``, since three.js
divides by π in its Lambert term (``BRDF_Lambert``); render/eval/threevrm_render.mjs sets
them up so. For glTF PBR materials ``color`` is the irradiance / π of a surface facing the
light.

The default light sums to 1 where a surface faces it: lit colours show as authored,
shade colours are lifted by a little ambient, nothing is over-exposed (three-vrm draws
MToon without the 0.x cap ``min(colour, lit)`` unless ``v0CompatShade`` is set, so a brighter
light washes skin out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Default light direction, toward the light: from the front, above and slightly to the
#: avatar's left (+X), world frame (the avatar faces +Z).
DEFAULT_DIRECTION = np.array([0.3, 0.6, 1.0]) / np.linalg.norm([0.3, 0.6, 1.0])
DEFAULT_COLOR = 0.75
DEFAULT_AMBIENT = 0.25


@dataclass(frozen=True, eq=False)
class Lighting:
    """One directional light and a uniform ambient term, linear RGB (see the module docstring).

    Attributes:
        direction: (3,) points from the surface toward the light, world frame.
        color: (3,) the directional light.
        ambient: (3,) the ambient light.
    """

    direction: np.ndarray = field(default_factory=lambda: DEFAULT_DIRECTION.copy())
    color: np.ndarray = field(default_factory=lambda: np.full(3, DEFAULT_COLOR))
    ambient: np.ndarray = field(default_factory=lambda: np.full(3, DEFAULT_AMBIENT))

    def threejs(self) -> dict:
        """The same light in three.js terms: {"direction", "color", "intensity",
        "ambient_color", "ambient_intensity"} (colours linear, intensities π)."""
        return {"direction": np.asarray(self.direction, float).tolist(), "color": np.asarray(self.color, float).tolist(),
                "intensity": float(np.pi), "ambient_color": np.asarray(self.ambient, float).tolist(),
                "ambient_intensity": float(np.pi)}
