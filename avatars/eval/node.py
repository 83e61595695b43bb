"""npm packages installed once into a cache folder, and Node.js scripts run beside ours.

The references the tests and benches run beside swaycam (three-vrm's spring bones, its
animation and node-constraint packages, the full three-vrm loader) are npm packages. Each
lives in its own folder under ``$XDG_CACHE_HOME/swaycam`` (or where its environment variable
says), installed with npm on first use; without Node.js and npm, :class:`ReferenceUnavailable`
says so in one line and the tests that need them skip.
"""

from __future__ import annotations

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
    """Node.js / npm are missing or the packages could not be installed."""


@dataclass(frozen=True)
class NpmFolder:
    """One cache folder of npm packages.

    Attributes:
        folder: the folder's name under ``<cache>/swaycam``.
        env: the environment variable that overrides the whole path.
        packages: ``name@version`` specs to install.
        marker: the package whose ``package.json`` version (:data:`THREE_VRM_VERSION`)
            tells that the folder is complete.
        purpose: what needs it, for the error message ("the three-vrm reference").
    """

    folder: str
    env: str
    packages: tuple[str, ...]
    marker: str
    purpose: str

    def path(self) -> Path:
        """``$<env>`` when set, else ``$XDG_CACHE_HOME/swaycam/<folder>`` (``~/.cache``)."""
        env = os.environ.get(self.env)
        if env:
            return Path(env)
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "swaycam" / self.folder

    def ensure(self, directory: Path | None = None) -> Path:
        """Install the packages with npm unless present; returns the folder.

        Raises:
            ReferenceUnavailable: node or npm is not on PATH, or npm failed (its message).
        """
        d = Path(directory) if directory is not None else self.path()
        pkg = d / "node_modules" / Path(*self.marker.split("/")) / "package.json"
        if pkg.exists() and json.loads(pkg.read_text()).get("version") == THREE_VRM_VERSION:
            return d
        for tool in ("node", "npm"):
            if shutil.which(tool) is None:
                raise ReferenceUnavailable(f"{tool} is not on PATH; {self.purpose} needs Node.js and npm")
        d.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["npm", "install", "--prefix", str(d), "--no-audit", "--no-fund", "--silent",
                            *self.packages], capture_output=True, text=True, check=False)
        if r.returncode != 0 or not pkg.exists():
            raise ReferenceUnavailable(f"npm install {' '.join(self.packages)} into {d} failed: "
                                       f"{r.stderr.strip()[-800:]}")
        return d


def run_node(script: Path, *args: str, what: str) -> str:
    """Run ``node script args...``; returns its stdout.

    Raises:
        RuntimeError: the script failed (``what`` and the end of its stderr in the message).
    """
    proc = subprocess.run(["node", str(script), *map(str, args)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{what}: {proc.stderr.strip()[-1200:]}")
    return proc.stdout
