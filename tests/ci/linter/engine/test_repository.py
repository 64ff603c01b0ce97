"""A `Repository` is fixed when made: its exclusions and documents are given then, and every listing and read
honours them from the first; other exclusions or documents make another repository, and checking one leaves it
as it was made."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ci_checks.core.repository import Repository
from ci_checks.engine.options import Options
from ci_checks.engine.session import Session
from tests.ci.linter.conftest import MakeRepo

STEPS = "on: push\npermissions: {}\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n"
KEPT, OLD, NEW = ".github/workflows/ci.yml", ".github/workflows/old.yml", ".github/workflows/new.yml"
ACTION = "tools/setup/action.yml"


@pytest.fixture
def root(make_repo: MakeRepo) -> Path:
    made: Path = make_repo({KEPT: STEPS, OLD: STEPS, "legacy/action.yml": "name: legacy\n"})
    return made


def test_the_listings_honour_the_exclusions_and_documents_given_when_made(root: Path) -> None:
    documents = {NEW: b"on: push\n", ACTION: b"name: setup\n", KEPT: b"on: pull_request\n"}
    repository = Repository(root, exclude=(OLD, "legacy/**"), documents=documents)
    assert repository.workflows == [KEPT, NEW]
    assert repository.actions == [ACTION]
    assert {NEW, ACTION} <= set(repository.files)
    assert repository.read(KEPT).text == "on: pull_request\n"
    # What was given is copied: changing it afterwards changes nothing the repository reads.
    documents[KEPT] = b"on: push\n"
    del documents[NEW]
    assert repository.read(KEPT).text == "on: pull_request\n" and repository.read(NEW).text == "on: push\n"


def test_a_repository_cannot_be_changed_once_made(root: Path) -> None:
    repository = Repository(root, documents={NEW: b"on: push\n"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        repository.exclude = (OLD,)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        repository.documents = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        repository.documents[KEPT] = b"on: pull_request\n"  # type: ignore[index]
    assert repository.workflows == [KEPT, NEW, OLD]


def test_other_exclusions_or_documents_make_another_repository(root: Path) -> None:
    repository = Repository(root)
    assert repository.workflows == [KEPT, OLD]
    excluding = repository.with_exclude([OLD])
    assert excluding.workflows == [KEPT] and repository.workflows == [KEPT, OLD]
    holding = excluding.with_documents({NEW: b"on: push\n"})
    assert holding.workflows == [KEPT, NEW] and holding.exclude == (OLD,) and excluding.workflows == [KEPT]
    # Another content of the same documents: read as given, listed as before.
    edited = holding.with_documents({NEW: b"on: pull_request\n"})
    assert edited.read(NEW).text == "on: pull_request\n" and holding.read(NEW).text == "on: push\n"
    assert edited.workflows == [KEPT, NEW]
    assert holding.with_documents({}).workflows == [KEPT]


def test_checking_leaves_the_sessions_repository_as_it_was_made(root: Path) -> None:
    (root / ".github" / "ci-checks.yml").write_text("exclude: [.github/workflows/old.yml]\n")
    session = Session(Options(backends=[], no_cache=True), [root], {root / NEW: STEPS.encode()})
    [(repository, _)] = session.groups.values()
    checked = session.check()
    assert NEW in checked.checked and OLD not in checked.checked
    assert repository.exclude == () and repository.workflows == [KEPT, NEW, OLD]
