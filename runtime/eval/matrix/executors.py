"""Where cells run: a local process pool (the default) or Ray.

Both call :func:`runtime.eval.matrix.cell.measure_cell` in worker processes that keep
loaded avatars, clips and fitted styles across cells (:data:`runtime.eval.matrix.inputs.
PROCESS_INPUTS`), and hand each result to ``on_result(cell, row, timing, transient)`` in
the driver as soon as the cell finishes. ``transient`` marks a failure of the executor,
not of the cell (a worker process that died, a Ray task lost with its node): its row is
reported but not stored, so a re-run tries the cell again.

- :class:`PoolExecutor`: :class:`concurrent.futures.ProcessPoolExecutor` with ``workers``
  processes forked from a fork server (Linux; ``spawn`` elsewhere) that has imported the
  cell's modules once. As with any multiprocessing start method but ``fork``, a script
  that runs a pool needs the ``if __name__ == "__main__":`` guard (the ``swaycam`` script
  and ``python -m runtime.cli`` have it). A pool whose process died (``BrokenProcessPool``)
  fails the cells not finished yet (transient).
- :class:`RayExecutor`: one Ray task per cell (``num_cpus=1``). Without an address,
  ``ray.init(num_cpus=workers)`` starts a local Ray whose workers import this checkout
  (``PYTHONPATH``). With an address (an existing cluster) the checkout's packages are
  shipped as the job's ``working_dir`` (:data:`SHIPPED_EXCLUDES` left out). In both modes
  the input files go through Ray's object store (one object per input, put once by the
  driver) and are written once per machine (:func:`runtime.eval.matrix.inputs.localize`),
  so no worker needs the driver's paths. Ray task workers are reused across tasks, so the
  per-process cache holds there too.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from .axes import Cell
from .cell import error_row, measure_cell

log = logging.getLogger(__name__)

#: Left out of the ``working_dir`` shipped to a Ray cluster.
SHIPPED_EXCLUDES = [".git", ".venv", "out", "docs", "tests", "**/__pycache__", "*.npz", "*.mp4"]


def repo_root() -> Path:
    """The folder holding the ``runtime`` package this process imported."""
    import runtime

    return Path(runtime.__file__).resolve().parents[1]


def _quiet_worker() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the driver handles Ctrl-C and ends the workers
    logging.basicConfig(level=logging.WARNING)


def _pool_task(cell: Cell) -> tuple[dict, dict]:
    return measure_cell(cell)


def _failed(cell: Cell, message: str) -> tuple[dict, dict]:
    return error_row(cell, message), {"key": cell.key}


class PoolExecutor:
    """Cells on ``workers`` local processes (module doc)."""

    name = "pool"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, int(workers or os.cpu_count() or 1))

    def run(self, cells: list[Cell], on_result) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        if not cells:
            return
        if sys.platform.startswith("linux"):
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["runtime.eval.matrix.cell"])
        else:
            ctx = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=min(self.workers, len(cells)), mp_context=ctx,
                                   initializer=_quiet_worker)
        futures = {pool.submit(_pool_task, c): c for c in cells}
        try:
            for fut in as_completed(futures):
                cell = futures[fut]
                try:
                    row, timing = fut.result()
                    transient = False
                except BrokenProcessPool:
                    (row, timing), transient = _failed(cell, "worker process died (the pool broke); "
                                                        "a re-run tries the cell again"), True
                except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
                    (row, timing), transient = _failed(cell, f"{type(exc).__name__}: {exc}"), True
                on_result(cell, row, timing, transient)
        except BaseException:
            procs = list((getattr(pool, "_processes", None) or {}).values())   # before shutdown clears it
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:                                                  # in-flight cells: end them now
                p.terminate()
            raise
        pool.shutdown(wait=True)


def _ray_task(cell: Cell, shipped: dict) -> tuple[dict, dict]:
    import ray

    from .inputs import localize

    try:
        local, paths = localize(cell, lambda digest: ray.get(shipped[digest]))
    except Exception as exc:  # noqa: BLE001 - an input that cannot be written here fails the cell
        return _failed(cell, f"{type(exc).__name__}: {exc}")
    return measure_cell(local, paths=paths)


class RayExecutor:
    """Cells as Ray tasks, locally or on the cluster at ``address`` (module doc)."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None):
        self.address = address
        self.workers = workers

    def init_kwargs(self) -> dict:
        """The arguments of ``ray.init`` (module doc)."""
        kw = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
        root = str(repo_root())
        if self.address:
            kw.update(address=self.address, runtime_env={"working_dir": root, "excludes": SHIPPED_EXCLUDES})
        else:
            path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
            kw.update(num_cpus=max(1, int(self.workers or os.cpu_count() or 1)),
                      runtime_env={"env_vars": {"PYTHONPATH": path}})
        return kw

    def run(self, cells: list[Cell], on_result) -> None:
        import ray
        from ray.exceptions import RayError

        from .inputs import bundle

        if not cells:
            return
        started = not ray.is_initialized()
        if started:
            ray.init(**self.init_kwargs())
        pending = {}
        try:
            task = ray.remote(num_cpus=1, max_retries=1)(_ray_task)
            objects = {}
            for c in cells:
                ins = [i for i in (c.avatar_input, c.hair_input, c.clip_input) if i is not None]
                for i in ins:
                    if i.digest not in objects:
                        objects[i.digest] = ray.put(bundle(i))
                pending[task.remote(c, {i.digest: objects[i.digest] for i in ins})] = c
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    cell = pending.pop(ref)
                    try:
                        row, timing = ray.get(ref)
                        transient = False
                    except RayError as exc:
                        (row, timing), transient = _failed(cell, f"ray: {type(exc).__name__}: "
                                                                 f"{str(exc).splitlines()[0]}"), True
                    on_result(cell, row, timing, transient)
        except BaseException:
            for ref in list(pending):
                ray.cancel(ref, force=True)
            raise
        finally:
            if started:
                ray.shutdown()
