"""The command line starts light: building the parser and printing any command's ``--help``
imports none of the heavy libraries (numpy, numba, MediaPipe, OpenCV, OpenGL, pygame, SciPy,
trimesh, matplotlib, Pillow, pygltflib). Each command imports what it needs when it runs
(``runtime/cli/*``: imports inside the handlers; the packages' ``__init__`` export lazily).

Checked in a fresh interpreter (this test process has them all loaded already), by what
``sys.modules`` holds afterwards, not by timing: an eager import added anywhere on the way
fails here, and the message shows the import chain that brought the module in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: Top-level modules no parser and no help text may import.
HEAVY = ("numpy", "numba", "llvmlite", "mediapipe", "cv2", "OpenGL", "pygame", "scipy", "trimesh", "matplotlib",
         "PIL", "pygltflib", "imageio_ffmpeg", "pyvirtualcam", "meshoptimizer")

# Runs in the child: records who first imported a heavy module, prints every command's help
# (found from the parser itself, nested subcommands included), then reports as JSON.
_CHILD = r"""
import argparse, contextlib, io, json, sys, traceback
HEAVY = set(sys.argv[1].split(","))
chains = {}

class Watch:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in HEAVY and top not in chains:
            chains[top] = [f"{f.filename}:{f.lineno}" for f in traceback.extract_stack()
                           if "importlib" not in f.filename and f.filename != "<string>"][-12:]
        return None

sys.meta_path.insert(0, Watch())
import runtime.native_log                     # what console_main imports before main()
from runtime import cli

def commands(parser, prefix=()):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*prefix, name))

codes = {}
for argv in commands(cli.build_parser()):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        codes[" ".join(argv)] = cli.main([*argv, "--help"])
print(json.dumps({"codes": codes, "loaded": sorted(m for m in HEAVY if m in sys.modules), "chains": chains}))
"""


@pytest.fixture(scope="module")
def child() -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _CHILD, ",".join(HEAVY)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_help_is_printed(child):
    codes = child["codes"]
    assert "" in codes and "run" in codes and "bench solver" in codes and "hair fit" in codes
    assert {k: v for k, v in codes.items() if v != 0} == {}


def test_help_imports_no_heavy_library(child):
    chains = "\n".join(f"{m}:\n    " + "\n    ".join(child["chains"].get(m, ["?"])) for m in child["loaded"])
    assert child["loaded"] == [], f"imported while building the parser / printing help:\n{chains}"


def test_lazy_package_exports_resolve():
    """Every name a lazily exporting package lists resolves to that name in its module (not
    to a submodule of the same name), in a fresh interpreter."""
    code = (
        "import importlib, json, types\n"
        "bad = []\n"
        "for pkg in ('avatars', 'avatars.tryon', 'solver', 'tracking', 'runtime.rig', 'render'):\n"
        "    m = importlib.import_module(pkg)\n"
        "    for name in m.__all__:\n"
        "        v = getattr(m, name)\n"
        "        if isinstance(v, types.ModuleType) or v is not getattr(importlib.import_module("
        "pkg + '.' + m._EXPORTS[name]), name):\n"
        "            bad.append(pkg + '.' + name)\n"
        "print(json.dumps(bad))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "SWAYCAM_GL": "egl"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
