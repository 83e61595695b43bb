"""MediaPipe imported without matplotlib and sounddevice (tracking/mediapipe_import.py): each
case runs in a fresh interpreter, since the point is what an import leaves in sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

PROBE = r"""
import json, sys
pre = sys.argv[1]
if pre:
    __import__(pre)
from tracking.mediapipe_import import import_mediapipe
mp = import_mediapipe()
out = {"matplotlib": "matplotlib" in sys.modules, "pyplot": "matplotlib.pyplot" in sys.modules,
       "sounddevice": "sounddevice" in sys.modules,
       "landmarker": mp.tasks.vision.FaceLandmarker.__name__, "image": mp.Image.__name__,
       "again": import_mediapipe() is mp}
from mediapipe.tasks.python.vision import drawing_utils
out["plt_type"] = type(drawing_utils.plt).__name__
import matplotlib.pyplot as plt                  # later imports get the real module
out["real_after"] = hasattr(plt, "figure") and type(plt).__name__ == "module"
out["helper_works"] = drawing_utils.plt.figure is plt.figure      # MediaPipe's helpers still work
print(json.dumps(out))
"""


def _probe(pre: str = "") -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE, pre], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_mediapipe_comes_without_matplotlib_and_sounddevice():
    got = _probe()
    assert got["matplotlib"] is False and got["pyplot"] is False and got["sounddevice"] is False
    assert got["landmarker"] == "FaceLandmarker" and got["image"] == "Image" and got["again"] is True
    assert got["plt_type"] == "_Deferred"
    assert got["real_after"] is True and got["helper_works"] is True


def test_an_already_imported_matplotlib_is_the_one_mediapipe_gets():
    got = _probe("matplotlib.pyplot")
    assert got["pyplot"] is True and got["plt_type"] == "module" and got["helper_works"] is True


NEWER = r"""
import builtins, json, sys
real_import = builtins.__import__
def newer_mediapipe(name, *args, **kw):          # a MediaPipe that imports more of matplotlib
    if name == "matplotlib.pyplot" and "matplotlib.colors" not in sys.modules:
        real_import("matplotlib.colors", *args, **kw)
    return real_import(name, *args, **kw)
builtins.__import__ = newer_mediapipe
from tracking.mediapipe_import import import_mediapipe
mp = import_mediapipe()
builtins.__import__ = real_import
from mediapipe.tasks.python.vision import drawing_utils
print(json.dumps({"landmarker": mp.tasks.vision.FaceLandmarker.__name__,
                  "plt": type(drawing_utils.plt).__name__, "colors": "matplotlib.colors" in sys.modules}))
"""


def test_a_mediapipe_that_needs_more_is_imported_the_plain_way():
    r = subprocess.run([sys.executable, "-c", NEWER], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == {"landmarker": "FaceLandmarker", "plt": "module", "colors": True}


THREADS = r"""
import json, sys, threading, time
from tracking.mediapipe_import import import_mediapipe
got = []
def first():
    import_mediapipe()
def late():                      # arrives while the first one's import is under way
    deadline = time.monotonic() + 60
    while "mediapipe" not in sys.modules and time.monotonic() < deadline:
        pass
    mp = import_mediapipe()
    got.append(hasattr(mp, "Image") and hasattr(mp, "tasks"))    # never a half-imported package
threads = [threading.Thread(target=late) for _ in range(2)] + [threading.Thread(target=first)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(got))
"""


def test_threads_importing_at_once_all_get_the_whole_package():
    r = subprocess.run([sys.executable, "-c", THREADS], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [True, True]
