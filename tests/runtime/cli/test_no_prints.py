"""``logging``, never ``print``, outside the CLI (docs/design.md §7): only runtime/cli/ writes to the
console. Library code reports through return values, exceptions and loggers."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGES = ("avatars", "render", "runtime", "solver", "tracking")

#: Console writers that are a command line of their own, or known and owned elsewhere.
ALLOWED = {
    "tracking/face_model.py": "python -m tracking.face_model --ensure, the Makefile set-up step",
    "tracking/hand_model.py": "python -m tracking.hand_model --ensure, the Makefile test set-up step",
    "runtime/eval/mjpeg_client.py": "python -m runtime.eval.mjpeg_client: swaycam bench panel's client process, "
                                    "answering on its stdout pipe",
}


def _console_writes(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print":
            lines.append(node.lineno)
        elif (isinstance(f, ast.Attribute) and f.attr == "write" and isinstance(f.value, ast.Attribute)
              and f.value.attr in ("stdout", "stderr") and isinstance(f.value.value, ast.Name)
              and f.value.value.id == "sys"):
            lines.append(node.lineno)
    return lines


def test_only_the_cli_prints():
    found = {}
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith("runtime/cli/") or rel in ALLOWED:
                continue
            if lines := _console_writes(path):
                found[rel] = lines
    assert found == {}, f"print / sys.stdout.write outside runtime/cli/ (use logging or return the text): {found}"
