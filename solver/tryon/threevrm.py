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
import os
import shutil
import subprocess
from pathlib import Path

from ..eval.reference import THREE_VERSION, THREE_VRM_VERSION, ReferenceUnavailable

PACKAGES = (f"@pixiv/three-vrm@{THREE_VRM_VERSION}", f"three@{THREE_VERSION}")
SCRIPT = Path(__file__).with_name("threevrm_load.mjs")


def install_dir() -> Path:
    env = os.environ.get("SWAYCAM_THREEVRM_FULL_DIR")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "swaycam" / f"threevrm-full-{THREE_VRM_VERSION}"


def ensure_installed(directory: Path | None = None) -> Path:
    """Install ``@pixiv/three-vrm`` and three with npm unless present; returns the folder.
    Raises :class:`ReferenceUnavailable` without node/npm or when the install fails."""
    d = Path(directory) if directory is not None else install_dir()
    pkg = d / "node_modules" / "@pixiv" / "three-vrm" / "package.json"
    if pkg.exists() and json.loads(pkg.read_text()).get("version") == THREE_VRM_VERSION:
        return d
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise ReferenceUnavailable(f"{tool} is not on PATH; the three-vrm check needs Node.js and npm")
    d.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["npm", "install", "--prefix", str(d), "--no-audit", "--no-fund", "--silent", *PACKAGES],
                       capture_output=True, text=True)
    if r.returncode != 0 or not pkg.exists():
        raise ReferenceUnavailable(f"npm install {' '.join(PACKAGES)} into {d} failed: {r.stderr.strip()[-800:]}")
    return d


def load_with_threevrm(path: str | Path, frames: int = 240, directory: Path | None = None) -> dict:
    """three-vrm's view of a VRM file after ``frames`` spring updates (see the script):
    {"springs", "joints", "colliders", "collider_groups", "humanoid", "frames", "finite",
    "max_tail_travel" (metres)}.

    Raises:
        ReferenceUnavailable: no Node.js/npm, or the install failed.
        RuntimeError: three-vrm refused the file (its message is included).
    """
    d = ensure_installed(directory)
    r = subprocess.run(["node", str(SCRIPT), str(d), str(path), str(int(frames))], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"three-vrm {THREE_VRM_VERSION} could not load {path}: {r.stderr.strip()[-1200:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])
