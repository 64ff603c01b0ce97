"""CC052 beyond its golden fixtures: what is no test of the event, callers that call in a circle, a list whose literal
escapes a quote."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ci.linter.conftest import MakeRepo, run_cli


def _found(root: Path) -> list[tuple[str, int, int, int, str, str]]:
    found = json.loads(run_cli("check", root, "--select", "CC052", "--output-format", "json").out)["diagnostics"]
    return [
        (item["path"], item["line"], item["column"], item["end_column"], item["severity"], item["message"])
        for item in found
    ]


NOT_TESTS = """\
on: push
jobs:
  build:
    if: "event ${{ github.event_name }} == 'release'"
    runs-on: ubuntu-latest
    steps:
      - if: ${{ !github.event_name == 'release' }}
        run: echo negated, then compared
      - if: github.event_name.release == 'release'
        run: echo a property of the name
      - if: startsWith(github.event_name, 'releases')
        run: echo a prefix
      - if: github.event_name == inputs.event
        run: echo compared with an input
"""


def test_only_a_comparison_of_the_event_name_itself_with_a_literal_is_judged(make_repo: MakeRepo) -> None:
    assert _found(make_repo({".github/workflows/ci.yml": NOT_TESTS})) == []


SCHEDULE = "  schedule:\n    - cron: '0 3 * * *'\n"
LOOP = """\
on:
  push:
  workflow_call:
jobs:
  other:
    uses: ./.github/workflows/{other}.yml
  check:
    if: github.event_name == 'push' || github.event_name == 'release'
    runs-on: ubuntu-latest
    steps:
      - run: echo
"""


def test_workflows_that_call_each_other_receive_what_their_own_triggers_give(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            ".github/workflows/a.yml": LOOP.replace("{other}", "b"),
            ".github/workflows/b.yml": LOOP.replace("{other}", "a").replace("  push:\n", SCHEDULE),
        }
    )
    message = (
        "`github.event_name == 'release'` is always false: the workflows here that call this one run on {events}, "
        "never on `release` (in a called workflow `github.event_name` is the caller's event)"
    )
    assert _found(root) == [
        (".github/workflows/a.yml", 8, 61, 70, "error", message.format(events="`push`, `schedule`")),
        (".github/workflows/b.yml", 9, 61, 70, "error", message.format(events="`push`, `schedule`")),
    ]


def test_a_reusable_workflow_no_workflow_here_calls_may_receive_any_event_but_never_a_misspelt_one(
    make_repo: MakeRepo,
) -> None:
    library = LOOP.replace("  push:\n", "").replace("  other:\n    uses: ./.github/workflows/{other}.yml\n", "")
    root = make_repo({".github/workflows/library.yml": library.replace("'release'", "'psuh'")})
    assert _found(root) == [
        (
            ".github/workflows/library.yml",
            5,
            61,
            67,
            "error",
            "`github.event_name == 'psuh'` is always false: `psuh` is not a GitHub event (did you mean `push`?)",
        )
    ]


def test_an_entry_of_a_list_whose_literal_escapes_a_quote_is_reported_at_the_literal(make_repo: MakeRepo) -> None:
    workflow = """\
on: push
jobs:
  build:
    if: contains(fromJSON('["it''s", "push"]'), github.event_name)
    runs-on: ubuntu-latest
    steps:
      - run: echo
"""
    [(_, line, column, end, severity, message)] = _found(make_repo({".github/workflows/ci.yml": workflow}))
    assert (line, column, end, severity) == (4, 27, 46, "error")
    assert message == "`github.event_name` never matches this entry 'it's': `it's` is not a GitHub event"
