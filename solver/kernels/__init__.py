"""The compiled (numba) solver kernels: one call per substep, no allocation.

- :mod:`.step`: the substep, reset and overlap entry points (docs/design.md §4.1-§4.4);
- :mod:`.pose`: tails -> joint frames and local rotations for drawing;
- called per chain: :mod:`.inertia` (anchor speed limits), :mod:`.forces` (wind), :mod:`.limits`
  (angle limits), :mod:`.sheets` (linked sheets);
- inlined pieces: :mod:`.spring` (the per-link spring step), :mod:`.contact` (contact
  geometry), :mod:`.resolve` (per-link contact resolution), :mod:`.relax` (chain relaxation
  after a contact), and the shared 3x4 / quaternion algebra :mod:`avatars.math_kernels`;
- numba's on-disk cache is kept in step with every source of this folder, :mod:`solver.layout`
  and the shared math by :func:`avatars.kernel_cache.refresh` (called in :mod:`.step`); the
  import below registers the shared kernel cache (:mod:`avatars.kernel_cache`) before any kernel
  of this folder is decorated.

Only :mod:`solver.chains` and :mod:`solver.build` call the entry points.
"""

import avatars.kernel_cache  # noqa: F401,E402
