"""swaycam solver: hair dynamics on numpy arrays (DESIGN §4). No OpenGL, no camera.

Public names:

- :class:`ChainSet` (:mod:`solver.chains`): every spring chain of an avatar packed into
  flat arrays; ``ChainSet.from_avatar(avatar, solver="rest-shape"|"legacy"|"vrm", ...)``,
  then per substep ``step(world)``, and for drawing ``apply(world, alpha)`` or
  ``write_local_rotations(world, out, alpha)``.
- :class:`FixedStepDriver` (:mod:`solver.driver`): substeps on the integer-nanosecond grid
  t_n = t0 + (n · 1e9) // 120, with the render alpha and a capped, counted debt.
- :class:`VrmMapping`, :class:`SpringOverride`, :data:`DEFAULT_MAPPING` (:mod:`solver.params`):
  VRM parameters -> (k, c, g) and per-spring overrides.
- :class:`SubtreePoser` (:mod:`solver.posing`): animated world matrices for one turning bone.
- :func:`fit_torso_capsule` (:mod:`solver.colliders`).
"""

from .chains import SUBSTEP_SECONDS, BuildReport, ChainSet
from .colliders import TorsoFit, fit_torso_capsule
from .driver import Advance, FixedStepDriver
from .params import ANALYTIC_MAPPING, DEFAULT_MAPPING, SpringOverride, VrmMapping
from .posing import SubtreePoser

__all__ = [
    "ANALYTIC_MAPPING", "Advance", "BuildReport", "ChainSet", "DEFAULT_MAPPING", "FixedStepDriver",
    "SUBSTEP_SECONDS", "SpringOverride", "SubtreePoser", "TorsoFit", "VrmMapping", "fit_torso_capsule",
]
