"""Body motion clips (docs/design.md §10): VRM Animation (.vrma), glTF/GLB humanoid animations and
BVH motion capture, loaded into one model (:class:`Clip`: world-space humanoid rotation
tracks, hips translation, optional expression, lookAt and node tracks).

- :func:`load_clips` / :func:`load_file`: ``FILE[#Name[+Name...]]`` -> clips;
- :func:`inspect_file` / :func:`describe`: what ``swaycam inspect CLIP`` reports;
- :mod:`.bonemap`: naming conventions (Rigify, Mixamo, CMU, VRM, VRoid, Unity) and map files;
- :mod:`.idle`: the generated idle motion (breathing, weight shift, sway);
- :mod:`.head_turn`: the standard head turn (the ``turn-test`` source, metrics, benchmarks).

Retargeting onto an avatar is the runtime's (:mod:`runtime.rig.retarget`).
"""

from .bonemap import BoneMap, detect_bone_map, read_bone_map
from .load import CLIP_SUFFIXES, ClipSpec, describe, format_inspection, inspect_file, load_clips, load_file, parse_spec
from .model import MIN_DURATION_S, Clip, ClipError, ClipRest

__all__ = [
    "BoneMap", "CLIP_SUFFIXES", "Clip", "ClipError", "ClipRest", "ClipSpec", "MIN_DURATION_S", "describe",
    "detect_bone_map", "format_inspection", "inspect_file", "load_clips", "load_file", "parse_spec",
    "read_bone_map",
]
