"""README and ``--help`` agree (issue 16): the README's command reference is the parsers'
(regenerate it with ``python -m tests.runtime.cli.readme_reference``), and every ``--option``
the README mentions anywhere exists in some command's parser."""

from __future__ import annotations

import re

from tests.runtime.cli import readme_reference as ref


def test_the_readme_command_reference_is_the_parsers():
    assert ref.current() == ref.block(), "README.md is stale: run python -m tests.runtime.cli.readme_reference"


def test_every_option_the_readme_mentions_exists():
    known = {o for _, p in ref.commands() for a in p._actions for o in a.option_strings}
    known |= {"--help", "--version"}
    text = ref.README.read_text()
    # a line that runs pytest names pytest's own options (the README's test command)
    text = "\n".join(line for line in text.splitlines() if "-m pytest" not in line)
    mentioned = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
    assert sorted(mentioned - known) == []


def test_every_command_is_in_the_reference():
    names = [n for n, _ in ref.commands()]
    for n in ("run", "track", "replay", "check-fps", "inspect", "metrics", "generate", "bench solver",
              "bench tracker", "hair fit", "fuzz", "soak"):
        assert n in names
        assert f"`swaycam {n}` — " in ref.current()
