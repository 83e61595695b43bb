"""One audit end to end: plan, the matrix cells, the fit records, the thumbnails, the page.

Layout of ``OUT`` (every part resumable: what is there is not done again):

- ``corpus/``: the procedural styles (:mod:`.plan`);
- ``matrix/``: the measured cells, a :func:`runtime.eval.matrix.run.run_matrix` results
  folder (``cells/<key>.json``, ``results.parquet``, ``timings.parquet``);
- ``fits/<key>.json``: the fit records (:mod:`.fits`);
- ``thumbs/<style>-<avatar>-<key16>-front.png`` / ``-back.png`` (:mod:`.thumbs`);
- ``audit.json``: the rows (:mod:`.rows`) and the headline totals; ``index.html``: the page.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..matrix.run import RunSummary, run_matrix
from .fits import FitStore, fit_entry, fit_key, fit_result
from .page import write_page
from .plan import AuditSpec, Entry, plan
from .rows import audit_row, totals
from .thumbs import thumb_paths, thumb_renderer

log = logging.getLogger(__name__)


@dataclass
class AuditSummary:
    """What an audit did: its rows and totals, the matrix run's summary, the thumbnails
    drawn now, a note when none could be drawn, wall seconds, and the page."""

    rows: list[dict]
    totals: dict
    matrix: RunSummary
    thumbs_drawn: int
    thumb_note: str | None
    seconds: float
    page: Path
    data: Path

    def as_dict(self) -> dict:
        return {"totals": self.totals, "matrix": self.matrix.as_dict(), "thumbs_drawn": self.thumbs_drawn,
                "thumb_note": self.thumb_note, "seconds": self.seconds, "page": str(self.page),
                "data": str(self.data), "rows": self.rows}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _fits_and_thumbs(entries: list[Entry], out: Path, thumbnails: bool) -> tuple[list[dict], dict, int, str | None]:
    """Fit records of every entry and (``thumbnails``) the missing thumbnails ->
    (records, {entry index: {view: relative path}}, thumbnails drawn, note)."""
    from avatars import load_avatar

    store = FitStore(out / "fits")
    avatars: dict[str, object] = {}

    def avatar(e: Entry):                   # loaded when a fit or a thumbnail needs it, once per file
        if str(e.avatar_path) not in avatars:
            avatars[str(e.avatar_path)] = load_avatar(e.avatar_path)
        return avatars[str(e.avatar_path)]

    records, results = [], []
    for e in entries:
        record, result = fit_entry(e, store, lambda e=e: avatar(e))
        records.append(record)
        results.append(result)
    thumbs: dict[int, dict[str, str]] = {}
    drawn, note = 0, None
    todo = []
    for i, (e, record) in enumerate(zip(entries, records)):
        if record.get("status") != "ok":
            continue
        paths = thumb_paths(out / "thumbs", f"{_slug(e.style)}-{_slug(e.avatar_name)}-{fit_key(e)[:16]}")
        thumbs[i] = {v: p.relative_to(out).as_posix() for v, p in paths.items()}
        if thumbnails and not all(p.is_file() for p in paths.values()):
            todo.append((i, paths))
    if not thumbnails:
        thumbs = {i: t for i, t in thumbs.items() if all((out / p).is_file() for p in t.values())}
    elif todo:
        try:
            with thumb_renderer() as tr:
                for i, paths in todo:
                    result = results[i] or fit_result(entries[i], avatar(entries[i]))[0]
                    tr.write(result.avatar, paths)
                    drawn += 1
        except Exception as exc:  # noqa: BLE001 - a page without pictures is still the audit
            log.warning("no thumbnails: %s", exc)
            note = f"no thumbnails: {exc}"
            thumbs = {i: t for i, t in thumbs.items() if all((out / p).is_file() for p in t.values())}
    return records, thumbs, drawn, note


def run_audit(spec: AuditSpec, out: str | Path, executor, *, progress=None, thumbnails: bool = True,
              retry_failed: bool = False) -> AuditSummary:
    """Audit ``spec`` into ``out`` (module doc) -> :class:`AuditSummary`. ``executor``: a
    matrix executor (:mod:`runtime.eval.matrix.executors`); ``progress``: a callable taking
    the number of cells and returning a :class:`runtime.eval.matrix.progress.Progress`.

    Raises:
        SpecError: from :func:`runtime.eval.matrix.axes.expand` / :func:`.plan.plan`.
        KeyboardInterrupt: propagated after the matrix tables of the finished cells are
            written (a re-run goes on from there).
    """
    from ...tryon import HairStyles

    t0 = time.perf_counter()
    out = Path(out)
    entries = plan(spec, out)
    cells = [e.turn for e in entries] + [e.clip for e in entries if e.clip is not None]
    matrix, results = run_matrix(cells, out / "matrix", executor, progress=progress(len(cells)) if progress else None,
                                 retry_failed=retry_failed)
    by_key = {row["key"]: row for row, _ in results}
    records, thumbs, drawn, note = _fits_and_thumbs(entries, out, thumbnails)
    default_folders = HairStyles().folders
    rows = [audit_row(e, rec, by_key.get(e.turn.key), by_key.get(e.clip.key) if e.clip is not None else None,
                      thumbs=thumbs.get(i, {}), default_folders=default_folders)
            for i, (e, rec) in enumerate(zip(entries, records))]
    seconds = time.perf_counter() - t0
    settings = spec.settings.as_dict()
    t = totals(rows)
    data = out / "audit.json"
    data.write_text(json.dumps({"totals": t, "settings": settings, "clip": spec.clip, "rows": rows}, indent=1) + "\n")
    compute_s = sum(timing.get("seconds") or 0.0 for _, timing in results)
    page = write_page(out, rows, clip=spec.clip, settings=settings, compute_s=compute_s)
    return AuditSummary(rows, t, matrix, drawn, note, seconds, page, data)
