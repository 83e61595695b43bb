"""avatars/kernel_cache.py: a change to any source a compiled kernel is built from (its folder's
inlined helpers, the layouts it folds in, the shared math of avatars/math_kernels.py and
avatars/math3d.py) empties numba's cache folder once; every kernel folder is stamped."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import avatars
from avatars import kernel_cache
from avatars.kernel_cache import MATH_SOURCES, STAMP, ensure_fresh, kernel_cache_dir, sources_digest, watched_sources

REPO = Path(__file__).resolve().parents[2]


def _tree(tmp_path: Path):
    pkg = tmp_path / "pkg"
    (pkg / "kernels").mkdir(parents=True)
    for name in ("kernels/step.py", "kernels/resolve.py", "layout.py", "chains.py"):
        (pkg / name).write_text(f"# {name}\n")
    cache = pkg / "kernels" / "__pycache__"
    cache.mkdir()
    return pkg, cache


def _fill(cache: Path):
    for name in ("step.step_kernel-189.py311.nbi", "step.step_kernel-189.py311.1.nbc", "step.cpython-311.pyc"):
        (cache / name).write_bytes(b"x")


def test_a_helper_change_empties_the_cache_once(tmp_path):
    pkg, cache = _tree(tmp_path)
    sources = sorted((pkg / "kernels").glob("*.py")) + [pkg / "layout.py"]
    _fill(cache)
    assert ensure_fresh(cache, sources) == 2          # no stamp yet: cleared, stamped
    assert sorted(p.name for p in cache.iterdir()) == ["step.cpython-311.pyc", STAMP]
    _fill(cache)
    assert ensure_fresh(cache, sources) == 0          # unchanged sources: kept
    (pkg / "chains.py").write_text("# not a kernel source\n")
    assert ensure_fresh(cache, sources) == 0
    (pkg / "kernels" / "resolve.py").write_text("# an inlined helper changed\n")
    assert ensure_fresh(cache, sources) == 2
    assert not list(cache.glob("*.nb?"))


def test_a_missing_or_unwritable_folder_is_left_alone(tmp_path):
    pkg, _ = _tree(tmp_path)
    assert ensure_fresh(tmp_path / "nowhere", [pkg / "layout.py"]) == 0


def test_every_stamp_watches_the_shared_math():
    here = Path(avatars.__file__).resolve().parent
    assert MATH_SOURCES == (here / "math_kernels.py", here / "math3d.py")
    a = Path("a.py")
    assert watched_sources([a]) == [a, *MATH_SOURCES]
    assert watched_sources([a, MATH_SOURCES[0]]) == [a, *MATH_SOURCES]      # each once, in order


def test_a_math_change_gives_a_new_stamp_and_empties_every_kernel_folder(tmp_path, monkeypatch):
    """Edit the shared math (copies of the two files): every folder stamped with it is emptied."""
    math_copies = []
    for src in MATH_SOURCES:
        shutil.copy(src, tmp_path / src.name)
        math_copies.append(tmp_path / src.name)
    monkeypatch.setattr(kernel_cache, "MATH_SOURCES", tuple(math_copies))
    folders = []
    for name in ("solver", "rig", "tracking"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "k.py").write_text(f"# {name}\n")
        folders.append(tmp_path / name)
    stamps = []
    for f in folders:
        _fill(f)
        ensure_fresh(f, kernel_cache.watched_sources([f / "k.py"]))
        stamps.append((f / STAMP).read_text())
        _fill(f)
    for f in folders:                                                      # unchanged: kept
        assert ensure_fresh(f, kernel_cache.watched_sources([f / "k.py"])) == 0
    math_copies[0].write_text(math_copies[0].read_text() + "\n# an edited helper\n")
    for f, old in zip(folders, stamps):
        assert ensure_fresh(f, kernel_cache.watched_sources([f / "k.py"])) == 2
        assert (f / STAMP).read_text() != old
    math_copies[1].write_text(math_copies[1].read_text() + "\n# an edited scalar formula\n")
    for f in folders:
        _fill(f)
        assert ensure_fresh(f, kernel_cache.watched_sources([f / "k.py"])) == 2


def _kernel_folders():
    from runtime.rig import kernels as rig_kernels
    from solver.kernels import step
    from tracking import body, track_sampling
    return {
        "solver": (step.step_kernel, step.KERNEL_SOURCES),
        "rig": (rig_kernels.drive_and_pose_kernel, rig_kernels.KERNEL_SOURCES),
        "tracking": (track_sampling.sample_kernel, []),
        "tracking-body": (body.sample_body_kernel, []),
    }


@pytest.mark.parametrize("name", ["solver", "rig", "tracking", "tracking-body"])
def test_every_kernel_folder_is_stamped_with_its_sources_and_the_math(name):
    kernel, sources = _kernel_folders()[name]
    folder = kernel_cache_dir(kernel)
    assert folder is not None
    assert os.access(folder, os.W_OK)     # the shared folder (or, switched off, next to the sources)
    stamp = folder / STAMP
    assert stamp.read_text().strip() == sources_digest(watched_sources(sources))


def test_the_watched_sources_name_every_inlined_module():
    folders = _kernel_folders()
    solver = {p.name for p in folders["solver"][1]}
    assert {"step.py", "pose.py", "spring.py", "contact.py", "resolve.py", "relax.py", "layout.py"} <= solver
    rig = {p.name for p in folders["rig"][1]}
    assert rig == {"kernels.py", "constraint_kernels.py", "motion_kernels.py", "body.py"}


# -- the shared cache (SourcesLocator): one compile for every checkout with the same sources ---

_PROBE = """
import numpy as np
from render.joint_matrices import joint_matrices_kernel as k
world = np.tile(np.eye(4), (2, 1, 1)); out = np.zeros((1, 4, 4)); rows = np.zeros((1, 3, 4), np.float32)
k(world, np.array([1], np.int32), np.eye(4)[None].copy(), out, rows)
print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()), k._cache._cache_path)
"""


def _checkout(root: Path) -> Path:
    """A copy of the packages the probe imports (sources only), as a second clone would hold."""
    for pkg in ("avatars", "render"):
        shutil.copytree(REPO / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _probe(checkout: Path, cache: Path) -> tuple[int, int, str]:
    env = {**os.environ, "PYTHONPATH": str(checkout), "SWAYCAM_KERNEL_CACHE": str(cache)}
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=checkout, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1]), out[2]


def test_a_second_checkout_loads_what_the_first_compiled(tmp_path):
    a, b = _checkout(tmp_path / "a"), _checkout(tmp_path / "b")
    cache = tmp_path / "kernels"
    hits, misses, folder = _probe(a, cache)
    assert (hits, misses) == (0, 1)                       # compiled, written to the shared folder
    assert Path(folder).parent == cache and Path(folder).name.startswith("render-joint_matrices-")
    assert _probe(b, cache) == (1, 0, folder)             # another checkout: loaded, not compiled
    assert not (b / "render" / "__pycache__").exists() or not list((b / "render" / "__pycache__").glob("*.nb?"))
    src = b / "render" / "joint_matrices.py"
    src.write_text(src.read_text() + "\n# an edit\n")
    hits, misses, edited = _probe(b, cache)
    assert (hits, misses) == (0, 1) and edited != folder  # its own folder: never the stale kernel
    math = b / "avatars" / "math_kernels.py"
    math.write_text(math.read_text() + "\n# an edited helper\n")
    hits, misses, third = _probe(b, cache)
    assert (hits, misses) == (0, 1) and third not in (folder, edited)


def test_the_switch_and_numbas_own_setting(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("SWAYCAM_KERNEL_CACHE", "off")
    assert kernel_cache.shared_root() is None
    monkeypatch.setenv("SWAYCAM_KERNEL_CACHE", str(tmp_path / "k"))
    assert kernel_cache.shared_root() == tmp_path / "k"
    monkeypatch.delenv("SWAYCAM_KERNEL_CACHE")
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "c"))
    assert kernel_cache.shared_root() == tmp_path / "c" / "kernels"
    monkeypatch.setattr(kernel_cache._numba_config, "CACHE_DIR", str(tmp_path / "numba"))
    assert kernel_cache.shared_root() is None             # NUMBA_CACHE_DIR wins


def test_folders_unused_for_two_weeks_are_pruned(tmp_path):
    now = 2_000_000_000.0
    old, fresh, kept, unmarked = (tmp_path / n for n in ("old-1", "fresh-2", "kept-3", "unmarked-4"))
    for f, age_days in ((old, 15), (fresh, 13), (kept, 30), (unmarked, 20)):
        f.mkdir()
        if f is not unmarked:
            (f / kernel_cache.USED).touch()
            os.utime(f / kernel_cache.USED, (now - age_days * 86400,) * 2)
        os.utime(f, (now - age_days * 86400,) * 2)
    removed = kernel_cache.prune(tmp_path, keep=kept, now=now)
    assert sorted(p.name for p in removed) == ["old-1", "unmarked-4"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh-2", "kept-3"]


def test_the_groups_watch_what_the_in_tree_stamps_watch():
    folders = _kernel_folders()
    for name in ("solver", "rig"):
        kernel, sources = folders[name]
        group, watched = kernel_cache.group_sources(Path(kernel.py_func.__code__.co_filename))
        assert watched == watched_sources(sources), name
        assert group == {"solver": "solver-kernels", "rig": "runtime-rig"}[name]
    group, watched = kernel_cache.group_sources(REPO / "tracking" / "body.py")
    assert (group, watched) == ("tracking-body", watched_sources([REPO / "tracking" / "body.py"]))


def test_every_kernel_of_the_project_uses_the_shared_locator():
    """Every ``cache=True`` dispatcher of the five packages (found by import) is placed by
    SourcesLocator under the shared root, in a folder named by its group's digest."""
    import importlib

    from numba.core.registry import CPUDispatcher

    if kernel_cache.shared_root() is None:
        pytest.skip("the shared kernel cache is switched off in this environment")
    found = []
    for path in sorted(REPO.glob("*/**/*.py")):
        rel = path.relative_to(REPO)
        if rel.parts[0] not in kernel_cache.PACKAGES or "cache=True" not in path.read_text():
            continue
        module = importlib.import_module(".".join(rel.with_suffix("").parts))
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value._cache.__class__.__name__ == "FunctionCache" \
                    and Path(value.py_func.__code__.co_filename).resolve() == path.resolve():
                locator = value._cache._impl.locator
                assert isinstance(locator, kernel_cache.SourcesLocator), value
                group, watched = kernel_cache.group_sources(path)
                assert Path(locator.get_cache_path()).name == f"{group}-{sources_digest(watched)[:20]}"
                found.append(value)
    assert len(found) >= 20
