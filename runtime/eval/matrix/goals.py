"""The goals a matrix row is held to, and the worst-first order of rows.

Each goal is a column, a bound and where it comes from:

- ``fps_identity`` == 0: replays at every rate are bit-identical (the frame-rate rule of
  :mod:`runtime.replay`);
- ``settle_mm`` < 0.001: tip movement in the last 2 s (:mod:`solver.eval.measure`; the bound
  of ``tests/runtime/eval/test_hair_quality.py``);
- ``root_drift_mm`` < 1e-9: chain roots carried exactly, round-off only (same test);
- ``link_max_depth_beyond_rest_mm`` <= 1 and ``vertex_max_depth_beyond_rest_mm`` <= 1: no
  link or drawn hair vertex deeper than 1 mm into a collider beyond what the authored rest
  pose has (the same test; the try-on's 1 mm, :data:`solver.eval.tryon_quality.DEPTH_LIMIT`);
- ``tip_rest_arc_mm`` <= 1: no lasting curl (the "tentacle": the legacy solver ends > 1 mm
  off the rest arc under gravity, README "Hair quality");
- ``scalp_drift_mm`` < 1e-6 and ``head_depth_mm`` <= 1: a fitted style's roots follow their
  scalp triangles and its hair stays out of the head (``tests/avatars/tryon``).

Stretch has no bound (it is reported and ranks rows). A goal whose column is empty (a
body-clip row has no scalp drift) is neither met nor missed.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass


@dataclass(frozen=True)
class Goal:
    column: str
    op: str          # "==", "<", "<="
    bound: float
    label: str

    def met(self, value) -> bool | None:
        """True / False, or None when the row has no value for the column."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return {"==": operator.eq, "<": operator.lt, "<=": operator.le}[self.op](value, self.bound)

    @property
    def text(self) -> str:
        return f"{self.op.replace('==', '=')} {self.bound:g}"


GOALS = (
    Goal("fps_identity", "==", 0.0, "fps identity"),
    Goal("settle_mm", "<", 1e-3, "settle (mm)"),
    Goal("root_drift_mm", "<", 1e-9, "root drift (mm)"),
    Goal("link_max_depth_beyond_rest_mm", "<=", 1.0, "link depth beyond rest (mm)"),
    Goal("vertex_max_depth_beyond_rest_mm", "<=", 1.0, "vertex depth beyond rest (mm)"),
    Goal("tip_rest_arc_mm", "<=", 1.0, "tip off rest arc (mm)"),
    Goal("scalp_drift_mm", "<", 1e-6, "scalp drift (mm)"),
    Goal("head_depth_mm", "<=", 1.0, "head depth (mm)"),
)
GOAL_BY_COLUMN = {g.column: g for g in GOALS}


def missed(row: dict) -> list[str]:
    """The columns of the goals ``row`` misses."""
    return [g.column for g in GOALS if g.met(row.get(g.column)) is False]


def badness(row: dict) -> tuple:
    """Sort key, worst first when sorted ascending: failed rows, then more goals missed,
    then higher p99 stretch, then higher worst edge; skipped rows (nothing measured) last."""
    def neg(v):
        return -(v if v is not None and not math.isnan(v) else -math.inf)

    return ({"error": 0, "ok": 1}.get(row["status"], 2), -len(missed(row)), neg(row.get("stretch_p99_pct")),
            neg(row.get("stretch_worst_pct")), row["key"])


def worst_first(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=badness)
