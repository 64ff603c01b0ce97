"""Where the check behind each code is documented: ci-checks' own rule pages and the linters' pages.

ci-checks' rules: `docs/rules/<CODE>.md` in the repository, each the rule's
module docstring as `ci-checks rule CODE` prints it (written by
`python scripts/rule_docs.py`), linked at the release tag of the running
version (`<Repository>/blob/v0.1.0/docs/rules/CC031.md`), so that a link shows
the rule as the version that reported it checks it. `Repository` is the
package's `[project.urls]` entry, the one place the base is set; without one,
or with a placeholder (`https://github.com/OWNER/ci-checks`), no output links
to a rule page: SARIF carries the rule's documentation without a `helpUri`,
and JSON, Markdown, JUnit and `ci-checks rule` give no link. The linters' checks link to their own
documentation, as each one's `Linter` in `ci_checks.core.linters` makes the
link: shellcheck's wiki page of the code, zizmor's audit page (the URL zizmor
gives with each finding, where it gives one) and the section of actionlint's
list of checks for the kind.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ci_checks import __version__
from ci_checks.config import registry
from ci_checks.config.selection import linter_code
from ci_checks.core import linters
from ci_checks.rules.rule import Rule

_SAFE_URL = re.compile(r"https://[A-Za-z0-9._~:/?#\[\]@!$&'*+,;=%-]+\Z")
_PLACEHOLDER = re.compile(
    r"/(OWNER|ORG|ORGANI[SZ]ATION|USER|USERNAME|NAMESPACE|YOUR[A-Z_-]*)(/|\Z)|example\.(com|org|net)\b"
)
"""What a template's URL holds where a real one would name its owner: never a link ci-checks writes."""


@dataclass(frozen=True)
class LinterCheck:
    code: str
    """As ci-checks reports it: `SC2086`, `AL-expression`, `ZZ-artipacked`."""
    linter: str
    url: str

    @property
    def description(self) -> str:
        """What the code is, as a sentence."""
        what = linters.LINTERS[self.linter].what
        return f"{self.code} is {what}; {self.linter}'s documentation explains it and how to fix what it finds."


def linter_check(code: str) -> LinterCheck | None:
    """The linter check of a finding's code (`SC2086`, `AL-expression`, `ZZ-artipacked`), or None for ci-checks' own.

    Any kind a linter reports is linked, one of a newer release or a fork included.
    """
    linter = linters.linter_of(code)
    if linter is None or linter.code_pattern.match(code) is None:
        return None
    return LinterCheck(code, linter.name, linter.docs_url(code))


def named_check(word: str) -> LinterCheck | None:
    """The one linter check a code or printed name names (`SC2086`, `zizmor-artipacked`), if the linter has it."""
    code = linter_code(word)
    check = linter_check(code) if code is not None else None
    if check is None:
        return None
    linter = linters.LINTERS[check.linter]
    return check if not linter.checks or check.code.removeprefix(linter.prefix) in linter.checks else None


@functools.cache
def repository() -> str | None:
    """The project's repository URL from the installed package's metadata, without a trailing slash."""
    from importlib import metadata  # only when a link is written

    try:
        entries = metadata.metadata("ci-checks").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    return repository_of([str(entry) for entry in entries])


def repository_of(project_urls: list[str]) -> str | None:
    """The `Repository` of a package's `Project-URL` entries (`Repository, https://...`), unless it is missing, not
    an `https://` URL that cannot break out of a link, or a placeholder."""
    for entry in project_urls:
        label, _, link = entry.partition(",")
        link = link.strip()
        if label.strip().lower() == "repository" and _SAFE_URL.match(link) and not _PLACEHOLDER.search(link):
            return link.rstrip("/")
    return None


def rule_page(rule: Rule) -> str:
    """A built-in rule's documentation as Markdown: what `ci-checks rule` prints and `docs/rules/` holds."""
    status = f"Group: {rule.group.value}; status: {rule.status.value} since {rule.since}"
    return f"# {rule.code} {rule.name}\n\nDefault severity: {rule.severity.value}\n\n{status}\n\n{rule.docs.strip()}\n"


def rule_page_path(rule: Rule) -> str:
    return f"docs/rules/{rule.code}.md"


def rule_url(rule: Rule) -> str | None:
    base = repository()
    return f"{base}/blob/v{__version__}/{rule_page_path(rule)}" if base else None


def url(code: str, given: str | None = None) -> str | None:
    """Where the check of a finding with this code is documented; `given` is the URL its linter named, if any."""
    if given is not None and _SAFE_URL.match(given):
        return given
    built_in = registry.BY_CODE.get(code)
    if built_in is not None:
        return rule_url(built_in)
    check = linter_check(code)
    return check.url if check is not None else None


def what_it_does(rule: Rule) -> str:
    """The *What it does* section of a rule's documentation, as one paragraph of text."""
    section = rule.docs.split("## What it does", 1)[-1].split("\n## ", 1)[0]
    return " ".join(section.split())
