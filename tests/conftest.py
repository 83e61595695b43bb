"""Shared test fixtures: paths of the read-only shared assets, and real clips tracked once
per session (MediaPipe costs 10-40 ms per frame here; tracking, runtime and metrics tests
share the results).

The assets live in ``../shared/assets`` next to the repository (or wherever
``$SWAYCAM_ASSETS`` points). Real-asset tests FAIL when they are missing rather than skip,
so a checkout without them cannot pass vacuously.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from avatars.assets import assets_dir

REPO = Path(__file__).resolve().parents[1]

# The compiled kernels' shared folder (avatars/kernel_cache.py) pinned for the whole run, its
# subprocesses included: tests that point SWAYCAM_CACHE at a temporary folder (a fresh fit or
# model cache) would otherwise make every kernel imported after it compile again there.
if not os.environ.get("SWAYCAM_KERNEL_CACHE") and not os.environ.get("NUMBA_CACHE_DIR"):
    from avatars.user_cache import cache_dir as _cache_dir

    os.environ["SWAYCAM_KERNEL_CACHE"] = str(_cache_dir() / "kernels")
ASSETS = assets_dir()
VRM_DIR = ASSETS / "vrm"
FACE_DIR = ASSETS / "face"
MODEL_DIR = ASSETS / "models"


def pytest_sessionstart(session):
    """In the pytest-xdist controller (``make test``), compile numba's kernels once, before any
    worker starts (tests/kernel_warmup.py: on a fresh clone every worker and subprocess of the
    first files compiled them at once, 109 s of CPU each for the solver's alone). Its two parts
    run side by side; a serial run (``-n 0`` or no xdist) compiles on first use as before, and
    ``SWAYCAM_TEST_NO_WARMUP=1`` skips it."""
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None) \
            or os.environ.get("SWAYCAM_TEST_NO_WARMUP"):
        return
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    parts = [subprocess.Popen([sys.executable, "-m", "tests.kernel_warmup", part], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for part in ("solver", "rig")]
    lines = [p.communicate()[1].strip().splitlines()[-1:] for p in parts]
    msg = "; ".join(line[0] for line in lines if line)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"kernels warmed in {time.perf_counter() - t0:.0f} s ({msg})")


def pytest_collection_modifyitems(session, config, items):
    """In a pytest-xdist worker (``make test`` runs ``-n auto --dist loadfile``), the files
    holding a ``slow`` test go first: a worker starts the 2-minute soak or the matrix while the
    other works through the short files, instead of one long file being the run's last.
    The order is the same in every worker (xdist requires it); a plain run keeps file order."""
    if not hasattr(config, "workerinput"):
        return
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_files)          # stable: file order kept


def shared_value(tmp_path_factory, key: str, compute):
    """``compute()`` once per test run across the pytest-xdist workers: the first worker to ask
    computes and pickles it under the run's common temporary folder while holding a lock on
    ``key``; another worker asking meanwhile waits and loads it (a try-on fit and its head-turn
    measurement cost tens of seconds, and files using them land on both workers). The folder
    belongs to this run, so nothing is reused from an earlier run. ``key``: a file-name-safe
    name of what is computed, with every input that changes it."""
    import fcntl
    import pickle

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent                                 # shared by the run's workers
    folder = root / "shared-values"
    folder.mkdir(exist_ok=True)
    path = folder / f"{key}.pickle"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = compute()
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)
        return value


def asset(*parts: str) -> Path:
    """Path of a shared asset; fails the test (saying where it looked) when it is absent."""
    p = ASSETS.joinpath(*parts)
    if not p.exists():
        pytest.fail(f"shared asset {p} is missing (set SWAYCAM_ASSETS to the shared assets folder)")
    return p


@pytest.fixture(scope="session")
def godette_path() -> Path:
    return asset("vrm", "Godette_vrm_v4.vrm")


@pytest.fixture(scope="session")
def selfie_mp4() -> Path:
    return asset("face", "mediapipe_selfie_segmentation_web.mp4")


@pytest.fixture(scope="session")
def android_gif() -> Path:
    return asset("face", "mediapipe_face_mesh_android_gpu.gif")


@pytest.fixture(scope="session")
def crowd_gif() -> Path:
    return asset("face", "mediapipe_realtime_face_detection.gif")


@pytest.fixture(scope="session")
def astronaut_png() -> Path:
    return asset("face", "skimage_astronaut.png")


@pytest.fixture(scope="session")
def model_path() -> Path:
    return asset("models", "face_landmarker_v2_with_blendshapes.task")


@dataclass
class Tracked:
    """One clip tracked once: per frame the chosen face (or the empty result) and all faces."""

    timestamps_ns: list
    chosen: list
    faces: list
    switches: int


def track_clip(path: Path, model: Path, **options) -> Tracked:
    from tracking.face_tracker import FaceTracker, FaceTrackerOptions
    from tracking.frame_sources import open_source

    ts, chosen, faces = [], [], []
    with FaceTracker(FaceTrackerOptions(model_path=model, **options)) as tracker, open_source(path) as src:
        for frame in src:
            ts.append(frame.timestamp_ns)
            chosen.append(tracker.process_frame(frame))
            faces.append(list(tracker.last_faces))
        switches = tracker.selector.switches
    return Tracked(ts, chosen, faces, switches)


@pytest.fixture(scope="session")
def selfie_tracked(selfie_mp4, model_path) -> Tracked:
    return track_clip(selfie_mp4, model_path)


@pytest.fixture(scope="session")
def android_tracked(android_gif, model_path) -> Tracked:
    return track_clip(android_gif, model_path)


@pytest.fixture(scope="session")
def crowd_tracked(crowd_gif, model_path) -> Tracked:
    return track_clip(crowd_gif, model_path, num_faces=4)


@pytest.fixture(scope="session")
def astronaut_tracked(astronaut_png, model_path) -> Tracked:
    return track_clip(astronaut_png, model_path)


@pytest.fixture(scope="session")
def hand_models() -> tuple[Path, Path]:
    """(hand, pose) landmarker bundles (tracking/hand_model.py: assembled once from MediaPipe's
    npm packages into the cache; `make test` does it); fails, saying why, when unobtainable."""
    from tracking.hand_model import HandModelError, ensure_hand_models

    try:
        return ensure_hand_models()
    except HandModelError as exc:
        pytest.fail(f"hand/pose models unavailable: {exc} (python -m tracking.hand_model --ensure)")


@pytest.fixture(scope="session")
def speech(tmp_path_factory):
    """espeak-ng and sox speech (tests/speech.py); skips where the Debian packages are missing."""
    import shutil

    from tests.speech import Speech

    for tool in ("espeak-ng", "sox"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (sh .ci/system-deps.sh test)")
    return Speech(tmp_path_factory.mktemp("speech"), shutil.which("sox"))
