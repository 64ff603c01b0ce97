"""shellcheck: `SC<number>` codes, each a page of shellcheck's wiki; every check in `correctness` above info level."""

from __future__ import annotations

import re

from ci_checks.core.linters import Linter

WIKI = "https://www.shellcheck.net/wiki/"

LINTER = Linter(
    name="shellcheck",
    prefix="SC",
    code_pattern=re.compile(r"SC\d{4}\Z"),
    docs_url=lambda code: WIKI + code,
    what="a shellcheck check, run by ci-checks over every bash and sh `run:` script",
    backend="ci_checks.backends.shellcheck",
    version_question=("--version",),
    version_answer=re.compile(r"\bShellCheck\b"),
    # Parser errors are SC1xxx, warnings SC2xxx, portability SC3xxx.
    numbers=re.compile(r"[1-3][0-9]{0,3}"),
    mirrored=False,
)
