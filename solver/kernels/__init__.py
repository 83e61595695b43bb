"""The compiled (numba) solver kernels: one call per substep, no allocation.

- :mod:`.step`: the substep, reset and overlap entry points (DESIGN §4.1-§4.4);
- :mod:`.pose`: tails -> joint frames and local rotations for drawing;
- inlined pieces: :mod:`.affine` (3x4 algebra in registers), :mod:`.spring` (the per-link
  spring step), :mod:`.contact` (contact geometry), :mod:`.resolve` (per-link contact
  resolution), :mod:`.relax` (chain relaxation after a contact);
- :mod:`.cache`: keeps numba's on-disk cache in step with every source of this folder
  and :mod:`solver.layout`.

Only :mod:`solver.chains` and :mod:`solver.build` call the entry points.
"""
