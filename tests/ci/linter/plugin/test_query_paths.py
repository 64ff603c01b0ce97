"""The query API reaches what policies reach: PATHs, triggers of any shape, transitive needs, branches, counts."""

from __future__ import annotations

import pytest

from ci_checks.query import CIRepository
from tests.ci.linter.conftest import MakeRepo

WORKFLOW = """on:
  schedule:
    - cron: '0 1 * * *'
  push:
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with: {persist-credentials: false}
      - name: Build [rocm]
        run: |
          case "$ARCH" in
            gfx94*) make ck ;;
            *) make ;;
          esac
          if [ -n "$X" ]; then make a; else make b; make c; fi
  test:
    needs: build
    runs-on: [self-hosted, mi300x]
    steps:
      - run: pytest
  report:
    needs: [test]
    runs-on: ubuntu-latest
    steps:
      - run: echo done
"""


@pytest.fixture
def repo(make_repo: MakeRepo) -> CIRepository:
    return CIRepository(
        make_repo(
            {".github/workflows/ci.yml": WORKFLOW, ".github/workflows/list.yml": "on: [push, pull_request]\njobs: {}\n"}
        )
    )


def test_select_and_get_read_values_as_github_does_and_say_where(repo: CIRepository) -> None:
    workflow = repo.workflow("ci.yml")
    needs = workflow.get("jobs.test.needs")
    assert needs.value == ["build"]
    assert needs.equals("build") and needs.equals(["build"])
    assert repr(needs) == ".github/workflows/ci.yml:19:12: `jobs.test.needs` = ['build']"
    answer = workflow.get("jobs.report.needs").has("build")
    assert not answer
    assert repr(answer) == ".github/workflows/ci.yml:24:12: `jobs.report.needs` is ['test'], not holding 'build'"
    labels = [selected.value for selected in workflow.select("jobs.*.runs-on[*]")]
    assert labels == ["ubuntu-latest", "self-hosted", "mi300x", "ubuntu-latest"]
    assert workflow.jobs["build"].steps[0].get("with.persist-credentials").equals("false")
    with pytest.raises(LookupError, match=r"nothing matches 'neds' under `jobs.test` \(keys there: needs, runs-on"):
        workflow.get("jobs.test.neds")


def test_triggers_of_any_shape_and_their_paths(repo: CIRepository) -> None:
    workflow = repo.workflow("ci.yml")
    assert list(workflow.triggers) == ["schedule", "push"]
    assert [cron.value for cron in workflow.triggers["schedule"].select("[*].cron")] == ["0 1 * * *"]
    assert workflow.triggers["push"].select("branches") == []
    listed = repo.workflow("list.yml")
    assert list(listed.triggers) == ["push", "pull_request"]
    assert listed.get("on").mapping_keys() == ["push", "pull_request"]
    assert listed.get("on").equals(["push", "pull_request"])


def test_needs_transitively_steps_by_glob_branches_and_counts(repo: CIRepository) -> None:
    workflow = repo.workflow("ci.yml")
    assert workflow.jobs["report"].needs_ids == ["test"]
    assert workflow.jobs["report"].transitive_needs() == {"test", "build"}
    build = workflow.jobs["build"]
    assert build.steps_matching(uses="actions/checkout") == [build.steps[0]]
    assert build.steps_matching(name="Build \\[rocm\\]") == [build.steps[1]]
    script = build.step("Build [rocm]").script
    assert script is not None
    assert script.branch(case='"$ARCH"', arm="gfx94*").count("make ck") == 1
    assert script.branch('[ -n "$X" ]', else_=True).count("make") == 2
    assert script.count("make", exact=True) == 1
    with pytest.raises(LookupError, match="no arm 'gfx90\\*'"):
        script.branch(case="$ARCH", arm="gfx90*")


def test_a_double_star_reaches_any_depth_in_the_query_api_too(repo: CIRepository) -> None:
    workflow = repo.workflow("ci.yml")
    assert [selected.shown for selected in workflow.select("**.uses")] == ["jobs.build.steps[0].uses"]
    assert [selected.shown for selected in workflow.select("jobs.**.needs")] == ["jobs.test.needs", "jobs.report.needs"]
    assert [selected.shown for selected in repo.workflow("list.yml").select("**.pull_request")] == ["on.pull_request"]
