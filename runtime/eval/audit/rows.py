"""One audit row per entry: the fit record and the two matrix rows merged, and its command.

Columns (None where not measured):

- identity: ``style``, ``source`` (shared, corpus, a folder), ``avatar`` (as given),
  ``avatar_name``; ``status``: "ok" (fitted and measured), "rigid" (fitted with no spring
  chain: held on the head, nothing to measure), "refused" (the try-on cannot fit it; the
  message in ``error``), "error" (a cell failed; its message);
- the fit (:mod:`.fits`): ``candidates``, ``attached``, ``joined``, ``rejected``,
  ``attached_pct`` = 100 (attached + joined) / candidates (the seed articles' "attached"
  share counts joined guides as attached), ``vertices_missed``, ``chains``, ``joints``,
  ``hair_vertices``, ``method`` (how it was placed), ``fit_s`` (the fit's own seconds);
- stretch: ``turn_p99_pct``, ``turn_worst_pct`` (the head turn), ``clip_p99_pct``,
  ``clip_worst_pct`` (the fast clip) — the matrix's ``stretch_p99_pct`` /
  ``stretch_worst_pct``; ``turn_swing_mm``: the largest tip distance from its rest arc during
  the head turn (the matrix's ``tip_swing_mm``: 0 stretch with no swing is hair that does not
  move); ``turn_edges``: the hair mesh edges the stretch is measured on (edges between vertices
  whose dominant skin weight is a spring joint, :func:`solver.eval.hair_mesh.find_hair`); with
  none, a cell's stretch is no measure and stays empty (the matrix row says 0);
- penetration: ``head_inside`` and ``head_depth_mm`` (drawn hair vertices inside the head
  mesh during the head turn, and the deepest, mm), ``collider_depth_mm`` (the deepest drawn
  vertex inside a collider beyond the rest pose's, mm, over both cells), ``scalp_drift_mm``;
  ``fps_identity`` (largest over both cells; 0 = bit-identical at every rate);
- ``thumbs`` {front, back}: paths relative to the audit folder; ``command``: the
  ``swaycam run`` that opens the entry live; ``fit_command``: its ``swaycam hair fit --json``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from .plan import Entry


def _max(*values):
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def live_command(entry: Entry, default_folders: list[Path]) -> str:
    """``swaycam run --avatar A --hair STYLE`` (``--hair-dir`` when the style's folder is not
    one a plain run searches)."""
    avatar = entry.avatar if entry.avatar in ("default", "layered") else str(entry.avatar_path)
    args = ["swaycam", "run", "--avatar", avatar]
    if entry.folder.resolve() not in {f.resolve() for f in default_folders}:
        args += ["--hair-dir", str(entry.folder.resolve())]
    return shlex.join(args + ["--hair", entry.style])


def fit_command(entry: Entry) -> str:
    """The ``swaycam hair fit --json`` whose guide counts the row shows (its ``--avatar`` takes
    a file: the generated layered avatar's cached file; none for the default avatar)."""
    args = ["swaycam", "hair", "fit", str(entry.style_path.resolve()), "--json"]
    return shlex.join(args + ([] if entry.avatar == "default" else ["--avatar", str(entry.avatar_path)]))


def audit_row(entry: Entry, record: dict, turn: dict | None, clip: dict | None, *, thumbs: dict[str, str],
              default_folders: list[Path]) -> dict:
    """The row of ``entry`` (module doc) from its fit record and its matrix rows (None: not
    run, e.g. an interrupted audit)."""
    row = {"style": entry.style, "source": entry.source, "avatar": entry.avatar, "avatar_name": entry.avatar_name,
           "status": "ok", "error": None, "thumbs": thumbs, "command": live_command(entry, default_folders),
           "fit_command": fit_command(entry), "turn_key": entry.turn.key,
           "clip_key": entry.clip.key if entry.clip is not None else None,
           "clip": entry.clip.clip if entry.clip is not None else None}
    for k in ("candidates", "attached", "joined", "rejected", "attached_pct", "vertices_missed", "chains", "joints",
              "hair_vertices", "method", "fit_s", "turn_edges", "turn_p99_pct", "turn_worst_pct", "turn_swing_mm", "clip_p99_pct", "clip_worst_pct",
              "head_inside", "head_depth_mm", "collider_depth_mm", "scalp_drift_mm", "fps_identity"):
        row[k] = None
    if record.get("status") != "ok":
        row.update(status="refused", error=record.get("error"))
        return row
    g = record["guides"]
    row.update(candidates=g["candidates"], attached=g["attached"], joined=g["joined"], rejected=g["rejected"],
               attached_pct=100.0 * (g["attached"] + g["joined"]) / g["candidates"] if g["candidates"] else None,
               vertices_missed=record["vertices_missed"], chains=record["chains"], joints=record["joints"],
               hair_vertices=record["hair_vertices"], method=(record.get("fit") or {}).get("method"),
               fit_s=record["fit_seconds"])
    cells = [r for r in (turn, clip) if r is not None]
    failed = [r for r in cells if r["status"] == "error"]
    if failed:
        row.update(status="error", error=failed[0]["error"])
    elif cells and all(r["status"] == "skipped" for r in cells):
        row.update(status="rigid", error=cells[0]["error"])
    elif len(cells) < 1 + (entry.clip is not None):
        row.update(status="error", error="not measured yet (an interrupted audit: run it again)")
    if turn is not None and turn["status"] == "ok":
        row.update(turn_edges=turn["hair_edges"], turn_swing_mm=turn["tip_swing_mm"], head_inside=turn["head_inside"],
                   head_depth_mm=turn["head_depth_mm"], scalp_drift_mm=turn["scalp_drift_mm"])
        if turn["hair_edges"]:
            row.update(turn_p99_pct=turn["stretch_p99_pct"], turn_worst_pct=turn["stretch_worst_pct"])
    if clip is not None and clip["status"] == "ok" and clip["hair_edges"]:
        row.update(clip_p99_pct=clip["stretch_p99_pct"], clip_worst_pct=clip["stretch_worst_pct"])
    ok = [r for r in cells if r["status"] == "ok"]
    row["collider_depth_mm"] = _max(*(r["vertex_max_depth_beyond_rest_mm"] for r in ok))
    row["fps_identity"] = _max(*(r["fps_identity"] for r in ok))
    return row


def totals(rows: list[dict]) -> dict:
    """The page's headline: entries, fitted (not refused), measured (ok), guides summed
    (candidates, attached, joined, rejected), the attached-or-joined share in %, vertices
    missed and in how many fits, styles with rejected guides."""
    fitted = [r for r in rows if r["status"] != "refused"]
    cand = sum(r["candidates"] for r in fitted)
    att = sum(r["attached"] for r in fitted)
    joined = sum(r["joined"] for r in fitted)
    return {"entries": len(rows), "styles": len({r["style"] for r in rows}),
            "avatars": len({r["avatar"] for r in rows}), "fitted": len(fitted),
            "measured": sum(r["status"] == "ok" for r in rows), "rigid": sum(r["status"] == "rigid" for r in rows),
            "refused": len(rows) - len(fitted), "errors": sum(r["status"] == "error" for r in rows),
            "candidates": cand, "attached": att, "joined": joined, "rejected": sum(r["rejected"] for r in fitted),
            "attached_pct": 100.0 * (att + joined) / cand if cand else None,
            "vertices_missed": sum(r["vertices_missed"] for r in fitted),
            "fits_missing_vertices": sum(r["vertices_missed"] > 0 for r in fitted),
            "with_rejected": sum(r["rejected"] > 0 for r in fitted)}
