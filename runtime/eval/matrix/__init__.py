"""The quality matrix (``swaycam matrix``): every avatar × hairstyle × clip × solver, measured.

Decisions (issue 28), one module each:

- :mod:`.axes` — the axes from options or a TOML file (``presets/quick.toml``,
  ``presets/full.toml``) and their expansion into cells. A **cell** is (avatar, hairstyle,
  clip, solver); the run settings (frame rates, jittered runs, motion seconds, settle
  seconds) are the same for every cell of a run and part of its key.
- :mod:`.cell` — one cell measured: a pure, seeded function of its inputs (the jitter seeds
  are settings; nothing else is random). Quality measures are those of ``swaycam metrics``
  (:func:`solver.eval.measure.standard_run`; :mod:`runtime.eval.hair_quality` for body
  clips), the try-on's scalp drift and head penetration for fitted styles on the head turn
  (:func:`solver.eval.tryon_quality.measure_tryon`), and the **fps identity**: the frame-rate
  axis is the set of render rates whose replays (:func:`runtime.replay.check_fps`) give the
  cell's identity, the largest position or velocity difference across the rates at common
  substeps (0 = identical). One row per cell; the per-rate results are list columns.
- :mod:`.key` — the cache key: SHA-256 over the input files' bytes, the cell and its
  settings, and the code version (the sources that shape a result, listed there).
- :mod:`.store` — the results folder: one atomically written JSON file per finished cell
  (an interrupted run loses only the cells in flight), merged into ``results.parquet``
  (measured columns: the identity of a row) and ``timings.parquet`` (wall-clock columns,
  never compared) at the end of every run.
- :mod:`.executors` — a local process pool (default) or Ray; each worker process keeps
  loaded avatars, clips and fitted styles cached across cells (:mod:`.inputs`).
- :mod:`.progress`, :mod:`.report` (HTML, plots, goals), :mod:`.thumbs` (the worst frame
  of the worst cells drawn by :mod:`render` headless), :mod:`.run` (one run end to end).
"""
