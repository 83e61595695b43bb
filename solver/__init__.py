"""swaycam solver: hair dynamics on numpy arrays (docs/design.md §4). No OpenGL, no camera.

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
- :mod:`solver.limits` (angle limits, wind responses at build; ``repack``) and :mod:`solver.wind`
  (``set_wind``, ``impulse``, :class:`solver.wind.Wind`): what acts on the hair from outside.
- :data:`RATE_HZ`, :data:`SUBSTEP_SECONDS` (:mod:`solver.params`): the substep rate, stated
  once (the runtime's fixed-step driver in :mod:`runtime.clock` reads it).
- :class:`SolverMode`, :data:`SOLVER_NAMES` (:mod:`solver.modes`): rest-shape, legacy, vrm.
- :class:`VrmMapping`, :class:`SpringOverride`, :data:`DEFAULT_MAPPING` (:mod:`solver.params`):
  VRM parameters -> (k, c, g) and per-spring overrides.
- :class:`SolverError` and its kinds :class:`SolverOptionError`, :class:`ChainBuildError`,
  :class:`HairParamsError`, :class:`StateTransferError` (:mod:`solver.errors`; ValueErrors).
"""

from importlib import import_module
from typing import TYPE_CHECKING

# Public name -> submodule. Imported lazily (PEP 562, as :mod:`render`): ``import solver.modes``
# (the command line's choices) loads neither numpy nor numba; ``from solver import ChainSet``
# loads what ChainSet needs.
_EXPORTS = {
    "BuildOptions": "build_options",
    "BuildReport": "chains", "ChainSet": "chains", "SpringParams": "chains",
    "ChainBuildError": "errors", "HairParamsError": "errors", "SolverError": "errors", "SolverOptionError": "errors",
    "StateTransferError": "errors",
    "SOLVER_NAMES": "modes", "SolverMode": "modes",
    "ANALYTIC_MAPPING": "params", "DEFAULT_MAPPING": "params", "RATE_HZ": "params", "SUBSTEP_SECONDS": "params",
    "SpringOverride": "params", "VrmMapping": "params",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'solver' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .build_options import BuildOptions  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .chains import BuildReport, ChainSet, SpringParams  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .errors import (  # noqa: F401 - re-exported lazily (_EXPORTS)
        ChainBuildError, HairParamsError, SolverError, SolverOptionError, StateTransferError,
    )
    from .modes import SOLVER_NAMES, SolverMode  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .params import (  # noqa: F401 - re-exported lazily (_EXPORTS)
        ANALYTIC_MAPPING, DEFAULT_MAPPING, RATE_HZ, SUBSTEP_SECONDS, SpringOverride, VrmMapping,
    )
