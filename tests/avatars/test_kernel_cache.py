"""solver/kernels/cache.py: a change to any kernel source (the kernels folder, solver/layout.py)
empties numba's cache folder once."""

from __future__ import annotations

import os
from pathlib import Path

from solver.kernels import step as kernels
from solver.kernels.cache import STAMP, ensure_fresh, kernel_cache_dir, kernel_sources, sources_digest


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
    assert [p.relative_to(pkg).as_posix() for p in kernel_sources(pkg / "kernels")] == [
        "kernels/resolve.py", "kernels/step.py", "layout.py"]
    _fill(cache)
    assert ensure_fresh(cache, kernel_sources(pkg / "kernels")) == 2          # no stamp yet: cleared, stamped
    assert sorted(p.name for p in cache.iterdir()) == ["step.cpython-311.pyc", STAMP]
    _fill(cache)
    assert ensure_fresh(cache, kernel_sources(pkg / "kernels")) == 0          # unchanged sources: kept
    (pkg / "chains.py").write_text("# not a kernel source\n")
    assert ensure_fresh(cache, kernel_sources(pkg / "kernels")) == 0
    (pkg / "kernels" / "resolve.py").write_text("# an inlined helper changed\n")
    assert ensure_fresh(cache, kernel_sources(pkg / "kernels")) == 2
    assert not list(cache.glob("*.nb?"))


def test_a_missing_or_unwritable_folder_is_left_alone(tmp_path):
    pkg, _ = _tree(tmp_path)
    assert ensure_fresh(tmp_path / "nowhere", kernel_sources(pkg / "kernels")) == 0


def test_the_kernels_cache_folder_is_stamped_with_the_current_sources():
    folder = kernel_cache_dir(kernels.step_kernel)
    assert folder is not None
    assert os.access(folder, os.W_OK)     # a checkout: numba caches next to the sources
    stamp = folder / STAMP
    assert stamp.read_text().strip() == sources_digest(kernel_sources(Path(kernels.__file__).parent))
