"""The Rust validator that lets a valid configuration skip the explaining one never changes a verdict.

Every policy of README and of the benchmark, and thousands of variants of them
with a key added, removed or given a value of another type at every place,
are read twice: with the fast validator first, as ci-checks runs, and with the
explaining validator alone. Each must be accepted by both or rejected by both
with the same message at the same place.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ci_checks.config import load as config
from ci_checks.core.config_files import ConfigError
from ci_checks.core.repository import Repository
from ci_checks.core.source import SourceFile
from ci_checks.policy import validation
from tests.ci.conftest import PROJECT
from tests.ci.linter.project.test_readme import REPOSITORY, _examples

README_POLICIES = _examples("policy holds")
BENCH_POLICY = (PROJECT / "bench" / "speed-policy.yml").read_text(encoding="utf-8")
POLICIES = [*README_POLICIES, BENCH_POLICY]
OTHER_VALUES: list[object] = [None, 7, True, "", "x\n", [], {"x": 1}]


def _variants(data: object) -> Iterator[object]:
    """`data` with one change at one place: a key added or removed, or a value replaced by one of another type."""
    if isinstance(data, dict):
        yield {**data, "unknown-key": 1}
        for key in data:
            yield {k: v for k, v in data.items() if k != key}
            for value in OTHER_VALUES:
                yield {**data, key: value}
            for variant in _variants(data[key]):
                yield {**data, key: variant}
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield data[:index] + data[index + 1 :]
            for value in OTHER_VALUES[:4]:
                yield [*data[:index], value, *data[index + 1 :]]
            for variant in _variants(item):
                yield [*data[:index], variant, *data[index + 1 :]]


def _verdict(text: str, repository: Repository) -> object:
    try:
        parsed = config.parse(SourceFile(".github/ci-checks.yml", text), repository)
    except ConfigError as error:
        return ("rejected", error.message, error.span)
    return ("accepted", [rule.id for rule in parsed.rules])


def _policy_id(text: str) -> str:
    return text.split("id: ", 1)[-1].split("\n", 1)[0]


@pytest.mark.parametrize(
    "policy",
    # README's policies (2,700 variants, about 30 CPU-seconds) in a thorough run; the benchmark's, the largest
    # (830 variants), in every run.
    [*(pytest.param(text, marks=pytest.mark.thorough, id=_policy_id(text)) for text in README_POLICIES), BENCH_POLICY],
    ids=_policy_id,
)
def test_the_fast_validator_never_changes_a_verdict(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repository = Repository(REPOSITORY)
    data = yaml.safe_load(policy)
    # Written with libyaml's emitter: PyYAML's own takes as long as the two readings together.
    variants = _variants(copy.deepcopy(data))
    texts = [policy, *(yaml.dump(variant, Dumper=yaml.CSafeDumper, sort_keys=False) for variant in variants)]
    fast = [_verdict(text, repository) for text in texts]
    with monkeypatch.context() as patched:
        patched.setattr(validation, "_accepted", lambda data, schema: False)
        explained = [_verdict(text, repository) for text in texts]
    assert fast == explained
    assert fast[0][0] == "accepted"  # type: ignore[index]
    assert any(verdict[0] == "rejected" for verdict in fast)  # type: ignore[index]


def test_the_fast_validator_is_what_accepts_a_valid_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The explaining validator is not even imported for a policy the fast one accepts."""
    calls: list[bool] = []
    real = validation._accepted

    def counted(data: object, schema: object) -> bool:
        calls.append(real(data, schema))  # type: ignore[arg-type]
        return calls[-1]

    monkeypatch.setattr(validation, "_accepted", counted)
    _verdict(POLICIES[-1], Repository(Path(REPOSITORY)))
    assert calls and all(calls)


def test_a_one_of_that_fails_because_two_shapes_fit_is_said_of_the_whole_value() -> None:
    """No choice has an error of its own to say (two of them take the value): the value's shape is said."""
    schema = {"oneOf": [{"type": "object"}, {"required": ["name"]}]}
    assert validation.first_error({"name": "x"}, schema) == ("the configuration: must be a mapping", [], False)
    assert validation.first_error({"other": "x"}, schema) is None
