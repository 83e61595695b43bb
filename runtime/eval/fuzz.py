"""Fuzzing the file inputs (issue 16; ``swaycam fuzz``, ``tests/runtime/eval/test_fuzz.py``): the
seeded mutants of :mod:`runtime.eval.fuzz_mutators`, each loaded, rigged, stepped, posed and
skinned in a worker process, counted by format and outcome.

Each mutant runs (:func:`exercise`) in a worker process: load (``load_avatar``,
``load_file`` for clips, ``load_obj`` for hair); an avatar is rigged (:class:`AvatarRig`),
stepped 30 substeps under the standard head turn at its fastest, posed for drawing and
skinned on the CPU with its expressions at full weight (a plain glTF, which the runtime
refuses to drive for want of a humanoid head, is skinned at rest); a clip is played on a real VRM 1.0
avatar the same way; an OBJ hair is fitted and auto-rigged onto the generated default avatar
(the try-on) and the result stepped the same way. Outcomes:

- ``ok``: loaded (perhaps with warnings) and every posed, solved and skinned value finite;
- ``refused``: a clear error — :class:`avatars.AvatarError` (clips' ClipError, hair's
  HairError) from loading, or a :class:`runtime.rig.RigError` (the avatar cannot be driven);
- ``crash``: any other exception; ``nonfinite``: NaN/inf in a posed, solved or skinned value;
  ``hang``: the mutant took over :data:`TIMEOUT_S` of its worker's CPU time, or over
  :data:`WALL_TIMEOUT_S` of wall time (a deadlock uses no CPU); its worker is killed and
  replaced. CPU time, not wall time, so that a machine loaded by other programs does not
  turn a slow-but-finite mutant into a hang (one second of fitting took 8 s of wall time
  at load 13 on two cores).

The last three are failures. Workers run with an address-space limit so a mutant that
allocates without bound fails as a ``crash`` (MemoryError) instead of taking the machine.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .fuzz_mutators import Mutant, make_mutant, seeds

#: A mutant taking longer than this (load + rig + steps + skinning) is a hang (seconds of
#: the worker's CPU time; :func:`_cpu_seconds`).
TIMEOUT_S = 10.0
#: ... or longer than this in wall time, whatever its CPU time (seconds).
WALL_TIMEOUT_S = 60.0
#: Substeps run under the head turn per mutant.
SUBSTEPS = 30
#: Address-space limit of a worker (bytes): a mutant allocating without bound fails fast.
WORKER_MEMORY_LIMIT = 6 * 1024 ** 3
#: Outcomes that fail a run.
FAILURES = ("crash", "nonfinite", "hang")
OUTCOMES = ("ok", "refused") + FAILURES


@dataclass
class Outcome:
    index: int
    seed: str
    kind: str
    mutation: str
    detail: str
    outcome: str
    stage: str = ""
    error: str = ""
    seconds: float = 0.0


@dataclass
class FuzzReport:
    """Counts of one run: by format (seed kind) and outcome, and every failure."""

    seed: int
    count: int
    seconds: float = 0.0
    by_kind: dict = field(default_factory=dict)        # kind -> {outcome: n}
    by_mutation: dict = field(default_factory=dict)    # mutation -> {outcome: n}
    failures: list = field(default_factory=list)       # Outcome of each failure

    def add(self, o: Outcome) -> None:
        self.by_kind.setdefault(o.kind, Counter())[o.outcome] += 1
        self.by_mutation.setdefault(o.mutation, Counter())[o.outcome] += 1
        if o.outcome in FAILURES:
            self.failures.append(o)

    @property
    def totals(self) -> Counter:
        out = Counter()
        for c in self.by_kind.values():
            out.update(c)
        return out

    def as_dict(self) -> dict:
        return {"seed": self.seed, "count": self.count, "seconds": round(self.seconds, 1),
                "totals": {k: self.totals.get(k, 0) for k in OUTCOMES},
                "by_kind": {k: {o: c.get(o, 0) for o in OUTCOMES} for k, c in sorted(self.by_kind.items())},
                "by_mutation": {k: {o: c.get(o, 0) for o in OUTCOMES} for k, c in sorted(self.by_mutation.items())},
                "failures": [f.__dict__ for f in self.failures]}

    def table(self) -> str:
        lines = [f"{self.count} mutants (seed {self.seed}) in {self.seconds:.0f} s", "",
                 "| format | " + " | ".join(OUTCOMES) + " |", "|---" * (len(OUTCOMES) + 1) + "|"]
        for k, c in sorted(self.by_kind.items()):
            lines.append(f"| {k} | " + " | ".join(str(c.get(o, 0)) for o in OUTCOMES) + " |")
        t = self.totals
        lines.append("| all | " + " | ".join(str(t.get(o, 0)) for o in OUTCOMES) + " |")
        for f in self.failures[:50]:
            lines.append(f"FAIL {f.outcome} #{f.index} {f.seed} {f.mutation} ({f.detail}) at {f.stage}: {f.error}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- exercising


class NonFinite(Exception):
    """A posed, solved or skinned value is NaN or inf."""


def _finite(what: str, a) -> None:
    a = np.asarray(a)
    if a.size and not np.all(np.isfinite(a)):
        raise NonFinite(f"{what} has NaN/inf")


class _Context:
    """What a worker keeps between mutants: base avatars for clips and hair."""

    def __init__(self, assets: Path | None):
        from avatars import load_avatar
        from avatars.assets import assets_dir

        a = Path(assets) if assets is not None else assets_dir()
        self.assets = a
        self.clip_avatar = load_avatar(a / "vrm" / "smoke_spring.vrm")
        self._hair_avatar = None
        self.tmp = Path(tempfile.mkdtemp(prefix="swaycam-fuzz-"))

    def warm_up(self, kinds) -> None:
        """Load the compiled kernels (numba cache) before the first timed mutant: a cold
        cache costs seconds, which is not the mutant's time."""
        _drive(self.clip_avatar)
        if kinds is None or "vrma" in kinds:
            from avatars.clips import load_file

            _drive(self.clip_avatar, clips=load_file(self.assets / "anim" / "test.vrma"))

    @property
    def hair_avatar(self):
        if self._hair_avatar is None:
            from avatars import load_avatar
            from avatars.generate import default_avatar_path

            self._hair_avatar = load_avatar(default_avatar_path())
        return self._hair_avatar


def _clear_errors() -> tuple[type, ...]:
    from avatars import AvatarError
    from runtime.rig import RigError

    return (AvatarError, RigError)


def _drive(avatar, *, clips=None) -> None:
    """Rig ``avatar`` (playing ``clips``), step :data:`SUBSTEPS` substeps of the head turn at
    its fastest, pose for drawing and skin every primitive with every expression at full
    weight. Raises NonFinite."""
    from avatars.clips.head_turn import head_turn_rotation
    from tracking.pose_track import PoseSample

    from ..rig import AvatarRig, MotionOptions

    rig = AvatarRig(avatar, motion=MotionOptions() if clips is not None else None)
    if clips:
        rig.play_motion(clips)
    s = PoseSample()
    h = 1_000_000_000 // 120
    t0 = 1_000_000_000        # the head turn's fast part
    s.t_ns = t0
    s.found = True
    rig.reset(s)
    for n in range(1, SUBSTEPS + 1):
        t = t0 + n * h * 4    # four times faster than the standard turn: a harsh drive
        s.t_ns = t0 + n * h
        s.rotation[:] = head_turn_rotation(t / 1e9)
        s.translation[:] = (0.02 * math.sin(n), 0.0, 0.01)
        rig.substep(s)
        _finite("solver input (world)", rig.world)
        if rig.chains is not None:
            _finite("hair tails", rig.chains.tails)
            _finite("hair velocities", rig.chains.velocities)
    world = rig.draw_pose(s, 0.5)
    _finite("draw pose", world)
    _skin(avatar, world)


def _skin(avatar, world) -> None:
    """Skin every primitive of ``avatar`` posed by ``world`` (N, 4, 4) on the CPU, every
    expression at full weight. Raises NonFinite."""
    from avatars.skinning import joint_matrices, skin_positions
    from render.expressions import expression_frame

    values = {name: 1.0 for name in avatar.expressions}
    frame = expression_frame(avatar, values)
    for k, mi in enumerate(avatar.mesh_instances):
        jm = joint_matrices(avatar, mi.skin, world) if mi.skin >= 0 else None
        if jm is not None:
            _finite(f"skinning matrices of skin {mi.skin}", jm)
        for prim in avatar.meshes[mi.mesh].primitives:
            w = frame.morph_weights[k] if k < len(frame.morph_weights) else None
            _finite(f"morph weights of instance {k}", w if w is not None else [])
            _finite(f"skinned mesh {mi.mesh}", skin_positions(prim, jm, world[mi.node], w))


def exercise(mutant: Mutant, ctx: _Context) -> Outcome:
    """Load, rig, step, pose and skin one mutant (module doc); never raises."""
    out = Outcome(mutant.index, mutant.seed, mutant.kind, mutant.mutation, mutant.detail, "ok")
    t = time.perf_counter()
    stage = "load"
    try:
        if mutant.kind in ("vrm0", "vrm1", "gltf"):
            from avatars import load_avatar

            avatar = load_avatar(mutant.seed, data=mutant.data)
            if mutant.kind == "gltf" and "head" not in avatar.humanoid:
                # a plain glTF: the runtime refuses to drive it (RigError); its meshes are
                # still skinned at rest, as `swaycam inspect` and the hair sources read them
                stage = "skin"
                _skin(avatar, avatar.skeleton.rest_world)
            else:
                stage = "rig"
                _drive(avatar)
        elif mutant.kind == "vrma":
            from avatars.clips import load_file

            path = ctx.tmp / f"m{mutant.index}.vrma"
            path.write_bytes(mutant.data)
            try:
                clips = load_file(path)
            finally:
                path.unlink()
            stage = "rig"
            _drive(ctx.clip_avatar, clips=clips)
        elif mutant.kind == "obj":
            from avatars.hair import load_obj
            from avatars.tryon.pipeline import try_on

            path = ctx.tmp / f"m{mutant.index}.obj"
            path.write_bytes(mutant.data)
            try:
                hair = load_obj(path)
            finally:
                path.unlink()
            _finite("hair positions", hair.positions)
            stage = "try-on"
            result = try_on(ctx.hair_avatar, hair)
            if result.avatar is not None:
                stage = "rig"
                _drive(result.avatar)
        else:
            raise ValueError(mutant.kind)
    except NonFinite as exc:
        out.outcome, out.stage, out.error = "nonfinite", stage, str(exc)
    except _clear_errors() as exc:
        out.outcome, out.stage, out.error = "refused", stage, str(exc)[:300]
    except Exception as exc:  # noqa: BLE001 - the point: any other exception is a finding
        tb = traceback.extract_tb(exc.__traceback__)
        where = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb[-4:]))
        out.outcome, out.stage, out.error = "crash", stage, f"{type(exc).__name__}: {str(exc)[:200]} [{where}]"
    out.seconds = time.perf_counter() - t
    return out


# --------------------------------------------------------------------------- running


def _worker(conn, run_seed: int, kinds, assets) -> None:
    import logging
    import resource
    import warnings

    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    try:
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_LIMIT, WORKER_MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    all_seeds = seeds(assets, kinds=kinds)
    ctx = _Context(assets)
    ctx.warm_up(kinds)
    conn.send("ready")
    while True:
        index = conn.recv()
        if index is None:
            return
        m = make_mutant(all_seeds, run_seed, index)
        conn.send(exercise(m, ctx))


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc/PID/stat`` fields 14 and
    15, proc(5)); None where it cannot be read (another OS: the wall time decides)."""
    import os

    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _Worker:
    def __init__(self, mpc, run_seed, kinds, assets):
        self.conn, child = mpc.Pipe()
        self.proc = mpc.Process(target=_worker, args=(child, run_seed, kinds, assets), daemon=True)
        self.proc.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0
        self.cpu_started: float | None = None
        self.ready = False

    def over(self, timeout_s: float) -> bool:
        """The mutant in flight has used more than ``timeout_s`` of CPU time, or more than
        :data:`WALL_TIMEOUT_S` (at least ``timeout_s``) of wall time."""
        wall = time.perf_counter() - self.started
        cpu = _cpu_seconds(self.proc.pid)
        if cpu is None or self.cpu_started is None:
            return wall > timeout_s
        return cpu - self.cpu_started > timeout_s or wall > max(WALL_TIMEOUT_S, timeout_s)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.join(5)
        self.conn.close()


def run_fuzz(count: int, *, seed: int = 0, workers: int = 1, kinds: tuple[str, ...] | None = None,
             assets: Path | None = None, only: list[int] | None = None, timeout_s: float = TIMEOUT_S,
             progress=None) -> FuzzReport:
    """Run mutants 0..count-1 (or ``only`` those indices) of run ``seed`` in ``workers``
    processes; returns the counts by format and outcome (module doc)."""
    mpc = mp.get_context("spawn")
    kinds = tuple(kinds) if kinds else None
    todo = list(only) if only is not None else list(range(count))
    report = FuzzReport(seed=seed, count=len(todo))
    t0 = time.perf_counter()
    all_seeds = seeds(assets, kinds=kinds)
    pool = [_Worker(mpc, seed, kinds, assets) for _ in range(max(1, workers))]
    done = 0
    try:
        while todo or any(w.index is not None for w in pool):
            for i, w in enumerate(pool):
                if not w.ready:
                    if w.conn.poll(0):
                        w.conn.recv()
                        w.ready = True
                    elif not w.proc.is_alive():
                        raise RuntimeError("a fuzz worker failed to start")
                if w.ready and w.index is None and todo:
                    w.index = todo.pop(0)
                    w.started = time.perf_counter()
                    w.cpu_started = _cpu_seconds(w.proc.pid)
                    w.conn.send(w.index)
                if w.index is None:
                    continue
                result = None
                try:
                    if w.conn.poll(0):
                        result = w.conn.recv()
                except (EOFError, OSError):
                    result = "dead"
                if result is None and not w.proc.is_alive():
                    result = "dead"
                if result is None and w.over(timeout_s):
                    result = "hang"
                if result is None:
                    continue
                if not isinstance(result, Outcome):
                    m = make_mutant(all_seeds, seed, w.index)
                    why = ("killed after %.0f s of CPU time" % timeout_s) if result == "hang" else \
                        f"worker died (exit code {w.proc.exitcode})"
                    result = Outcome(m.index, m.seed, m.kind, m.mutation, m.detail,
                                     "hang" if result == "hang" else "crash", "", why,
                                     time.perf_counter() - w.started)
                    w.kill()
                    pool[i] = _Worker(mpc, seed, kinds, assets)
                else:
                    w.index = None
                report.add(result)
                done += 1
                if progress is not None:
                    progress(done, report.count)
            time.sleep(0.002)
    finally:
        for w in pool:
            try:
                w.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for w in pool:
            w.proc.join(2)
            if w.proc.is_alive():
                w.kill()
    report.seconds = time.perf_counter() - t0
    return report
