"""The results folder of a matrix run: one file per finished cell, merged into Parquet.

Layout of ``OUT``:

- ``cells/<key>.json``: one per finished cell, ``{"row": {...}, "timing": {...}}``, written
  atomically (a temporary file in the same folder, then ``os.replace``) as soon as the
  cell's result reaches the driver. A killed run loses only the cells in flight; a re-run
  skips every cell whose file is there (same key = same inputs, settings and code).
- ``results.parquet``: one row per cell of the run, in spec order (:data:`ROW_SCHEMA`):
  the measured columns, the identity of a row — compare these byte for byte;
- ``timings.parquet``: the wall-clock columns (:data:`TIMING_SCHEMA`), keyed by ``key``;
  they differ between runs and machines and are never part of the identity.

Why per-cell files and Parquet at the end rather than appending to one Parquet file:
a Parquet file is written whole (its footer comes last), so appending cell by cell means
rewriting it (quadratic) and a kill during a rewrite loses everything; small atomic files
cost nothing per cell and survive any interruption, and the merge is milliseconds. JSON
keeps floats exact (shortest round-trip repr) and NaN as ``NaN``.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)


def _schemas():
    import pyarrow as pa

    f64, i64, s = pa.float64(), pa.int64(), pa.string()
    rows = pa.schema([
        ("key", s), ("avatar", s), ("hairstyle", s), ("clip", s), ("solver", s), ("status", s), ("error", s),
        ("name", s), ("clip_label", s), ("motion_s", f64), ("settle_s", f64),
        ("chains", i64), ("joints", i64), ("hair_vertices", i64), ("hair_edges", i64),
        ("stretch_p99_pct", f64), ("stretch_worst_pct", f64), ("settle_mm", f64), ("root_drift_mm", f64),
        ("link_inside_pairs", i64), ("link_max_depth_mm", f64), ("link_max_depth_beyond_rest_mm", f64),
        ("vertex_inside", i64), ("vertex_max_depth_mm", f64), ("vertex_max_depth_beyond_rest_mm", f64),
        ("tip_rest_arc_mm", f64), ("tip_swing_mm", f64),
        ("guides", i64), ("attached", i64), ("joined", i64), ("rejected", i64),
        ("scalp_drift_mm", f64), ("head_inside", i64), ("head_depth_mm", f64), ("head_inside_rest", i64),
        ("head_depth_rest_mm", f64),
        ("fps_identity", f64), ("fps_labels", pa.list_(s)), ("fps_frames", pa.list_(i64)),
        ("fps_substeps", pa.list_(i64)), ("fps_position_diff", pa.list_(f64)), ("fps_velocity_diff", pa.list_(f64)),
    ])
    timings = pa.schema([
        ("key", s), ("seconds", f64), ("load_s", f64), ("fit_s", f64), ("fit_cached", pa.bool_()),
        ("measure_s", f64), ("fps_s", f64), ("tryon_s", f64), ("substep_us_median", f64), ("substep_us_p95", f64),
        ("frame_update_us_median", f64), ("frame_update_us_p95", f64), ("worker", s), ("executor", s),
        ("cached", pa.bool_()), ("traceback", s),
    ])
    return rows, timings


def row_columns() -> list[str]:
    """The columns of ``results.parquet`` in order."""
    return list(_schemas()[0].names)


class ResultStore:
    """The results folder ``folder`` (module doc; created when missing)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.cells = self.folder / "cells"
        self.cells.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.cells / f"{key}.json"

    def get(self, key: str) -> tuple[dict, dict] | None:
        """(row, timing) of a finished cell, or None (absent or unreadable: run it again)."""
        try:
            doc = json.loads(self.path(key).read_text())
            return doc["row"], doc["timing"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("cell file %s is unreadable (%s); the cell runs again", self.path(key).name, exc)
            return None

    def put(self, row: dict, timing: dict) -> Path:
        """Write a finished cell atomically; returns its file."""
        target = self.path(row["key"])
        fd, tmp = tempfile.mkstemp(prefix=".cell-", suffix=".tmp", dir=self.cells)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"row": row, "timing": timing}, f, sort_keys=True)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def write_tables(self, results: list[tuple[dict, dict]]) -> tuple[Path, Path]:
        """``results.parquet`` and ``timings.parquet`` of ``results`` ((row, timing) in spec
        order), each written atomically. Returns their paths."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        row_schema, timing_schema = _schemas()
        out = []
        for name, schema, items in (("results.parquet", row_schema, [r for r, _ in results]),
                                    ("timings.parquet", timing_schema, [t for _, t in results])):
            table = pa.Table.from_pylist([{k: d.get(k) for k in schema.names} for d in items], schema=schema)
            target = self.folder / name
            tmp = self.folder / f".{name}.tmp"
            pq.write_table(table, tmp)
            os.replace(tmp, target)
            out.append(target)
        return out[0], out[1]


def read_rows(path: str | Path) -> list[dict]:
    """The rows of a ``results.parquet`` (or ``timings.parquet``) as dicts."""
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()
