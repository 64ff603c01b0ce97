"""CC051 missing-working-directory on small repositories: whole messages, positions and related locations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ci.linter.conftest import MakeRepo, run_cli

Finding = tuple[str, int, int, str, list[tuple[str, int, int, str]]]

CI = ".github/workflows/ci.yml"
FAILS = "no earlier step makes: the step fails before its script runs"
CHECKED_OUT = "the repository is checked out here"
REPOSITORY = {"python/pyproject.toml": "[project]\nname = 'pkg'\n", "csrc/kernel/Makefile": "all:\n"}


def _findings(root: Path, *paths: str) -> list[Finding]:
    result = run_cli(
        "check", *(str(root / path) for path in paths or [""]), "--select", "CC051", "--output-format", "json"
    )
    return [
        (
            d["path"],
            d["line"],
            d["column"],
            d["message"],
            [(r["path"], r["line"], r["column"], r["message"]) for r in d.get("related", [])],
        )
        for d in json.loads(result.out)["diagnostics"]
    ]


def _workflow(steps: str, job: str = "", top: str = "") -> str:
    """A workflow whose job `build` (with `job` keys) has these steps (YAML indented by six spaces)."""
    return f"on: push\n{top}jobs:\n  build:\n    runs-on: ubuntu-latest\n{job}    steps:\n{steps}"


CHECKOUT = "      - uses: actions/checkout@v4\n"


def test_a_folder_the_checkout_lacks_is_named_with_its_step_its_checkout_and_a_close_name(make_repo: MakeRepo) -> None:
    steps = (
        CHECKOUT + "      - name: Kernels\n        working-directory: csrc/kernels\n        run: make\n"
        "      - working-directory: ${{ github.workspace }}/${{ env.PKG }}/unit\n        run: pytest\n"
        "      - working-directory: ./python\n        run: pip install .\n"
    )
    root = make_repo({**REPOSITORY, CI: _workflow(steps, top="env: {PKG: python}\n")})
    checkout = (CI, 7, 15, CHECKED_OUT)
    assert _findings(root) == [
        (
            CI,
            9,
            28,
            f"`working-directory: csrc/kernels` of step 'Kernels' is a folder that the repository does not have and "
            f"{FAILS} (did you mean `csrc/kernel`?)",
            [checkout],
        ),
        (
            CI,
            11,
            28,
            "`working-directory: ${{ github.workspace }}/${{ env.PKG }}/unit` of step 'run: pytest' is `python/unit`, "
            f"a folder that the repository does not have and {FAILS}",
            [checkout],
        ),
    ]


def test_a_default_is_reported_once_at_its_value_naming_the_first_step_it_fails(make_repo: MakeRepo) -> None:
    job = "    defaults:\n      run:\n        working-directory: tests/gpu\n"
    steps = CHECKOUT + "      - run: pytest -x\n      - run: pytest --slow\n"
    top = "defaults:\n  run:\n    working-directory: old\n"
    other = "  lint:\n    runs-on: ubuntu-latest\n    steps:\n" + CHECKOUT + "      - run: ruff check\n"
    root = make_repo({**REPOSITORY, CI: _workflow(steps, job, top) + other})
    tail = "that the repository does not have and no step before '{}' makes: that step fails before its script runs"
    assert _findings(root) == [
        (
            CI,
            4,
            24,
            "`defaults.run.working-directory: old` of the workflow is a folder " + tail.format("run: ruff check"),
            [(CI, 18, 15, CHECKED_OUT)],
        ),
        (
            CI,
            10,
            28,
            "`defaults.run.working-directory: tests/gpu` of job 'build' is a folder " + tail.format("run: pytest -x"),
            [(CI, 12, 15, CHECKED_OUT)],
        ),
    ]


@pytest.mark.parametrize(
    "before",
    [
        "      - run: mkdir -p gen/out\n",
        "      - run: git clone https://github.com/o/gen\n",
        "      - run: git init gen && cd gen && git fetch https://github.com/o/gen v1 && git checkout FETCH_HEAD\n",
        "      - uses: actions/cache/restore@v4\n        with: {path: './*', key: k}\n",
        "      - uses: actions/download-artifact@v4\n        with: {name: gen, path: gen}\n",
        "      - run: mkdir -p t && curl -sL https://x/gen.tgz | tar -xz -C t && cp -r t/gen .\n",
        "      - run: unzip -q gen.zip -d gen\n",
        "      - uses: o/generate@v1\n",
        "      - run: python tools/make_gen.py\n",  # the script names the folder (below)
        "      - run: cmake -Bgen -S .\n",  # the step names it, as no option the model reads
        "      - uses: ./.github/actions/gen\n",  # a local action whose file names it
    ],
)
def test_a_folder_an_earlier_step_makes_or_may_make_is_not_judged(make_repo: MakeRepo, before: str) -> None:
    files = {
        **REPOSITORY,
        "tools/make_gen.py": "import os\nos.makedirs('gen/out')\n",
        ".github/actions/gen/action.yml": (
            "name: gen\ndescription: d\nruns:\n  using: composite\n  steps:\n"
            "    - shell: bash\n      run: mkdir -p gen/out\n"
        ),
    }
    root = make_repo(
        {**files, CI: _workflow(CHECKOUT + before + "      - working-directory: gen/out\n        run: ls\n")}
    )
    assert _findings(root, CI) == []
    root = make_repo(
        {**files, CI: _workflow(CHECKOUT + "      - working-directory: gen/out\n        run: ls\n" + before)}
    )
    assert len(_findings(root, CI)) == 1  # made only after the step that needs it


@pytest.mark.parametrize(
    ("directory", "checkout"),
    [
        ("${{ matrix.dir }}", ""),  # unknown until the run
        ("$GITHUB_WORKSPACE/gone", ""),  # a shell variable GitHub does not expand there
        ("build\\\\Release", ""),  # a Windows path
        ("/opt/gone", ""),  # outside the workspace: the runner's
        ("../gone", ""),
        ("Python", ""),  # found on a runner whose file system ignores case
        ("third_party/cutlass/python", ""),  # a submodule's
        ("site", "        with: {ref: gh-pages}\n"),  # another branch's tree
        ("site", "        with: {ref: '${{ inputs.release }}'}\n"),  # maybe another commit's
        ("gone", "        with: {clean: false}\n"),  # what an earlier run left stays
        ("gone", "        with: {repository: o/other}\n"),  # another repository's tree
        ("gone/x", "        with: {path: src}\n"),  # the checkout is elsewhere: nothing put this folder there
    ],
)
def test_a_folder_that_cannot_be_known_or_not_this_repositorys_is_not_judged(
    make_repo: MakeRepo, directory: str, checkout: str
) -> None:
    files = {**REPOSITORY, ".gitmodules": '[submodule "c"]\n\tpath = third_party/cutlass\n\turl = https://x/c\n'}
    steps = CHECKOUT + checkout + f'      - working-directory: "{directory}"\n        run: ls\n'
    assert _findings(make_repo({**files, CI: _workflow(steps)})) == []


def test_a_job_without_a_checkout_or_a_folder_with_no_git_checkout_is_not_judged(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    root = make_repo({CI: _workflow("      - working-directory: gone\n        run: ls\n")})
    assert _findings(root) == []
    copy = tmp_path / "copy"
    (copy / ".github/workflows").mkdir(parents=True)
    (copy / CI).write_text(_workflow(CHECKOUT + "      - working-directory: gone\n        run: ls\n"), encoding="utf-8")
    assert _findings(copy) == []


ACTION = ".github/actions/ext/action.yml"


def _action(*directories: str) -> str:
    steps = "".join(f"    - shell: bash\n      working-directory: {d}\n      run: ls\n" for d in directories)
    return f"name: ext\ndescription: d\nruns:\n  using: composite\n  steps:\n{steps}"


def test_a_composite_action_is_judged_in_its_folder_and_in_the_workspace_of_the_jobs_that_run_it(
    make_repo: MakeRepo,
) -> None:
    steps = CHECKOUT + "      - uses: ./.github/actions/ext\n"
    files = {**REPOSITORY, ACTION: _action("${{ github.action_path }}/helpers", "python/native", "python")}
    root = make_repo({**files, CI: _workflow(steps)})
    assert _findings(root, ACTION) == [
        (
            ACTION,
            7,
            26,
            "`working-directory: ${{ github.action_path }}/helpers` of step 'run: ls' is "
            f"`.github/actions/ext/helpers`, a folder that the repository does not have and {FAILS}",
            [],
        ),
        (
            ACTION,
            10,
            26,
            "`working-directory: python/native` of step 'run: ls' is a folder that the repository does not have and "
            + FAILS,
            [(CI, 6, 15, "the repository is checked out here, before a step runs the action")],
        ),
    ]


@pytest.mark.parametrize(
    "callers",
    [
        {},  # no job runs it: its workspace cannot be known
        {CI: _workflow("      - run: mkdir -p python/native\n" + CHECKOUT + "      - uses: ./.github/actions/ext\n")},
        {
            CI: _workflow(CHECKOUT + "      - uses: ./.github/actions/ext\n"),
            ".github/workflows/other.yml": _workflow(
                "      - uses: actions/checkout@v4\n        with: {repository: o/r}\n"
                "      - uses: ./.github/actions/ext\n"
            ),
        },
        {
            CI: _workflow(CHECKOUT + "      - uses: ./.github/actions/ext\n"),
            ".github/actions/outer/action.yml": (
                "name: outer\ndescription: d\nruns:\n  using: composite\n  steps:\n    - uses: ./.github/actions/ext\n"
            ),
        },
    ],
)
def test_a_composite_actions_workspace_folder_is_judged_only_where_every_caller_is_known_to_lack_it(
    make_repo: MakeRepo, callers: dict[str, str]
) -> None:
    root = make_repo({**REPOSITORY, ACTION: _action("python/native"), **callers})
    assert _findings(root, ACTION) == []


@pytest.mark.parametrize(
    "ref", ["${{ github.sha }}", "${{ github.event.pull_request.head.sha }}", " ${{github.head_ref}} ", ""]
)
def test_a_checkout_of_the_runs_own_commit_is_the_tree_that_is_judged(make_repo: MakeRepo, ref: str) -> None:
    steps = f"      - uses: actions/checkout@v4\n        with: {{ref: '{ref}'}}\n"
    steps += "      - working-directory: gone\n        run: ls\n"
    assert [line for _, line, _, _, _ in _findings(make_repo({**REPOSITORY, CI: _workflow(steps)}))] == [8]
