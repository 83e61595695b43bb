"""avatars/kernel_cache.py: a change to any source a compiled kernel is built from (its folder's
inlined helpers, the layouts it folds in, the shared math of avatars/math_kernels.py and
avatars/math3d.py) empties numba's cache folder once; every kernel folder is stamped."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import avatars
from avatars import kernel_cache
from avatars.kernel_cache import MATH_SOURCES, STAMP, ensure_fresh, kernel_cache_dir, sources_digest, watched_sources


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
    assert os.access(folder, os.W_OK)     # a checkout: numba caches next to the sources
    stamp = folder / STAMP
    assert stamp.read_text().strip() == sources_digest(watched_sources(sources))


def test_the_watched_sources_name_every_inlined_module():
    folders = _kernel_folders()
    solver = {p.name for p in folders["solver"][1]}
    assert {"step.py", "pose.py", "spring.py", "contact.py", "resolve.py", "relax.py", "layout.py"} <= solver
    rig = {p.name for p in folders["rig"][1]}
    assert rig == {"kernels.py", "constraint_kernels.py", "motion_kernels.py", "body.py"}
