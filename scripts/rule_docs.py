"""Write `docs/rules/`: one page per built-in rule from its module docstring, and an index.

    python scripts/rule_docs.py          # write the pages
    python scripts/rule_docs.py --check  # exit 1, naming the stale pages, if any differs

The pages are what SARIF's `helpUri` and `ci-checks rule` link to; the test
suite fails when one is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ci_checks import registry
from ci_checks.reporters import docs

ROOT = Path(__file__).resolve().parents[1]
FOLDER = "docs/rules"


def pages() -> dict[str, str]:
    """Every page of `docs/rules/` by its repository-relative path."""
    written = {docs.rule_page_path(rule): docs.rule_page(rule) for rule in registry.RULES}
    rows = [
        f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.severity.value} | {rule.group.value} "
        f"| {rule.status.value} | {rule.summary} |"
        for rule in registry.RULES
    ]
    index = [
        "# ci-checks rules",
        "",
        "Each page is the rule's module docstring, as `ci-checks rule CODE` prints it.",
        "",
        "| code | name | default severity | group | status | what it reports |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    written[f"{FOLDER}/README.md"] = "\n".join(index) + "\n"
    return written


def stale(root: Path) -> list[str]:
    """Pages that are missing or differ, and pages of rules that no longer exist."""
    expected = pages()
    found = {path.relative_to(root).as_posix() for path in (root / FOLDER).glob("*.md")}
    differing = [
        path
        for path, text in expected.items()
        if not (root / path).is_file() or (root / path).read_text(encoding="utf-8") != text
    ]
    return sorted({*differing, *(found - expected.keys())})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale pages")
    args = parser.parse_args(argv)
    if args.check:
        outdated = stale(ROOT)
        for path in outdated:
            print(f"{path} is out of date: run python scripts/rule_docs.py", file=sys.stderr)
        return 1 if outdated else 0
    for path in (ROOT / FOLDER).glob("*.md"):
        path.unlink()
    for path, text in pages().items():
        (ROOT / path).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / path).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
