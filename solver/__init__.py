"""swaycam solver: hair dynamics on numpy arrays (DESIGN §4). No OpenGL, no camera.

Layout: the core here (chain set, build, params, packed layout); the numba code in
:mod:`solver.kernels`; measurement, calibration, synthetic sets, benchmarks and the three-vrm
reference in :mod:`solver.eval`. What is not dynamics lives under avatars/: collider
geometry and the fitted torso capsule the build uses (:mod:`avatars.colliders`), CPU
skinning (:mod:`avatars.skinning`), the standard head turn (:mod:`avatars.clips.head_turn`),
and hairstyle fitting with auto-rigging (rigged hair the solver runs like any VRM's).

Public names:

- :class:`ChainSet` (:mod:`solver.chains`): every spring chain of an avatar packed into
  flat arrays; ``ChainSet.from_avatar(avatar, BuildOptions(solver="rest-shape"|"legacy"|"vrm",
  ...), state_from=None)`` (:class:`BuildOptions`, :mod:`solver.build_options`; the chains
  and their order: :mod:`solver.topology`), then per substep ``step(world)``, and for drawing ``apply(world,
  alpha)`` or ``write_local_rotations(world, out, alpha)``; mid-motion
  ``set_params(k=, c=, gravity=, hit_radius=, springs="*")``, ``set_overrides(overrides)``,
  ``get_params()`` (-> {name: :class:`SpringParams`}) and ``copy_state_from(other)``.
- :mod:`solver.layout`: the packed layout, declared once as tables (solver/LAYOUT.md).
- :data:`RATE_HZ`, :data:`SUBSTEP_SECONDS` (:mod:`solver.params`): the substep rate, stated
  once (the runtime's fixed-step driver in :mod:`runtime.clock` reads it).
- :class:`SolverMode`, :data:`SOLVER_NAMES` (:mod:`solver.modes`): rest-shape, legacy, vrm.
- :class:`VrmMapping`, :class:`SpringOverride`, :data:`DEFAULT_MAPPING` (:mod:`solver.params`):
  VRM parameters -> (k, c, g) and per-spring overrides.
- :class:`SolverError` and its kinds :class:`SolverOptionError`, :class:`ChainBuildError`,
  :class:`HairParamsError`, :class:`StateTransferError` (:mod:`solver.errors`; ValueErrors).
"""

from .build_options import BuildOptions
from .chains import BuildReport, ChainSet, SpringParams
from .errors import ChainBuildError, HairParamsError, SolverError, SolverOptionError, StateTransferError
from .modes import SOLVER_NAMES, SolverMode
from .params import ANALYTIC_MAPPING, DEFAULT_MAPPING, RATE_HZ, SUBSTEP_SECONDS, SpringOverride, VrmMapping

__all__ = [
    "ANALYTIC_MAPPING", "BuildOptions", "BuildReport", "ChainBuildError", "ChainSet", "DEFAULT_MAPPING",
    "HairParamsError", "RATE_HZ", "SOLVER_NAMES", "SUBSTEP_SECONDS", "SolverError", "SolverMode",
    "SolverOptionError", "SpringOverride", "SpringParams", "StateTransferError", "VrmMapping",
]
