"""The hairstyle audit (``swaycam hair audit``): every style of the hair folders on every given
avatar, measured and drawn, into one static page (issue 33 item 5; the seed articles' "46 of
46 styles · saved audit").

Decisions, one module each:

- :mod:`.plan` — what is audited: the styles of the hair folders (``--hair-dir``, else
  ``$SWAYCAM_HAIR_DIR`` and the shared assets' ``hair``) plus the procedural corpus
  (:mod:`avatars.hair.procedural`, written into ``OUT/corpus``), times the avatars. Each
  (style, avatar) **entry** has two cells of the quality matrix
  (:func:`runtime.eval.matrix.axes.expand`): the standard head turn and a fast body clip
  (default ``Sprint_Loop`` of the shared animation library), solver rest-shape, the fps
  identity over 30 and 120 fps with no jittered runs (what keeps a full audit to about an
  hour on two cores).
- The measured cells are the matrix's own: :func:`runtime.eval.matrix.run.run_matrix` into
  ``OUT/matrix`` (one file per finished cell, content-hash keys; an interrupted audit
  loses only the cells in flight and a re-run skips the rest). The audit adds no measure of
  its own to a cell.
- :mod:`.fits` — what the matrix rows do not carry: per entry the fit's report as
  ``swaycam hair fit --json`` gives it (guides: candidates, attached, joined, rejected;
  vertices missed, chains, joints, placement method, the fit's own seconds), through the
  same try-on disk cache (:func:`runtime.tryon.fit_style`), stored in ``OUT/fits``.
- :mod:`.thumbs` — the fitted avatar at rest drawn front and back by :class:`render.Renderer`
  headless (EGL); the back view rotates every world matrix 180° about the vertical axis
  (``OUT/thumbs``; a thumbnail that exists is not drawn again).
- :mod:`.page` — ``OUT/index.html``: one row per entry, sortable columns, a filter for
  styles with rejected guides and a search, each row with the ``swaycam run`` command that
  opens it live. Everything is relative to ``OUT``, so the folder can be copied as it is.
- :mod:`.run` — one audit end to end.
"""
