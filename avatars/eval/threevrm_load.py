"""three-vrm 3.5.5 loads a try-on export and steps its springs (Node.js; docs/design.md §9).

:func:`load_with_threevrm` runs ``threevrm_load.mjs``: three.js's GLTFLoader with
``@pixiv/three-vrm``'s ``VRMLoaderPlugin`` parses the file (meta, humanoid, expressions,
MToon, VRMC_springBone), then the head turns for some frames while ``vrm.update`` steps the
springs, and every joint is checked for NaN/inf. The full ``@pixiv/three-vrm`` 3.5.5 and
``three`` are the rendering reference's folder (:data:`avatars.eval.node.THREEVRM_FULL`:
``$SWAYCAM_THREEVRM_RENDER_DIR``, else ``<cache>/swaycam/threevrm-full-3.5.5``), installed with
npm on first use.
"""

from __future__ import annotations

import json
from pathlib import Path

from .node import THREE_VRM_VERSION, THREEVRM_FULL, run_node

SCRIPT = Path(__file__).with_name("threevrm_load.mjs")


def load_with_threevrm(path: str | Path, frames: int = 240, directory: Path | None = None) -> dict:
    """three-vrm's view of a VRM file after ``frames`` spring updates (see the script):
    {"springs", "joints", "colliders", "collider_groups", "humanoid", "frames", "finite",
    "max_tail_travel" (metres)}.

    Raises:
        avatars.eval.node.ReferenceUnavailable: no Node.js/npm, or the install failed.
        RuntimeError: three-vrm refused the file (its message is included).
    """
    d = THREEVRM_FULL.ensure(directory)
    out = run_node(SCRIPT, d, path, int(frames), what=f"three-vrm {THREE_VRM_VERSION} could not load {path}")
    return json.loads(out.strip().splitlines()[-1])
