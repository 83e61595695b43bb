"""Compile numba's kernels once before the suite's workers start (``python -m tests.kernel_warmup PART``).

numba compiles a ``cache=True`` kernel on its first call in a process and writes the machine
code to the ``__pycache__`` next to its source; a later process loads it in milliseconds. On a
fresh clone that cache is empty, and the suite's first files (the soak's subprocess, the matrix's
pool and Ray workers, the service subprocesses, the pytest-xdist workers themselves) all start at
once and each compiled the same kernels: ``standard_run`` alone costs 109 s of CPU to compile on
an empty cache and 0.1 s once cached (measured here, 2026-12-03). tests/conftest.py runs the two
parts below side by side in the xdist controller before any worker starts, so the kernels are
compiled once, on both cores:

- ``solver``: the hair solver's kernels (step, contact, relaxation, angle limits, linked sheets,
  forces, the chains' pose and batch step), through a short :func:`solver.eval.measure.standard_run`.
- ``rig``: the runtime rig's kernels (head drive, forward kinematics, node constraints, body
  motion), the track sampling and gaze kernels of tracking/, and the renderer's joint matrices,
  through short :func:`runtime.replay.replay` runs of the head-turn track, with a body clip on
  Godette (the shared assets; the generated idle on the default avatar without them) and without
  one on the default avatar, their hair springs removed so this part does not compile the
  solver's kernels a second time.

A part that fails prints its error and exits 1; the suite then compiles on first use as before.
"""

from __future__ import annotations

import dataclasses
import sys
import time
import numpy as np


def warm_solver() -> None:
    from avatars.clips.head_turn import head_turn_rotation
    from avatars.generate import default_avatar_path
    from avatars.loader import load_avatar
    from solver.eval.measure import standard_run

    standard_run(load_avatar(default_avatar_path()), head_turn_rotation, solver="rest-shape",
                 motion_s=0.3, still_s=0.1)


def _rig_inputs():
    from avatars.generate import default_avatar_path
    from avatars.loader import load_avatar

    from avatars.assets import assets_dir

    assets = assets_dir()
    godette = assets / "vrm" / "Godette_vrm_v4.vrm"
    library = assets / "anim" / "ual" / "AnimationLibrary_Godot_Standard.gltf"
    if godette.is_file() and library.is_file():
        return load_avatar(godette), f"{library}#Jog_Fwd_Loop"
    return load_avatar(default_avatar_path()), "idle"


def warm_rig() -> None:
    from avatars.generate import default_avatar_path
    from avatars.loader import load_avatar
    from render.joint_matrices import joint_matrices_kernel
    from runtime.config import motion_options
    from runtime.pose_inputs.track import head_turn_track
    from runtime.replay import replay
    from runtime.rig.motion import load_motion

    avatar, clip = _rig_inputs()
    setup = load_motion(clip, options=motion_options({"in_place": False}, "option"))
    hairless = dataclasses.replace(avatar, springs=(), spring_links=())
    plain = dataclasses.replace(load_avatar(default_avatar_path()), springs=(), spring_links=())
    replay(hairless, head_turn_track(), 30, motion=setup, duration_ns=200_000_000)
    replay(plain, head_turn_track(), 30, duration_ns=200_000_000)   # the paths without body motion
    n = len(avatar.skeleton.names)
    world = np.tile(np.eye(4), (n, 1, 1))
    joint_matrices_kernel(world, np.arange(n, dtype=np.int64), world.copy(), np.empty((n, 4, 4)),
                          np.empty((n, 3, 4), np.float32))


PARTS = {"solver": warm_solver, "rig": warm_rig}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in PARTS:
        print(f"usage: python -m tests.kernel_warmup {{{','.join(PARTS)}}}", file=sys.stderr)
        return 2
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        PARTS[argv[0]]()
    except Exception as exc:  # noqa: BLE001 - reported; the suite compiles on first use instead
        print(f"kernel warm-up {argv[0]} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"kernel warm-up {argv[0]}: {time.perf_counter() - t0:.1f} s wall, "
          f"{time.process_time() - c0:.1f} s CPU", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
