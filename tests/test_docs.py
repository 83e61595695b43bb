"""The docs a newcomer reads stay true of the tree: every repository path that ARCHITECTURE.md,
README.md and docs/ cite exists, every design citation names a section of docs/design.md, and
no citation points at the design notes that used to live outside the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("runtime", "tracking", "render", "solver", "avatars", "tests", "docs")
#: a path-looking token: a top-level folder of the repository, then path characters
PATH_RE = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*[\w/])" % "|".join(PACKAGES))
#: a citation of the design notes: docs/design.md §4.5
DESIGN_CITE = re.compile(r"docs/design\.md §(\d+(?:\.\d+)?)")
SOURCE_SUFFIXES = {".py", ".md", ".toml", ".mjs", ".js", ".glsl", ".html", ".css"}


def _current_docs() -> list[Path]:
    return [ROOT / "ARCHITECTURE.md", ROOT / "README.md"] + sorted(
        p for p in (ROOT / "docs").rglob("*.md") if "history" not in p.parts)


def _sources() -> list[Path]:
    """Source and doc files of the repository's own folders (not .venv, caches or history)."""
    roots = [ROOT / name for name in PACKAGES if name != "docs"] + [ROOT / "docs"]
    files = list(ROOT.glob("*.md"))
    for root in roots:
        files += [p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()
                  and not {"__pycache__", "node_modules", "history"}.intersection(p.relative_to(ROOT).parts)]
    return files


def _exists(token: str) -> bool:
    token = token.rstrip("./")
    if any(ch in token for ch in "*<>") or re.search(r"(^|/)[A-Z][A-Z_]+(\.|/|$)", token):
        return True                       # a pattern (`runtime/cli/<command>.py`, `presets/NAME.toml`)
    path = ROOT / token
    return path.exists() or path.with_suffix(".py").exists()


def test_every_cited_repository_path_exists():
    missing = []
    for doc in _current_docs():
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for token in PATH_RE.findall(line):
                if not _exists(token):
                    missing.append(f"{doc.relative_to(ROOT)}:{n}: {token}")
    assert missing == []


def test_design_citations_name_sections_that_exist():
    design = (ROOT / "docs" / "design.md").read_text()
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", design, flags=re.M))
    assert {"1", "2", "3", "4.1", "4.4", "4.5", "9", "10", "11"} <= sections
    bad = []
    for path in _sources():
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for sec in DESIGN_CITE.findall(line):
                if sec not in sections:
                    bad.append(f"{path.relative_to(ROOT)}:{n}: §{sec}")
    assert bad == []


def test_no_citation_of_notes_outside_the_repository():
    stale = []
    for path in _sources():
        text = path.read_text(errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"(?<!docs/design\.md )DESIGN(\.md)? §\d", line) or re.search(
                    r"\b(runtime|solver|avatars/tryon)/NOTES\.md", line):
                stale.append(f"{path.relative_to(ROOT)}:{n}")
    assert stale == []


def test_history_is_labelled_as_history():
    logs = sorted((ROOT / "docs" / "history").glob("*.md"))
    assert len(logs) >= 3
    for log in logs:
        assert log.read_text().startswith("> **History, not current design.**"), log.name
