"""The content-hash key of a matrix cell, and the code version it includes.

``cell_key`` = SHA-256 (hex) over a canonical JSON document of:

- the cell's axis values as the spec names them (they are the row's identity columns);
- the digests of its input files (:class:`runtime.eval.matrix.axes.InputFile`: the avatar
  file, the style file with its ``.mhmat``/``.mhclo``, the clip file, each with the glTF
  buffers and images it references);
- the run settings (:class:`runtime.eval.matrix.axes.Settings`);
- :func:`code_version`.

The code version hashes the sources that shape a result (:data:`CODE_SOURCES`): the whole
``solver`` package (dynamics, the measures of ``solver/eval``), the whole ``avatars``
package (loading, clips and the head turn, hair sources, the try-on, CPU skinning, the
generated avatars), the ``tracking`` package (pose tracks and their sampling), the runtime
modules between the inputs and the solver (``runtime.rig``: posing, drive, body motion and
retargeting; ``runtime.pose_inputs``: the track input and the head-turn track;
``runtime.loop``, ``runtime.clock``, ``runtime.replay``: the product loop of the fps
replays; ``runtime.config``, ``runtime.config_sections``: the try-on and motion settings;
``runtime.tryon.styles``: the fit through the cache; ``runtime.eval.hair_quality``: the
body-clip run) and the matrix's own :mod:`~runtime.eval.matrix.cell` and
:mod:`~runtime.eval.matrix.inputs`; plus the numpy and numba versions and the machine
architecture. Any edit to one of them makes every key new (old cell files stay in the
folder, unused).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import platform
from pathlib import Path

#: Dotted names of the modules and packages whose sources make the code version.
CODE_SOURCES = (
    "solver", "avatars", "tracking",
    "runtime.rig", "runtime.pose_inputs", "runtime.loop", "runtime.clock", "runtime.replay", "runtime.config",
    "runtime.config_sections",
    "runtime.tryon.styles", "runtime.eval.hair_quality", "runtime.eval.matrix.cell", "runtime.eval.matrix.inputs",
)
#: Bump when the row layout or the meaning of a column changes.
ROW_VERSION = "matrix-row-1"


def source_files(name: str) -> tuple[Path, list[Path]]:
    """(folder, the ``.py`` files) of module or package ``name`` (a package: every file under
    its folder, sorted). Raises ModuleNotFoundError for a name that no longer exists (a moved
    module: update :data:`CODE_SOURCES`)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"{name}: not found (update runtime.eval.matrix.key.CODE_SOURCES)")
    origin = Path(spec.origin)
    if spec.submodule_search_locations:
        root = origin.parent
        return root, sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    return origin.parent, [origin]


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """Hex SHA-256 of :data:`CODE_SOURCES` (module doc), numpy's and numba's versions and the
    machine architecture."""
    import numba
    import numpy

    h = hashlib.sha256(f"{ROW_VERSION}\0numpy {numpy.__version__}\0numba {numba.__version__}\0"
                       f"{platform.machine()}\0".encode())
    for name in CODE_SOURCES:
        base, files = source_files(name)
        for f in files:
            h.update(f"{name}:{f.relative_to(base).as_posix()}\0".encode() + f.read_bytes() + b"\0")
    return h.hexdigest()


def cell_document(cell, code: str) -> dict:
    """The canonical document :func:`cell_key` hashes."""
    return {
        "row": ROW_VERSION, "code": code,
        "avatar": cell.avatar, "hairstyle": cell.hairstyle, "clip": cell.clip, "solver": cell.solver,
        "inputs": {i.kind: i.digest for i in (cell.avatar_input, cell.hair_input, cell.clip_input) if i is not None},
        "clip_names": list(cell.clip_names), "settings": cell.settings.as_dict(),
    }


def cell_key(cell, code: str | None = None) -> str:
    """The hex SHA-256 key of ``cell`` (module doc)."""
    doc = cell_document(cell, code or code_version())
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
