"""The validators: each built once per process, a fast one for every document and an explaining one for the rest.

Where every alternative of a `oneOf` accepts a different JSON type, at most
one can match, so the loaded copy says `anyOf` instead: the result is the
same and validation stops at the first alternative that fits.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, cast

import jsonschema_rs

from ci_checks.core.diagnostics import Span
from ci_checks.core.repository import FileKind
from ci_checks.model import reading
from ci_checks.model.reading import github_string
from ci_checks.rules.schema.checks import CHECKS
from ci_checks.rules.schema.messages import SchemaError, explain
from ci_checks.rules.schema.overrides import OVERRIDES, clarify_action_schema
from ci_checks.rules.schema.vendored import SCHEMA_FILES, Schema, SchemaUnavailable, vendor_directory
from ci_checks.syntax.yamlpos import Document, IssueKind, Mapping, Plain, to_plain

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError


def _types(alternative: Schema, definitions: Schema) -> set[str] | None:
    ref = alternative.get("$ref", "")
    if ref.startswith("#/definitions/"):
        alternative = definitions.get(ref[len("#/definitions/") :], {})
    declared = alternative.get("type")
    if declared is None:
        return None
    types = {declared} if isinstance(declared, str) else set(declared)
    return types | {"integer"} if "number" in types else types


def _disjoint_one_of_to_any_of(node: object, definitions: Schema) -> None:
    if isinstance(node, list):
        for item in node:
            _disjoint_one_of_to_any_of(item, definitions)
        return
    if not isinstance(node, dict):
        return
    alternatives = node.get("oneOf")
    if isinstance(alternatives, list) and "anyOf" not in node:
        types = [_types(a, definitions) if isinstance(a, dict) else None for a in alternatives]
        known = [t for t in types if t is not None]
        if len(known) == len(types) and sum(map(len, known)) == len(set().union(*known)):
            node["anyOf"] = node.pop("oneOf")
    for value in node.values():
        _disjoint_one_of_to_any_of(value, definitions)


def _as_string_holds(validator: jsonschema.Draft7Validator, text: str, schema: Schema) -> bool:
    constraints = {key: schema[key] for key in ("minLength", "maxLength", "pattern", "enum", "const") if key in schema}
    return validator.evolve(schema=constraints).is_valid(text)


def _github_type(
    validator: jsonschema.Draft7Validator, types: object, instance: object, schema: Schema
) -> Iterator[ValidationError]:
    wanted = cast(list[str], types if isinstance(types, list) else [types])
    if any(validator.is_type(instance, kind) for kind in wanted):
        return
    scalar = instance is None or isinstance(instance, bool | int | float)
    if "string" in wanted and scalar and _as_string_holds(validator, github_string(cast(Plain, instance)), schema):
        return
    from jsonschema.exceptions import ValidationError

    yield ValidationError(f"{instance!r} is not of type {', '.join(map(repr, wanted))}")


def _strict_type(
    validator: jsonschema.Draft7Validator, kind: str, instance: object, schema: Schema
) -> Iterator[ValidationError]:
    """A type GitHub checks without reading scalars as text (an input's default)."""
    if not validator.is_type(instance, kind):
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance!r} is not of type {kind!r}")


@cache
def validator(kind: FileKind) -> jsonschema.Draft7Validator:
    """The explaining validator: only documents the fast pass rejects need it, so it is imported for them."""
    import jsonschema

    extended = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        jsonschema.Draft7Validator, {"type": _github_type, "strictType": _strict_type}
    )
    return cast(jsonschema.Draft7Validator, extended(_schema(kind)))


@cache
def _fast(kind: FileKind) -> jsonschema_rs.Draft7Validator:
    """The same schema in a validator written in Rust, with every type strict: it accepts less than `validator`.

    Reading a scalar as text where GitHub wants one (`run: true`) is the one
    thing `validator` accepts beyond plain JSON Schema; here `type` is plain
    and `strictType` is `type`, so a document this accepts, `validator`
    accepts too, and only the others need the slow, explaining pass.
    """
    return jsonschema_rs.Draft7Validator(cast(Schema, _strict(_schema(kind))), validate_formats=False)


def _as_github_reads(value: object, path: tuple[str | int, ...] = ()) -> object:
    """The document with each scalar as text where GitHub reads it as text (`model.reading`), for `_fast`.

    A scalar is text to the slow pass where the schema wants text and its text
    form fits; turning it into that text lets the strict pass agree. Where the
    schema wants something else, the text fails the strict pass and the slow
    one decides, so the fast pass never accepts what the slow one would not. A reusable workflow's inputs
    keep their YAML type, but the schema wants text for them, which is how the slow pass reads a scalar there:
    so they are text here too.
    """
    if isinstance(value, dict):
        return {key: _as_github_reads(item, (*path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_github_reads(item, (*path, index)) for index, item in enumerate(value)]
    if value is None or isinstance(value, str) or (reading.is_typed(path) and not reading.is_call_input(path)):
        return value  # a null stays one: where GitHub wants text, the slow pass judges the empty text
    return github_string(cast(Plain, value))


def _strict(node: object) -> object:
    if isinstance(node, dict):
        strict = {key: _strict(value) for key, value in node.items() if key != "strictType"}
        if "strictType" in node:
            strict["type"] = node["strictType"]
        return strict
    if isinstance(node, list):
        return [_strict(item) for item in node]
    return node


@cache
def _schema(kind: FileKind) -> Schema:
    path = vendor_directory() / SCHEMA_FILES[kind]
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SchemaUnavailable(f"cannot read {path.name} from check-jsonschema: {error.strerror}") from None
    schema = copy.deepcopy(schema)
    if kind is FileKind.WORKFLOW:
        for override in OVERRIDES:
            if override.apply is not None:
                override.apply(schema)
    else:
        clarify_action_schema(schema)
    _disjoint_one_of_to_any_of(schema, schema.get("definitions", {}))
    return cast(Schema, schema)


def validate(document: Document, kind: FileKind) -> list[SchemaError]:
    """Schema violations and GitHub's further checks; none for a document GitHub would not read as ci-checks does.

    That is a document with YAML features GitHub does not support (merge keys,
    custom tags): it is reported once for those, not again for their effects.
    """
    root = document.root
    if root is None or not document.usable or any(i.kind is IssueKind.UNSUPPORTED for i in document.issues):
        return []
    instance = to_plain(root)
    found: dict[Span, SchemaError] = {}
    valid = _fast(kind).is_valid(_as_github_reads(instance))
    for error in () if valid else validator(kind).iter_errors(instance):
        for explained in explain(root, error):
            # A value reached through several aliases is one mistake, reported where it is written.
            found.setdefault(explained.span, explained)
    if kind is FileKind.WORKFLOW and isinstance(root, Mapping):
        for check in CHECKS:
            for explained in check.run(root):
                found.setdefault(explained.span, explained)
    return list(found.values())
