"""three-vrm 3.5.5 loads a try-on export and steps its springs (Node.js; DESIGN §9).

:func:`load_with_threevrm` runs ``threevrm_load.mjs``: three.js's GLTFLoader with
``@pixiv/three-vrm``'s ``VRMLoaderPlugin`` parses the file (meta, humanoid, expressions,
MToon, VRMC_springBone), then the head turns for some frames while ``vrm.update`` steps the
springs, and every joint is checked for NaN/inf. The full ``@pixiv/three-vrm`` 3.5.5 and
``three`` are installed with npm on first use into ``$SWAYCAM_THREEVRM_FULL_DIR``, else
``<cache>/swaycam/threevrm-full-3.5.5`` (the solver's reference, :mod:`solver.eval.reference`,
only needs the spring-bone package).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..eval.node import THREE_VERSION, THREE_VRM_VERSION, NpmFolder, ReferenceUnavailable, run_node  # noqa: F401

PACKAGES = (f"@pixiv/three-vrm@{THREE_VRM_VERSION}", f"three@{THREE_VERSION}")
SCRIPT = Path(__file__).with_name("threevrm_load.mjs")
NPM = NpmFolder(f"threevrm-full-{THREE_VRM_VERSION}", "SWAYCAM_THREEVRM_FULL_DIR", PACKAGES, "@pixiv/three-vrm",
                "the three-vrm check")


def install_dir() -> Path:
    return NPM.path()


def ensure_installed(directory: Path | None = None) -> Path:
    """Install ``@pixiv/three-vrm`` and three with npm unless present; returns the folder.
    Raises :class:`ReferenceUnavailable` without node/npm or when the install fails."""
    return NPM.ensure(directory)


def load_with_threevrm(path: str | Path, frames: int = 240, directory: Path | None = None) -> dict:
    """three-vrm's view of a VRM file after ``frames`` spring updates (see the script):
    {"springs", "joints", "colliders", "collider_groups", "humanoid", "frames", "finite",
    "max_tail_travel" (metres)}.

    Raises:
        ReferenceUnavailable: no Node.js/npm, or the install failed.
        RuntimeError: three-vrm refused the file (its message is included).
    """
    d = ensure_installed(directory)
    out = run_node(SCRIPT, d, path, int(frames), what=f"three-vrm {THREE_VRM_VERSION} could not load {path}")
    return json.loads(out.strip().splitlines()[-1])
