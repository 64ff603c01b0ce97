"""Compiling a validated policy: what every rule kind and item kind uses to read its part of the file.

The configuration has already passed its schema; compiling checks what a
schema cannot (globs, regular expressions, command patterns, PATHs, values read
from the repository) and raises a `PolicyError` at the exact place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from ci_checks.core.globs import Glob, GlobError, compile_glob, compile_name_glob, compile_ref_glob, literal
from ci_checks.policy.model import Count, Place, StepSelector, Unreadable
from ci_checks.syntax.pysource import ConstantError, constant
from ci_checks.syntax.yamlpos import Plain

LITERAL = {
    "description": "Exactly this text, `*`, `?` and `[` included, instead of a glob.",
    "type": "object",
    "additionalProperties": False,
    "required": ["literal"],
    "properties": {"literal": {"type": "string", "minLength": 1}},
}
GLOB_OR_LITERAL = {"oneOf": [{"type": "string", "minLength": 1}, LITERAL]}
STEP_SELECTOR = {
    "description": "A glob of the step's name or id, {uses, name, id} globs, or {literal: NAME}.",
    "oneOf": [
        {"type": "string", "minLength": 1},
        {
            "type": "object",
            "additionalProperties": False,
            "minProperties": 1,
            "properties": {
                "uses": GLOB_OR_LITERAL,
                "name": GLOB_OR_LITERAL,
                "id": GLOB_OR_LITERAL,
                "literal": {"type": "string", "minLength": 1},
            },
        },
    ],
}
"""How `where.step` and `step:` items select steps."""


def name_glob(value: str | Mapping[str, str], place: Place) -> Glob:
    """A name glob (step name, job id, key), or `{literal: TEXT}` for exactly TEXT."""
    return _glob(value, place, compile_name_glob)


def ref_glob(value: str | Mapping[str, str], place: Place) -> Glob:
    """A glob of `uses:` values, where `/` separates owner, repository and path, or `{literal: TEXT}`."""
    return _glob(value, place, compile_ref_glob)


def _glob(value: str | Mapping[str, str], place: Place, compile_text: Callable[[str], Glob]) -> Glob:
    if not isinstance(value, str):
        return literal(value["literal"])
    try:
        return compile_text(value)
    except GlobError as error:
        raise place.error(f"invalid glob {value!r}: {error}") from None


def path_globs(value: str | Sequence[str], place: Place) -> tuple[Glob, ...]:
    """Repo-relative file path globs: one, or a list."""
    texts = [value] if isinstance(value, str) else list(value)
    globs = []
    for index, text in enumerate(texts):
        try:
            globs.append(compile_glob(text))
        except GlobError as error:
            where = place if isinstance(value, str) else place.at(index)
            raise where.error(f"invalid glob {text!r}: {error}") from None
    return tuple(globs)


def step_selector(raw: str | Mapping[str, Any], place: Place) -> StepSelector:
    if isinstance(raw, str):
        return StepSelector(either=name_glob(raw, place), text=repr(raw))
    if set(raw) == {"literal"}:
        return StepSelector(either=literal(raw["literal"]), text=repr(raw["literal"]))
    parts = [f"{key}: {_shown(raw[key])}" for key in ("uses", "name", "id") if key in raw]
    return StepSelector(
        uses=ref_glob(raw["uses"], place.at("uses")) if "uses" in raw else None,
        name=name_glob(raw["name"], place.at("name")) if "name" in raw else None,
        id=name_glob(raw["id"], place.at("id")) if "id" in raw else None,
        text="{" + ", ".join(parts) + "}",
    )


def _shown(value: str | Mapping[str, str]) -> str:
    return value if isinstance(value, str) else repr(value["literal"])


def count(raw: int | Mapping[str, int], place: Place) -> Count:
    if isinstance(raw, int):
        return Count(raw, raw)
    minimum, maximum = raw.get("min", 0), raw.get("max")
    if maximum is not None and maximum < minimum:
        raise place.error(f"count: max ({maximum}) is less than min ({minimum})")
    return Count(minimum, maximum)


def values(raw: Any, place: Place) -> Plain:
    """A value written in the policy, or read from the repository with `{from: {python: FILE, name: NAME}}`."""
    if isinstance(raw, dict) and set(raw) == {"from"}:
        source = raw["from"]
        named = isinstance(source, dict) and set(source) == {"python", "name"}
        if not named or not all(isinstance(part, str) for part in source.values()):
            raise place.error("`from` takes {python: FILE, name: NAME}: a constant of a Python file", "from")
        return python_constant(source["python"], source["name"], place.at("from"))
    return raw  # type: ignore[no-any-return]


def python_constant(relative: str, name: str, place: Place) -> Plain:
    """`list(NAME)` of a module-level constant of a Python file of the repository, read from its syntax tree and
    never run (`ci_checks.syntax.pysource.constant`); `Unreadable` when the repository does not give it."""
    repository = place.repository
    if repository is None:
        raise place.error("`from` reads a file of the repository, and there is none here")
    try:
        compile_glob(relative)
    except GlobError as error:
        raise place.error(f"invalid path {relative!r}: {error}", "python") from None
    relative = relative.removeprefix("./")
    if not repository.exists(relative):
        raise Unreadable(f"cannot read {name}: {relative!r} does not exist in the repository", place.span("python"))

    def read(path: str) -> str | None:
        found = repository.read(path) if path == relative or repository.exists(path) else None
        return found.text if found is not None and found.problem is None else None

    source = repository.read(relative)
    if source.problem is not None:
        raise Unreadable(f"cannot read {name}: {relative}: {source.problem.message}", place.span("python"))
    try:
        return cast(Plain, constant(read, relative, name))
    except ConstantError as error:
        raise Unreadable(f"cannot read {name}: {error}", place.span("name")) from None
