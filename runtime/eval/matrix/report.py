"""The static HTML report of a matrix run: ``OUT/report/index.html`` and its pictures.

Sections: the run (cells, failed, goals missed, wall time); the summary table of every
row, worst first (:func:`runtime.eval.matrix.goals.worst_first`), each goal column coloured
met (green) or missed (red), with the command that reproduces the row; summaries by clip,
hairstyle, avatar and solver (cells, failed, rows missing a goal, median and worst p99
stretch, worst edge, worst settle, largest fps identity); per-axis plots of the stretch
(``stretch_by_<axis>.png``); the worst frame of the worst cells drawn by the renderer
(:mod:`runtime.eval.matrix.thumbs`, ``thumbs/``). Everything is relative to the report's
folder, so the folder can be copied or published as it is.
"""

from __future__ import annotations

import html
import logging
import math
import statistics
from pathlib import Path

from .goals import GOALS, met, missed, worst_first
from .run import cell_command, metrics_command

log = logging.getLogger(__name__)

#: (column, heading, format) of the summary table.
COLUMNS = (
    ("avatar", "avatar", "{}"), ("hairstyle", "hairstyle", "{}"), ("clip_label", "clip", "{}"),
    ("solver", "solver", "{}"),
    ("stretch_p99_pct", "p99 stretch %", "{:.2f}"), ("stretch_worst_pct", "worst edge %", "{:.2f}"),
    ("settle_mm", "settle (mm)", "{:.2g}"), ("root_drift_mm", "root drift (mm)", "{:.2g}"),
    ("link_inside_pairs", "links inside", "{}"),
    ("link_max_depth_beyond_rest_mm", "link depth beyond rest (mm)", "{:.2f}"),
    ("vertex_inside", "vertices inside", "{}"),
    ("vertex_max_depth_beyond_rest_mm", "vertex depth beyond rest (mm)", "{:.2f}"),
    ("tip_swing_mm", "tip swing (mm)", "{:.1f}"), ("tip_rest_arc_mm", "tip off rest arc (mm)", "{:.2f}"),
    ("scalp_drift_mm", "scalp drift (mm)", "{:.2g}"), ("head_depth_mm", "head depth (mm)", "{:.2f}"),
    ("fps_identity", "fps identity", "{:g}"),
)
AXES = (("clip_label", "clip"), ("hairstyle", "hairstyle"), ("avatar", "avatar"), ("solver", "solver"))

_CSS = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #1d2330; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 24px; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #d4d8e0; padding: 2px 6px; }
th { background: #eef1f6; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.met { background: #d9f2dc; } td.missed { background: #f8d3d0; font-weight: 600; }
tr.error td { background: #fbe3e1; } tr.skipped td { background: #eceef2; color: #5a6070; } code { font-size: 11px; }
.thumbs { display: flex; flex-wrap: wrap; gap: 12px; } figure { margin: 0; width: 260px; }
figcaption { font-size: 11px; } .plots img { max-width: 100%; }
"""


def format_value(value, fmt: str) -> str:
    """``value`` formatted with ``fmt`` for a table cell: "–" for None or NaN, ``str(value)``
    where ``fmt`` does not apply."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def _cell(row: dict, column: str, fmt: str) -> str:
    value = row.get(column)
    classes = ["num"] if isinstance(value, (int, float)) and not isinstance(value, bool) else []
    ok = met(row, column)
    if ok is not None:
        classes.append("met" if ok else "missed")
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{cls}>{html.escape(format_value(value, fmt))}</td>"


def _clean(values) -> list[float]:
    return [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def axis_summary(rows: list[dict], column: str) -> list[dict]:
    """Per value of ``column``: cells, failed, rows missing a goal, median and worst p99
    stretch, worst edge, worst settle, largest fps identity (None where no row has a value)."""
    out = []
    for value in dict.fromkeys(r[column] or r.get("clip") for r in rows):
        mine = [r for r in rows if (r[column] or r.get("clip")) == value]
        ok = [r for r in mine if r["status"] == "ok"]
        p99 = _clean(r["stretch_p99_pct"] for r in ok)
        out.append({
            "value": value, "cells": len(mine), "failed": sum(r["status"] == "error" for r in mine),
            "missing_a_goal": sum(bool(missed(r)) for r in ok),
            "p99_median": statistics.median(p99) if p99 else None, "p99_worst": max(p99) if p99 else None,
            "worst_edge": max(_clean(r["stretch_worst_pct"] for r in ok), default=None),
            "settle_worst": max(_clean(r["settle_mm"] for r in ok), default=None),
            "fps_identity_max": max(_clean(r["fps_identity"] for r in ok), default=None),
        })
    return out


def summary_markdown(rows: list[dict]) -> str:
    """The by-axis summaries as Markdown tables (for notes and docs)."""
    parts = []
    for column, name in AXES:
        parts.append(f"By {name}\n\n| {name} | cells | failed | missing a goal | p99 stretch % median | p99 worst | "
                     "worst edge % | settle worst (mm) | fps identity max |\n|---|---|---|---|---|---|---|---|---|")
        for s in axis_summary(rows, column):
            parts.append(f"| {s['value']} | {s['cells']} | {s['failed']} | {s['missing_a_goal']} | "
                         f"{format_value(s['p99_median'], '{:.2f}')} | {format_value(s['p99_worst'], '{:.2f}')} | "
                         f"{format_value(s['worst_edge'], '{:.2f}')} | {format_value(s['settle_worst'], '{:.2g}')} | "
                         f"{format_value(s['fps_identity_max'], '{:g}')} |")
        parts.append("")
    return "\n".join(parts)


def _plot(rows: list[dict], column: str, name: str, path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r["status"] == "ok" and r["stretch_p99_pct"] is not None]
    if not ok:
        return None
    values = list(dict.fromkeys(r[column] for r in ok))
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.28 * len(values)))
    for i, v in enumerate(values):
        mine = [r for r in ok if r[column] == v]
        ax.scatter([r["stretch_p99_pct"] for r in mine], [i] * len(mine), s=18, c="#2f6fdf",
                   label="p99" if i == 0 else None)
        ax.scatter([r["stretch_worst_pct"] for r in mine], [i] * len(mine), s=18, marker="x", c="#d9472b",
                   label="worst edge" if i == 0 else None)
    ax.set_yticks(range(len(values)), [str(v) for v in values], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("edge stretch (%)")
    ax.set_title(f"stretch by {name}")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def write_report(out: str | Path, cells: list, results: list[tuple[dict, dict]], *, thumbnails: int = 6) -> Path:
    """Write ``OUT/report/index.html`` (module doc) and return its path. Thumbnails that
    cannot be drawn (no GL here) are left out with a note, never an error."""
    folder = Path(out) / "report"
    folder.mkdir(parents=True, exist_ok=True)
    by_key = {c.key: c for c in cells}
    rows = [r for r, _ in results]
    timing = {t["key"]: t for _, t in results}
    ordered = worst_first(rows)
    thumbs, thumb_note = {}, ""
    if thumbnails:
        candidates = [r for r in ordered if r["status"] == "ok"][:thumbnails]
        try:
            from .thumbs import render_worst_frames

            thumbs = render_worst_frames([by_key[r["key"]] for r in candidates], folder / "thumbs")
        except Exception as exc:  # noqa: BLE001 - a report without pictures is still a report
            log.warning("no thumbnails: %s", exc)
            thumb_note = f"<p>No thumbnails: {html.escape(str(exc))}</p>"
    plots = [p for column, name in AXES if (p := _plot(rows, column, name, folder / f"stretch_by_{name}.png"))]
    failed = sum(r["status"] == "error" for r in rows)
    skipped = sum(r["status"] == "skipped" for r in rows)
    missing = sum(bool(missed(r)) for r in rows if r["status"] == "ok")
    seconds = sum(t.get("seconds") or 0.0 for t in timing.values())
    h = [f"<!doctype html><html><head><meta charset='utf-8'><title>swaycam quality matrix</title>"
         f"<style>{_CSS}</style></head><body>",
         "<h1>swaycam quality matrix</h1>",
         f"<p>{len(rows)} cells · {failed} failed · {skipped} not measured (no spring chain) · "
         f"{missing} missing a goal · "
         f"{sum(bool(t.get('cached')) for t in timing.values())} taken from earlier runs · "
         f"{seconds / 60:.1f} cell-minutes of compute. Goals: "
         + ", ".join(f"{html.escape(g.label)} {g.text}" for g in GOALS) + ".</p>",
         "<h2>Cells, worst first</h2><table><tr><th>#</th>"
         + "".join(f"<th>{html.escape(c[1])}</th>" for c in COLUMNS) + "<th>s</th><th>reproduce</th></tr>"]
    for i, r in enumerate(ordered, 1):
        cell = by_key.get(r["key"])
        cmd = cell_command(cell) if cell else ""
        mcmd = metrics_command(cell) if cell else None
        repro = f"<code>{html.escape(cmd)}</code>" + (f"<br><code>{html.escape(mcmd)}</code>" if mcmd else "")
        if r["status"] != "ok":
            h.append(f"<tr class='{html.escape(r['status'])}'><td>{i}</td>"
                     + "".join(_cell(r, c, f) for c, _, f in COLUMNS[:3])
                     + f"<td>{html.escape(r['solver'])}</td><td colspan='{len(COLUMNS) - 4}'>"
                     f"{html.escape(r['error'] or '')}</td><td></td><td><details><summary>command</summary>{repro}"
                     "</details></td></tr>")
            continue
        t = timing.get(r["key"], {})
        h.append(f"<tr><td>{i}</td>" + "".join(_cell(r, c, f) for c, _, f in COLUMNS)
                 + f"<td class='num'>{format_value(t.get('seconds'), '{:.1f}')}</td>"
                 f"<td><details><summary>command</summary>{repro}</details></td></tr>")
    h.append("</table>")
    for column, name in AXES:
        h.append(f"<h2>By {name}</h2><table><tr><th>{name}</th><th>cells</th><th>failed</th><th>missing a goal</th>"
                 "<th>p99 stretch % median</th><th>p99 worst</th><th>worst edge %</th><th>settle worst (mm)</th>"
                 "<th>fps identity max</th></tr>")
        for s in axis_summary(rows, column):
            h.append(f"<tr><td>{html.escape(str(s['value']))}</td><td class='num'>{s['cells']}</td>"
                     f"<td class='num'>{s['failed']}</td><td class='num'>{s['missing_a_goal']}</td>"
                     + "".join(f"<td class='num'>{format_value(s[k], f)}</td>" for k, f in (
                         ("p99_median", "{:.2f}"), ("p99_worst", "{:.2f}"), ("worst_edge", "{:.2f}"),
                         ("settle_worst", "{:.2g}"), ("fps_identity_max", "{:g}"))) + "</tr>")
        h.append("</table>")
    h.append("<h2>Stretch by axis</h2><div class='plots'>"
             + "".join(f"<img src='{p.name}' alt='{p.stem}'>" for p in plots) + "</div>")
    h.append("<h2>Worst frame of the worst cells</h2>" + thumb_note + "<div class='thumbs'>")
    row_by_key = {r["key"]: r for r in rows}
    for key, (png, caption) in thumbs.items():
        r = row_by_key[key]
        label = " · ".join(str(r[k]) for k in ("avatar", "hairstyle", "clip_label", "solver"))
        h.append(f"<figure><img src='thumbs/{png.name}' width='256' height='256' alt='{html.escape(label)}'>"
                 f"<figcaption>{html.escape(label)}<br>{html.escape(caption)}</figcaption></figure>")
    h.append("</div></body></html>")
    index = folder / "index.html"
    index.write_text("\n".join(h))
    return index
