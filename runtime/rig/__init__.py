"""One avatar's animated state (docs/design.md §2): what drives the body, how it is posed, the hair.

- :class:`AvatarRig` (:mod:`.rig`): per 120 Hz substep the drive, the posing of what the
  solver reads and one solver step; per drawn frame the whole-skeleton pose with the hair;
- :mod:`.drive`: the tracked head pose -> neck/head local rotations and the hips lean;
- :mod:`.posing`: the driven set as data and the plan that poses only the nodes the solver
  reads; :mod:`.constraints`: the node constraints (VRMC_node_constraint) as a plan run
  between the drives and the posing (:mod:`.constraint_kernels`: their formulas);
  :mod:`.kernels`: the compiled drive, constraints, posing and forward kinematics (numba);
- :mod:`.hair_params`: the ``[hair]`` settings -> the solver's per-spring overrides;
- body motion (docs/design.md §10): :mod:`.retarget` (a clip onto this avatar, world space),
  :mod:`.motion` (the program, the timeline, cross-fades, the idle; its options in
  :mod:`.motion_options`) and
  :mod:`.motion_kernels` (sampling, the tracked head on top, constraints, posing; compiled).
"""

from importlib import import_module
from typing import TYPE_CHECKING

# Public name -> submodule. Imported lazily (PEP 562, as :mod:`render`): the command line reads
# :data:`runtime.rig.motion_options.LAYERS` without the compiled kernels.
_EXPORTS = {
    "AvatarRig": "rig", "DriveOptions": "drive", "HeadDrive": "drive", "MotionOptions": "motion_options",
    "MotionPlayer": "motion", "MotionSetup": "motion", "RetargetOptions": "retarget", "RetargetedClip": "retarget",
    "MotionError": "errors", "RigError": "errors", "load_motion": "motion", "parse_hair": "hair_params",
}
# (:func:`runtime.rig.retarget.retarget` is imported from its module: the name is the module's.)

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime.rig' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .drive import DriveOptions, HeadDrive  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .errors import MotionError, RigError  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .hair_params import parse_hair  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .motion import MotionPlayer, MotionSetup, load_motion  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .motion_options import MotionOptions  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .retarget import RetargetedClip, RetargetOptions  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .rig import AvatarRig  # noqa: F401 - re-exported lazily (_EXPORTS)
