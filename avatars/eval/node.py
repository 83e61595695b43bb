"""npm packages installed once into a cache folder, and Node.js scripts run beside ours: the
one installer of every three-vrm reference.

The references the tests and benches run beside swaycam are npm packages at one three-vrm
release (:data:`THREE_VRM_VERSION`, built against three.js :data:`THREE_VERSION`):

- three-vrm's spring bones (:mod:`solver.eval.reference`, ``$SWAYCAM_THREEVRM_DIR``, else
  ``<cache>/swaycam/threevrm-3.5.5``);
- the full three-vrm, :data:`THREEVRM_FULL`: drawn in headless Chromium as the rendering
  reference (:mod:`render.eval.threevrm`) and run in Node.js on a try-on export
  (:mod:`avatars.eval.threevrm_load`); ``$SWAYCAM_THREEVRM_RENDER_DIR``, else
  ``<cache>/swaycam/threevrm-full-3.5.5``;
- its animation and node-constraint packages (:mod:`runtime.eval.motion_reference`,
  :mod:`runtime.eval.constraint_reference`, ``$SWAYCAM_THREEVRM_ANIMATION_DIR`` and
  ``$SWAYCAM_THREEVRM_CONSTRAINT_DIR``).

``<cache>`` is ``$XDG_CACHE_HOME``, else ``~/.cache``. Each folder is installed with npm on
first use. Without Node.js and npm, :class:`ReferenceUnavailable` says so in one line and the
tests that need the reference skip.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: The three-vrm release every reference uses, and the three.js it was built against.
THREE_VRM_VERSION = "3.5.5"
THREE_VERSION = "0.180.0"


class ReferenceUnavailable(RuntimeError):
    """A reference cannot run here: Node.js, npm or Chromium is missing, or the npm packages
    could not be installed (the message says which)."""


def _spec(package: str) -> tuple[str, str]:
    """``"@scope/name@1.2.3"`` -> (``"@scope/name"``, ``"1.2.3"``)."""
    name, _, version = package.rpartition("@")
    return name, version


@dataclass(frozen=True)
class NpmFolder:
    """One cache folder of npm packages.

    Attributes:
        folder: the folder's name under ``<cache>/swaycam``.
        env: the environment variable that overrides the whole path.
        packages: ``name@version`` specs to install; the folder is complete when every one
            of them is installed at its version (its ``package.json``).
        purpose: what needs it, for the error message ("the three-vrm reference").
    """

    folder: str
    env: str
    packages: tuple[str, ...]
    purpose: str

    def path(self) -> Path:
        """``$<env>`` when set, else ``$XDG_CACHE_HOME/swaycam/<folder>`` (``~/.cache``)."""
        env = os.environ.get(self.env)
        if env:
            return Path(env)
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "swaycam" / self.folder

    def installed(self, directory: Path | None = None) -> bool:
        """True when every package is present at its version in ``directory`` (default
        :meth:`path`)."""
        d = Path(directory) if directory is not None else self.path()
        for name, version in map(_spec, self.packages):
            pkg = d / "node_modules" / Path(*name.split("/")) / "package.json"
            if not pkg.exists() or json.loads(pkg.read_text()).get("version") != version:
                return False
        return True

    def ensure(self, directory: Path | None = None) -> Path:
        """Install the packages with npm unless present; returns the folder.

        Raises:
            ReferenceUnavailable: node or npm is not on PATH, or npm failed (its message).
        """
        d = Path(directory) if directory is not None else self.path()
        if self.installed(d):
            return d
        for tool in ("node", "npm"):        # npm runs on node; the references run their scripts on it
            if shutil.which(tool) is None:
                raise ReferenceUnavailable(f"{tool} is not on PATH; {self.purpose} needs Node.js and npm")
        d.mkdir(parents=True, exist_ok=True)
        # one install at a time per folder across processes (parallel test workers, a bench
        # beside the tests): the second waits for the first, then finds the folder installed
        with open(d / ".swaycam-install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.installed(d):
                return d
            r = subprocess.run(["npm", "install", "--prefix", str(d), "--no-audit", "--no-fund", "--silent",
                                *self.packages], capture_output=True, text=True, check=False)
        if r.returncode != 0 or not self.installed(d):
            raise ReferenceUnavailable(f"npm install {' '.join(self.packages)} into {d} failed: "
                                       f"{r.stderr.strip()[-800:]}")
        return d


#: The full ``@pixiv/three-vrm`` and three.js: the rendering reference (Chromium) and the
#: try-on export check (Node.js) share it.
THREEVRM_FULL = NpmFolder(f"threevrm-full-{THREE_VRM_VERSION}", "SWAYCAM_THREEVRM_RENDER_DIR",
                          (f"@pixiv/three-vrm@{THREE_VRM_VERSION}", f"three@{THREE_VERSION}"),
                          "the full three-vrm reference")


def run_node(script: Path, *args: str, what: str) -> str:
    """Run ``node script args...``; returns its stdout.

    Raises:
        ReferenceUnavailable: node is not on PATH.
        RuntimeError: the script failed (``what`` and the end of its stderr in the message).
    """
    if shutil.which("node") is None:
        raise ReferenceUnavailable(f"node is not on PATH; {what} needs Node.js")
    proc = subprocess.run(["node", str(script), *map(str, args)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{what}: {proc.stderr.strip()[-1200:]}")
    return proc.stdout
