"""The places `run:` scripts read: which commands name them, relative to which folder."""

from __future__ import annotations

import pytest

from ci_checks.model.files.flow import Flow, Walker
from ci_checks.model.files.places import WORKSPACE, Place, Scope
from ci_checks.model.references import Reference
from ci_checks.syntax.shell import parse_fragment


def _references(script: str, start: str | None = "") -> list[Reference]:
    flow = Flow()
    Walker(flow, None).script(parse_fragment(script), Scope(Place(WORKSPACE, start) if start is not None else None))
    return [read.reference for read in flow.reads]


def _found(script: str, start: str | None = "") -> list[tuple[str, str | None, str]]:
    return [(r.kind, r.place.path, r.place.base) for r in _references(script, start) if not r.place.outside]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("bash scripts/x.sh --fast", [("script", "scripts/x.sh", "workspace")]),
        ("sudo -E bash -eo pipefail ci/run.sh", [("script", "ci/run.sh", "workspace")]),
        ("bash -c 'make all'", [("make", "", "workspace")]),  # `-c` names no script file; its script reads
        ("python3 -u -W ignore tools/y.py", [("script", "tools/y.py", "workspace")]),
        ("python -m pytest tests", []),
        ("python -m pip install -r req.txt", [("requirements", "req.txt", "workspace")]),
        (
            "./run.sh && source env/setup.sh",
            [("script", "run.sh", "workspace"), ("script", "env/setup.sh", "workspace")],
        ),
        ("source activate base", []),
        (
            "git apply --check -p1 a.patch b.patch",
            [("patch", "a.patch", "workspace"), ("patch", "b.patch", "workspace")],
        ),
        ("git -C other apply a.patch", [("patch", "other/a.patch", "workspace")]),
        ("git --work-tree=x apply a.patch", []),
        ("git am --3way series/0001.patch", [("patch", "series/0001.patch", "workspace")]),
        (
            "patch -p1 -i fix.patch; patch -p1 < other.diff",
            [("patch", "fix.patch", "workspace"), ("patch", "other.diff", "workspace")],
        ),
        ("patch --input=fix.patch", [("patch", "fix.patch", "workspace")]),
        (
            "docker build -t x:1 --build-arg A=b -f docker/Dockerfile docker",
            [("dockerfile", "docker/Dockerfile", "workspace"), ("context", "docker", "workspace")],
        ),
        (
            "docker buildx build --push --file=Dockerfile.rocm .",
            [("dockerfile", "Dockerfile.rocm", "workspace"), ("context", "", "workspace")],
        ),
        (
            'pip install -e ".[dev]" -c constraints.txt',
            [("install", "", "workspace"), ("requirements", "constraints.txt", "workspace")],
        ),
        ("make -C build", []),
        ('bash "$GITHUB_WORKSPACE/ci/x.sh"', [("script", "ci/x.sh", "workspace")]),
        ("bash ${{ github.workspace }}/ci/x.sh", [("script", "ci/x.sh", "workspace")]),
        ('bash "$GITHUB_ACTION_PATH/setup.sh"', [("script", "setup.sh", "action")]),
        (
            'bash "$SCRIPTS/x.sh"; bash ~/x.sh; bash /opt/x.sh; bash scripts/*.sh',
            [("script", "x.sh", "home"), ("script", "opt/x.sh", "root"), ("script", "scripts/*.sh", "workspace")],
        ),
        ("python3 - <<'PY'\nprint(1)\nPY\npython3 - arg <<PY\nx\nPY\nbash -s < x.sh; cat - | python -", []),
        (
            "pip install -e python --no-deps; pip install ./x foo 'bar>=1' dist/a.whl",
            [("install", "python", "workspace"), ("install", "x", "workspace")],
        ),
        (
            "python setup.py develop; make install; cmake --install build",
            [
                ("script", "setup.py", "workspace"),
                ("install", "", "workspace"),
                ("make", "", "workspace"),
                ("install", "", "workspace"),
                ("install", "build", "workspace"),
            ],
        ),
    ],
)
def test_commands_that_read_repository_paths(script: str, expected: list[tuple[str, str | None, str]]) -> None:
    assert _found(script) == expected


def test_paths_follow_the_working_directory_and_the_scripts_own_cd() -> None:
    script = "bash a.sh\ncd sub && bash b.sh\ncd ..\nbash c.sh\nif true; then cd elsewhere; fi\nbash d.sh\n"
    assert _found(script, "python") == [
        ("script", "python/a.sh", "workspace"),
        ("cd", "python/sub", "workspace"),
        ("script", "python/sub/b.sh", "workspace"),
        ("cd", "python", "workspace"),
        ("script", "python/c.sh", "workspace"),
        ("cd", "python/elsewhere", "workspace"),
    ]


def test_a_cd_out_of_the_workspace_moves_relative_paths_there() -> None:
    assert _found("cd /opt/Megatron-LM\npip install -e .\nbash $GITHUB_WORKSPACE/x.sh\n") == [
        ("cd", "opt/Megatron-LM", "root"),
        ("install", "opt/Megatron-LM", "root"),
        ("script", "x.sh", "workspace"),
    ]


def test_a_path_above_the_workspace_is_marked_outside() -> None:
    (found,) = _references("bash ../../setup.sh", "ci")
    assert (found.place.path, found.place.outside) == ("../setup.sh", True)
