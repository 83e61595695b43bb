"""One matrix run end to end: cached cells skipped, the rest executed, tables and report.

:func:`run_matrix` reads every cell's file from the results folder
(:class:`runtime.eval.matrix.store.ResultStore`), hands the missing ones to the executor,
stores each result as it arrives, and always (also when interrupted) writes the Parquet
tables of what is there. :func:`cell_command` is the command that reproduces one cell.
"""

from __future__ import annotations

import json
import logging
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from .axes import Axes, Cell, Settings, resolve_path
from .progress import Progress
from .store import ResultStore

log = logging.getLogger(__name__)


@dataclass
class RunSummary:
    """What a run did: cells in all, taken from the folder, computed (of them ``failed``:
    error rows, ``transient`` executor failures included; a skipped row is not a failure),
    wall seconds and the files written."""

    total: int
    cached: int
    computed: int
    failed: int
    transient: int
    seconds: float
    results: Path | None = None
    timings: Path | None = None
    report: Path | None = None

    def as_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


def run_matrix(cells: list[Cell], out: str | Path, executor, *, progress: Progress | None = None,
               retry_failed: bool = False, axes: Axes | None = None) -> tuple[RunSummary, list[tuple[dict, dict]]]:
    """Run ``cells`` into the results folder ``out`` (module doc) -> (summary, [(row,
    timing)] in cell order). ``retry_failed`` runs stored error rows again. An interrupt
    (KeyboardInterrupt) propagates after the tables of the finished cells are written."""
    t0 = time.perf_counter()
    store = ResultStore(out)
    if axes is not None:
        (store.folder / "spec.json").write_text(json.dumps(axes_document(axes), indent=2) + "\n")
    progress = progress or Progress(len(cells), enabled=False)
    results: dict[str, tuple[dict, dict]] = {}
    todo = []
    for c in cells:
        got = store.get(c.key)
        if got is not None and not (retry_failed and got[0]["status"] == "error"):
            results[c.key] = (got[0], {**got[1], "cached": True})
            progress.add_cached()
        else:
            todo.append(c)
    counts = {"computed": 0, "failed": 0, "transient": 0}

    def on_result(cell: Cell, row: dict, timing: dict, transient: bool) -> None:
        timing = {**timing, "executor": executor.name, "cached": False}
        if not transient:
            store.put(row, timing)
        results[cell.key] = (row, timing)
        counts["computed"] += 1
        counts["failed"] += row["status"] == "error"
        counts["transient"] += transient
        progress.cell(f"{cell.label}" + (f": {row['error']}" if row["error"] else ""), row["status"],
                      timing.get("seconds"))

    progress.start()
    ordered: list[tuple[dict, dict]] = []
    summary = RunSummary(len(cells), len(cells) - len(todo), 0, 0, 0, 0.0)
    try:
        executor.run(todo, on_result)
    finally:
        ordered = [results[c.key] for c in cells if c.key in results]
        summary.results, summary.timings = store.write_tables(ordered)
        summary.computed, summary.failed, summary.transient = counts["computed"], counts["failed"], counts["transient"]
        summary.seconds = time.perf_counter() - t0
    return summary, ordered


def axes_document(axes: Axes) -> dict:
    """The axes and settings of a run as written to ``spec.json``."""
    return {"avatars": list(axes.avatars), "hairstyles": list(axes.hairstyles), "clips": list(axes.clips),
            "solvers": list(axes.solvers), "hair_dir": axes.hair_dir, **axes.settings.as_dict()}


def settings_options(s: Settings) -> list[str]:
    """The ``swaycam matrix`` options giving settings ``s`` (none for the defaults)."""
    d, out = Settings(), []
    if s.rates != d.rates:
        out += ["--rates", ",".join(f"{r:g}" for r in s.rates)]
    if s.jittered != d.jittered:
        out += ["--jittered", ",".join(f"{f:g}:{j:g}:{seed}" for f, j, seed in s.jittered) or "none"]
    if s.duration_s is not None:
        out += ["--duration", f"{s.duration_s:g}"]
    if s.settle_s != d.settle_s:
        out += ["--settle", f"{s.settle_s:g}"]
    return out


def cell_command(cell: Cell) -> str:
    """The ``swaycam matrix`` command that measures ``cell`` alone (into ``matrix-cell/``)."""
    args = ["swaycam", "matrix", "--avatar", cell.avatar, "--hair", cell.hairstyle, "--clip", cell.clip,
            "--solver", cell.solver, *settings_options(cell.settings)]
    if cell.hair_dir:
        args += ["--hair-dir", cell.hair_dir]
    return shlex.join(args + ["--out", "matrix-cell"])


def metrics_command(cell: Cell) -> str | None:
    """The ``swaycam metrics`` command whose table has this cell's numbers (default settings
    only: metrics has no rate, duration or settle options), else None."""
    if cell.settings != Settings():
        return None
    avatar = cell.avatar if cell.avatar in ("default", "layered") else str(Path(cell.avatar_input.path))
    args = ["swaycam", "metrics", "--avatar", avatar, "--solver", cell.solver]
    if cell.hairstyle != "none":
        args += ["--hair", cell.hairstyle if not cell.hairstyle.startswith("assets:") else cell.hair_input.path]
        if cell.hair_dir:
            args += ["--hair-dir", cell.hair_dir]
    if cell.clip != "turn-test":
        clip = cell.clip
        if clip.startswith("assets:"):
            head, sep, names = clip.partition("#")
            clip = f"{resolve_path(head)}{sep}{names}"
        args += ["--motion", clip]
    return shlex.join(args)
