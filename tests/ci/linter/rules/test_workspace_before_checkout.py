"""CC040 workspace-before-checkout on small workflows: whole messages, positions and related locations."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ci.linter.conftest import MakeRepo, run_cli

Finding = tuple[str, int, int, str, list[tuple[int, int, str]]]


def _findings(root: Path) -> list[Finding]:
    """Each CC040 finding (and each file's syntax error, which no selection drops): path, line, column, message,
    and the line, column and message of each related location."""
    result = run_cli("check", root, "--select", "CC040", "--output-format", "json")
    return [
        (
            d["path"],
            d["line"],
            d["column"],
            d["message"],
            [(r["line"], r["column"], r["message"]) for r in d.get("related", [])],
        )
        for d in json.loads(result.out)["diagnostics"]
    ]


def _workflow(steps: str) -> str:
    """A workflow whose job `build` has these steps (YAML indented by six spaces); its steps start on line 6."""
    return f"on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"


CI = ".github/workflows/ci.yml"
BEFORE = "before `actions/checkout` puts the repository in the workspace"


def test_each_use_before_a_late_checkout_names_the_checkout_and_the_checkout_names_each_use(
    make_repo: MakeRepo,
) -> None:
    # Entering the workspace itself needs no file of the repository; a step after the checkout is not judged.
    steps = (
        '      - run: cd "$GITHUB_WORKSPACE" && cd python\n'
        "      - uses: ./.github/actions/setup\n"
        "      - run: pip install -r requirements.txt -e .\n"
        "      - run: make\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: bash scripts/after.sh\n"
    )
    root = make_repo({CI: _workflow(steps)})
    here = (10, 15, "the repository is checked out only here")
    assert _findings(root) == [
        (CI, 6, 43, f"`cd python` enters `python` {BEFORE}", [here]),
        (CI, 7, 15, f"`uses: ./.github/actions/setup` runs a local action {BEFORE}", [here]),
        (CI, 8, 29, f"`pip install -r requirements.txt -e .` installs from `requirements.txt` {BEFORE}", [here]),
        (CI, 8, 49, f"`pip install -r requirements.txt -e .` installs the repository {BEFORE}", [here]),
        (CI, 9, 14, f"`make` runs the Makefile in the repository {BEFORE}", [here]),
        (
            CI,
            10,
            15,
            "`actions/checkout` comes after 5 uses of the repository's files in job 'build'; move it before them",
            [
                (6, 43, "`cd python` enters `python`, before the checkout"),
                (7, 15, "`uses: ./.github/actions/setup` runs a local action, before the checkout"),
                (8, 29, "`pip install -r requirements.txt -e .` installs from `requirements.txt`, before the checkout"),
                (8, 49, "`pip install -r requirements.txt -e .` installs the repository, before the checkout"),
                (9, 14, "`make` runs the Makefile in the repository, before the checkout"),
            ],
        ),
    ]


def test_make_and_install_in_a_working_directory_name_that_folder(make_repo: MakeRepo) -> None:
    steps = "      - working-directory: csrc\n        run: pip install . && make\n"
    root = make_repo({CI: _workflow(steps)})
    never = "but job 'build' never checks the repository out"
    assert _findings(root) == [
        (CI, 7, 26, f"`pip install .` installs `csrc`, {never}", []),
        (CI, 7, 31, f"`make` runs the Makefile in `csrc`, {never}", []),
    ]


def test_a_command_longer_than_sixty_characters_is_cut_to_fifty_seven_and_an_ellipsis(make_repo: MakeRepo) -> None:
    sixty = "bash scripts/" + "a" * 44 + ".sh"
    sixty_one = "bash scripts/" + "b" * 45 + ".sh"
    assert (len(sixty), len(sixty_one)) == (60, 61)
    root = make_repo({CI: _workflow(f"      - run: {sixty}\n      - run: {sixty_one}\n")})
    never = "but job 'build' never checks the repository out"
    assert _findings(root) == [
        (CI, 6, 19, f"`{sixty}` runs `{sixty[5:]}`, {never}", []),
        (CI, 7, 19, f"`{sixty_one[:57]}...` runs `{sixty_one[5:]}`, {never}", []),
    ]


def test_a_folder_something_was_written_inside_is_there_for_cd_and_a_local_action(make_repo: MakeRepo) -> None:
    steps = (
        "      - run: mkdir -p build/out && cd build\n"
        "      - run: echo '{}' > .github/actions/made/action.yml\n"
        "      - uses: ./.github/actions/made\n"
        "      - run: cd python\n"
        "      - uses: ./.github/actions/setup\n"
        "      - uses: actions/checkout@v4\n"
    )
    root = make_repo({CI: _workflow(steps)})
    assert [(line, column, message) for _, line, column, message, _ in _findings(root)] == [
        (9, 17, f"`cd python` enters `python` {BEFORE}"),
        (10, 15, f"`uses: ./.github/actions/setup` runs a local action {BEFORE}"),
        (11, 15, "`actions/checkout` comes after 2 uses of the repository's files in job 'build'; move it before them"),
    ]


def test_a_workflow_that_does_not_parse_leaves_the_next_one_judged(make_repo: MakeRepo) -> None:
    later = ".github/workflows/later.yml"
    root = make_repo(
        {".github/workflows/broken.yml": "on: push\njobs: [\n", later: _workflow("      - run: bash scripts/x.sh\n")}
    )
    assert _findings(root) == [
        (".github/workflows/broken.yml", 2, 8, "did not find expected node content (while parsing a flow node)", []),
        (later, 6, 19, "`bash scripts/x.sh` runs `scripts/x.sh`, but job 'build' never checks the repository out", []),
    ]


def test_a_reusable_workflow_call_is_not_judged_even_with_steps(make_repo: MakeRepo) -> None:
    text = (
        "on: push\njobs:\n"
        "  call:\n    uses: ./.github/workflows/called.yml\n    steps:\n      - run: bash scripts/x.sh\n"
        "  idle:\n    runs-on: ubuntu-latest\n"
        "  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: bash scripts/y.sh\n"
    )
    root = make_repo({CI: text})
    assert _findings(root) == [
        (CI, 12, 19, "`bash scripts/y.sh` runs `scripts/y.sh`, but job 'test' never checks the repository out", [])
    ]


def test_a_path_above_the_workspace_is_not_the_repositorys(make_repo: MakeRepo) -> None:
    steps = "      - run: bash ../tools/x.sh && cd ../other && bash scripts/y.sh\n      - run: bash scripts/z.sh\n"
    root = make_repo({CI: _workflow(steps)})
    assert _findings(root) == [
        (CI, 7, 19, "`bash scripts/z.sh` runs `scripts/z.sh`, but job 'build' never checks the repository out", [])
    ]


def test_a_workspace_restored_unpacked_or_fetched_into_a_new_repository_is_no_use_before_a_checkout(
    make_repo: MakeRepo,
) -> None:
    """What a cache restore (to a glob), an artifact download, an archive unpacked (read from a pipe, `-C` after
    it), `git init DIR` filled by a fetch, or `git worktree add` put in the workspace is not the repository's; a
    path no pattern of the restore matches still is."""
    steps = (
        "      - uses: actions/cache/restore@v4\n"
        "        with: {path: ./*, key: ws}\n"
        "      - run: bash scripts/build.sh && cd python\n"
        "      - uses: actions/download-artifact@v4\n"
        "        with: {pattern: wheels-*, merge-multiple: true, path: dist}\n"
        "      - run: pip install dist/*.whl && bash dist/check.sh\n"
        "      - run: curl -sL https://example.com/a.tgz | tar -xz -C deps && bash deps/setup.sh\n"
        "      - run: tar xf b.tar -C tools some/path && unzip -q c.zip -d kit && bash tools/x.sh kit/y.sh\n"
        "      - run: |\n"
        "          git init vllm && cd vllm\n"
        "          git fetch https://github.com/o/vllm v1 && git checkout FETCH_HEAD\n"
        "          bash tools/build.sh\n"
        "      - working-directory: vllm\n"
        "        run: bash tools/test.sh\n"
        "      - run: git worktree add wt && bash wt/scripts/x.sh\n"
    )
    root = make_repo({CI: _workflow(steps)})
    assert _findings(root) == []
    restored_elsewhere = "      - uses: actions/cache@v4\n        with: {path: 'build/*', key: b}\n"
    root = make_repo({CI: _workflow(restored_elsewhere + "      - run: bash scripts/x.sh && cd build/out\n")})
    never = "but job 'build' never checks the repository out"
    assert _findings(root) == [(CI, 8, 19, f"`bash scripts/x.sh` runs `scripts/x.sh`, {never}", [])]


def test_a_folder_docker_mounts_is_no_use_of_the_repository(make_repo: MakeRepo) -> None:
    """`docker run -v ./out:/out` may mount a folder for the container's output: missing-mount-source judges it."""
    steps = "      - run: docker run -v ./out:/out --mount type=bind,source=$PWD/cfg,target=/cfg img && bash x.sh\n"
    root = make_repo({CI: _workflow(steps)})
    assert _findings(root) == [
        (CI, 6, 97, "`bash x.sh` runs `x.sh`, but job 'build' never checks the repository out", [])
    ]
