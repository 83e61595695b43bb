"""The package layers, read from the source (AST): every ``import`` / ``from ... import``
statement of every module under the five packages, at any depth (function-level lazy
imports, ``if TYPE_CHECKING:`` blocks) and relative imports resolved against the module's
package.

(a) Direction: ``runtime -> tracking | render | solver -> avatars``. tracking, render and
    solver never import each other or runtime; avatars imports none of the four.
(b) Evaluation is a leaf: a module inside an ``eval`` package (``solver.eval.bench``,
    ``runtime.eval.soak``, ...) is imported only by other eval modules and by the CLI
    (``runtime.cli``); tests may import anything (they are not scanned).
(c) ``runtime.session`` (the run's lifecycle) is imported only by the modules of
    :data:`SESSION_IMPORTERS`.

Each failure lists every violation as ``file:line: importer -> imported``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("runtime", "tracking", "render", "solver", "avatars")
#: Which top-level packages each package may import (besides itself).
MAY_IMPORT = {
    "runtime": {"tracking", "render", "solver", "avatars"},
    "tracking": {"avatars"},
    "render": {"avatars"},
    "solver": {"avatars"},
    "avatars": set(),
}
#: The modules that may import ``runtime.session``: the CLI's run command (it opens the
#: run), the soak run and the runtime benchmarks that drive a whole live run. Keep it small:
#: anything else talks to the stage through narrow protocols (issue 27, item 1).
SESSION_IMPORTERS = frozenset({
    "runtime.cli.run",
    "runtime.eval.soak",
    "runtime.eval.loop_bench",
    "runtime.eval.panel_bench",
    "runtime.eval.tryon_bench",
})
SESSION = "runtime.session"


@dataclass(frozen=True)
class Edge:
    """One import statement: ``importer`` (dotted module) imports ``target`` at file:line."""

    file: str
    line: int
    importer: str
    target: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.importer} -> {self.target}"


def _module_name(path: Path) -> tuple[str, bool]:
    """(dotted name, is a package ``__init__``) of a source file under the repository."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _is_module(dotted: str) -> bool:
    p = REPO.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _edges(path: Path) -> list[Edge]:
    name, is_pkg = _module_name(path)
    package = name if is_pkg else name.rpartition(".")[0]
    rel = str(path.relative_to(REPO))
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=rel)):
        if isinstance(node, ast.Import):
            out += [Edge(rel, node.lineno, name, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:      # ``from pkg import sub`` imports the module pkg.sub when there is one
                sub = f"{mod}.{a.name}"
                out.append(Edge(rel, node.lineno, name, sub if a.name != "*" and _is_module(sub) else mod))
    return list(dict.fromkeys(out))     # one edge per (line, target)


def _all_edges() -> list[Edge]:
    edges = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            edges += _edges(path)
    return edges


def _top(dotted: str) -> str:
    return dotted.split(".", 1)[0]


def _is_eval(dotted: str) -> bool:
    return "eval" in dotted.split(".")


def _within(dotted: str, prefix: str) -> bool:
    return dotted == prefix or dotted.startswith(prefix + ".")


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return _all_edges()


def _report(what: str, bad: list[Edge]) -> str:
    return f"{len(bad)} {what}:\n" + "\n".join(f"  {e}" for e in bad)


def test_the_scan_sees_lazy_and_relative_imports(edges):
    """The scanner is not vacuous: relative imports resolve (``from .autorig import``,
    ``from .. import layout``) and function-level imports count."""
    got = {(e.importer, e.target) for e in edges}
    assert ("avatars.tryon.pipeline", "avatars.tryon.autorig") in got              # from .autorig import ...
    assert ("solver.eval.tryon_quality", "solver.layout") in got                   # from .. import layout as L
    assert ("runtime.cli.hair", "avatars.eval.fit_bench") in got                   # inside run_bench()
    assert ("runtime.tryon.styles", "avatars.tryon.cache") in got                  # under if TYPE_CHECKING:
    assert len(edges) > 1000


def test_package_direction(edges):
    """runtime -> tracking | render | solver -> avatars (module doc, (a))."""
    bad = [e for e in edges
           if _top(e.target) in PACKAGES and _top(e.target) != _top(e.importer)
           and _top(e.target) not in MAY_IMPORT[_top(e.importer)]]
    assert not bad, _report("imports against the package direction", bad)


def test_eval_modules_are_leaves(edges):
    """Only eval modules and the CLI import eval modules (module doc, (b))."""
    bad = [e for e in edges
           if _top(e.target) in PACKAGES and _is_eval(e.target)
           and not _is_eval(e.importer) and not _within(e.importer, "runtime.cli")]
    assert not bad, _report("product modules importing evaluation code", bad)


def test_who_imports_the_session(edges):
    """``runtime.session`` only from :data:`SESSION_IMPORTERS` (module doc, (c))."""
    bad = [e for e in edges
           if _within(e.target, SESSION) and e.importer != SESSION and e.importer not in SESSION_IMPORTERS]
    assert not bad, _report("imports of runtime.session outside SESSION_IMPORTERS", bad)
