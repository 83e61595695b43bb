"""One avatar's animated state (DESIGN §2): what drives the body, how it is posed, the hair.

- :class:`AvatarRig` (:mod:`.rig`): per 120 Hz substep the drive, the posing of what the
  solver reads and one solver step; per drawn frame the whole-skeleton pose with the hair;
- :mod:`.drive`: the tracked head pose -> neck/head local rotations and the hips lean;
- :mod:`.posing`: the driven set as data and the plan that poses only the nodes the solver
  reads; :mod:`.constraints`: the node constraints (VRMC_node_constraint) as a plan run
  between the drives and the posing (:mod:`.constraint_kernels`: their formulas);
  :mod:`.kernels`: the compiled drive, constraints, posing and forward kinematics (numba);
- :mod:`.hair_params`: the ``[hair]`` settings -> the solver's per-spring overrides;
- body motion (DESIGN §10): :mod:`.retarget` (a clip onto this avatar, world space),
  :mod:`.motion` (the program, the timeline, cross-fades, the idle) and
  :mod:`.motion_kernels` (sampling, the tracked head on top, constraints, posing; compiled).
"""

from .drive import DriveOptions, HeadDrive
from .errors import MotionError, RigError
from .hair_params import parse_hair
from .motion import MotionOptions, MotionPlayer, MotionSetup, load_motion
from .retarget import RetargetedClip, RetargetOptions, retarget
from .rig import AvatarRig

__all__ = ["AvatarRig", "DriveOptions", "HeadDrive", "MotionOptions", "MotionPlayer", "MotionSetup",
           "MotionError", "RetargetOptions", "RetargetedClip", "RigError", "load_motion", "parse_hair", "retarget"]
