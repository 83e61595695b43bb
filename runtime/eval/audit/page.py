"""The audit's static page: ``OUT/index.html`` (no script or style from elsewhere).

A headline as the seed articles' ("12 of 12 styles fitted · saved audit": guides summed,
the attached-or-joined share, vertices missed), then one table row per entry
(:mod:`.rows`): the columns of :data:`COLUMNS`, the front and back thumbnails, and the
command that opens the entry live. The page's own script sorts by any column (click a
heading; again for the other direction; empty values last either way), filters to styles
with rejected guides (a checkbox) and by a search over style and avatar names, and says how
many rows are shown. Rows carry their values in ``data-*`` attributes (the tests read them).
Stretch columns are coloured against the issue's bars (:mod:`runtime.eval.matrix.goals`:
head turn p99 <= 8 %, worst <= 35 %; body clips p99 <= 15 %, worst <= 60 %).
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

from ..matrix.report import format_value
from .rows import totals

#: (row key, heading, title (the heading's tooltip), format, goal bound or None).
COLUMNS = (
    ("style", "style", "style name (its folder in the source column)", "{}", None),
    ("source", "source", "shared assets, the procedural corpus, or a hair folder", "{}", None),
    ("avatar_name", "avatar", "the avatar the style is fitted on", "{}", None),
    ("candidates", "guides", "candidate guides traced along the hair's surface", "{}", None),
    ("attached", "attached", "guides whose root reached a scalp triangle", "{}", None),
    ("joined", "joined", "guides joined to an attached guide", "{}", None),
    ("rejected", "rejected", "guides neither attached nor joined", "{}", None),
    ("attached_pct", "att. %", "attached or joined, % of the candidates", "{:.1f}", None),
    ("vertices_missed", "missed", "hair vertices in pieces that gave no guide (held on the head)", "{}", None),
    ("chains", "chains", "spring chains rigged", "{}", None),
    ("turn_edges", "edges", "hair mesh edges the stretch is measured on: between vertices whose dominant skin "
     "weight is a spring joint (0: no stretch measure, shown –)", "{}", None),
    ("turn_p99_pct", "turn p99 %", "head turn: p99 edge stretch of the drawn hair, %", "{:.2f}", 8.0),
    ("turn_worst_pct", "turn worst %", "head turn: worst edge stretch, %", "{:.1f}", 35.0),
    ("turn_swing_mm", "swing mm", "head turn: largest tip distance from its rest arc, mm (0: the hair does not "
     "move)", "{:.0f}", None),
    ("clip_p99_pct", "clip p99 %", "fast clip: p99 edge stretch, %", "{:.2f}", 15.0),
    ("clip_worst_pct", "clip worst %", "fast clip: worst edge stretch, %", "{:.1f}", 60.0),
    ("head_depth_mm", "head mm", "head turn: deepest drawn hair vertex inside the head mesh, mm", "{:.2f}", 1.0),
    ("collider_depth_mm", "colliders mm", "deepest drawn hair vertex inside a collider beyond the rest pose's, mm "
     "(both motions)", "{:.2f}", 1.0),
    ("fit_s", "fit s", "the fit's own wall time, seconds", "{:.2f}", None),
)

#: Thumbnails as shown in the table, CSS pixels (each links to its full-size PNG).
THUMB_SHOWN = (80, 96)

_CSS = """
body { font: 12px/1.35 system-ui, sans-serif; margin: 12px; color: #1d2330; }
h1 { font-size: 20px; margin-bottom: 4px; } p.lead { margin-top: 0; color: #3a4150; }
.controls { display: flex; gap: 16px; align-items: center; margin: 10px 0; flex-wrap: wrap; }
table { border-collapse: collapse; } th, td { border: 1px solid #d4d8e0; padding: 2px 4px; vertical-align: middle; }
th { background: #eef1f6; font-weight: 600; cursor: pointer; user-select: none; position: sticky; top: 0; }
th[aria-sort=ascending]::after { content: " \\25B2"; } th[aria-sort=descending]::after { content: " \\25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } td.met { background: #d9f2dc; }
td.missed { background: #f8d3d0; font-weight: 600; } tr.refused td, tr.error td { background: #fbe3e1; }
tr.rigid td { background: #eceef2; color: #5a6070; } td.thumb { padding: 0; } td.thumb img { display: block; }
code { font-size: 10px; overflow-wrap: anywhere; } td.cmd { min-width: 220px; max-width: 300px; } .err { font-size: 11px; max-width: 360px; }
"""

_SCRIPT = """
(function () {
  const table = document.getElementById('audit');
  const body = table.tBodies[0];
  const heads = Array.from(table.tHead.rows[0].cells);
  const rejected = document.getElementById('only-rejected');
  const search = document.getElementById('search');
  const shown = document.getElementById('shown');
  function value(tr, key) {
    const v = tr.dataset[key];
    if (v === undefined || v === '') return null;
    const n = Number(v);
    return Number.isNaN(n) ? v.toLowerCase() : n;
  }
  function sortBy(th) {
    const key = th.dataset.key;
    const dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    heads.forEach(h => h.removeAttribute('aria-sort'));
    th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = value(a, key), y = value(b, key);
      if (x === null || y === null) return (x === null) - (y === null);
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    rows.forEach(r => body.appendChild(r));
  }
  function filter() {
    const q = search.value.trim().toLowerCase();
    let n = 0;
    for (const tr of body.rows) {
      const ok = (!rejected.checked || Number(tr.dataset.rejected || 0) > 0)
        && (!q || (tr.dataset.style + ' ' + tr.dataset.avatar_name).toLowerCase().includes(q));
      tr.hidden = !ok;
      n += ok;
    }
    shown.textContent = n + ' of ' + body.rows.length + ' rows shown';
  }
  heads.forEach(th => { if (th.dataset.key) th.addEventListener('click', () => sortBy(th)); });
  rejected.addEventListener('change', filter);
  search.addEventListener('input', filter);
  filter();
})();
"""


def _td(row: dict, key: str, fmt: str, bound) -> str:
    v = row.get(key)
    classes = []
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        classes.append("num")
        if bound is not None:
            classes.append("met" if v <= bound else "missed")
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{cls}>{html.escape(format_value(v, fmt))}</td>"


def _data(row: dict) -> str:
    keys = [c[0] for c in COLUMNS] + ["status"]
    parts = []
    for k in keys:
        v = row.get(k)
        text = "" if v is None or (isinstance(v, float) and math.isnan(v)) else (repr(v) if isinstance(v, float)
                                                                                 else str(v))
        parts.append(f'data-{k}="{html.escape(text, quote=True)}"')
    return " ".join(parts)


def _thumb(row: dict, view: str) -> str:
    src = (row.get("thumbs") or {}).get(view)
    if not src:
        return "<td class='thumb'></td>"
    alt = f"{row['style']} on {row['avatar_name']}, {view}"
    src = html.escape(src, quote=True)
    return (f"<td class='thumb'><a href='{src}'><img src='{src}' width='{THUMB_SHOWN[0]}' height='{THUMB_SHOWN[1]}' "
            f"alt='{html.escape(alt, quote=True)}' class='{view}'></a></td>")


def headline(t: dict) -> str:
    """The headline text of :func:`rows.totals`."""
    pct = format_value(t["attached_pct"], "{:.2f}")
    return (f"{t['fitted']} of {t['entries']} style × avatar fits · saved audit — {t['styles']} styles × "
            f"{t['avatars']} avatars; {t['candidates']:,} candidate guides, {t['attached'] + t['joined']:,} attached "
            f"or joined ({pct} %; {t['joined']:,} joined), {t['rejected']:,} rejected in {t['with_rejected']} fits; "
            f"{t['vertices_missed']:,} vertices missed in {t['fits_missing_vertices']} fits; {t['measured']} measured, "
            f"{t['rigid']} rigid (no chain), {t['refused']} refused, {t['errors']} failed")


def write_page(out: str | Path, rows: list[dict], *, clip: str | None, settings: dict, compute_s: float | None = None
               ) -> Path:
    """Write ``out/index.html`` (module doc) for ``rows`` and return its path. ``compute_s``: the
    cells' measuring seconds summed (said on the page)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    t = totals(rows)
    clip_text = html.escape(clip.rpartition("#")[2] if clip else "none")
    h = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>"
         "<meta name='viewport' content='width=device-width, initial-scale=1'>"
         f"<title>swaycam hair audit</title><style>{_CSS}</style></head><body>",
         "<h1>swaycam hair audit</h1>",
         f"<p class='lead' id='headline'>{html.escape(headline(t))}.</p>",
         f"<p>Head turn: the standard 4 s turn then {settings['settle_s']:g} s still; fast clip: {clip_text} "
         f"(motion {format_value(settings.get('duration_s'), '{:g} s') if settings.get('duration_s') else 'as swaycam metrics'}"
         f"); solver rest-shape; fps identity at {', '.join(f'{r:g}' for r in settings['rates'])} fps. "
         "Green/red: the issue's bars (head turn p99 ≤ 8 %, worst ≤ 35 %; body clip p99 ≤ 15 %, worst ≤ 60 %; "
         "≤ 1 mm inside the head or a collider). Thumbnails: at rest, front and back. "
         f"<span id='summary-json' hidden>{html.escape(json.dumps(t))}</span>"
         + (f"The cells took {compute_s / 60:.1f} cell-minutes to measure." if compute_s else "") + "</p>",
         "<div class='controls'><label><input type='checkbox' id='only-rejected'> only styles with rejected "
         "guides</label><label>search <input type='search' id='search' placeholder='style or avatar'></label>"
         "<span id='shown'></span></div>",
         "<table id='audit'><thead><tr>"
         + "".join(f"<th data-key='{k}' title='{html.escape(title, quote=True)}'>{html.escape(name)}</th>"
                  for k, name, title, _, _ in COLUMNS)
         + "<th>front</th><th>back</th><th>open it live</th></tr></thead><tbody>"]
    for r in rows:
        cells = "".join(_td(r, k, f, b) for k, _, _, f, b in COLUMNS)
        cmd = (f"<code class='live'>{html.escape(r['command'])}</code>"
               f"<details><summary>fit report</summary><code>{html.escape(r['fit_command'])}</code></details>")
        if r["error"]:
            cmd += f"<div class='err'>{html.escape(r['status'])}: {html.escape(r['error'])}</div>"
        h.append(f"<tr class='{html.escape(r['status'])}' {_data(r)}>{cells}{_thumb(r, 'front')}{_thumb(r, 'back')}"
                 f"<td class='cmd'>{cmd}</td></tr>")
    h.append(f"</tbody></table><script>{_SCRIPT}</script></body></html>")
    index = folder / "index.html"
    index.write_text("\n".join(h))
    return index
