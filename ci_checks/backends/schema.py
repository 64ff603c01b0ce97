"""JSON-schema validation of workflows and composite actions.

The SchemaStore schemas come from the `check-jsonschema` package, which ships
and updates them as package data (`builtin_schemas/vendor`, Apache-2.0). Only
the files are read: importing its CLI would cost more than the validation.
Each validator is built once per process.

A few shapes that GitHub accepts are rejected by those schemas; they are
relaxed here, in the loaded copy, so no rule has to filter findings:

- `strategy` without `matrix` (e.g. only `fail-fast: false`);
- `branches`, `branches-ignore`, `tags`, `tags-ignore`, `paths` and
  `paths-ignore` given as one string instead of a list.

Where every alternative of a `oneOf` accepts a different JSON type, at most
one can match, so the loaded copy says `anyOf` instead: the result is the
same and validation stops at the first alternative that fits (about a quarter
less time on real workflows).

One constraint is restated so that its violations can be explained: a
composite-action step must have `run` or `uses` but not both, and `run` needs
`shell`. The action schema says this with a oneOf whose failure reads "valid
under each of ..."; the equivalent if/then, not and anyOf say which key is
missing.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import jsonschema
from jsonschema.exceptions import ValidationError

from ci_checks.diagnostics import Span
from ci_checks.repository import FileKind
from ci_checks.yamlpos import Document, IssueKind, Mapping, Node, Scalar, node_at, to_plain

SCHEMA_FILES = {FileKind.WORKFLOW: "github-workflows.json", FileKind.ACTION: "github-actions.json"}


class SchemaUnavailable(RuntimeError):
    pass


def vendor_directory() -> Path:
    spec = importlib.util.find_spec("check_jsonschema")
    if spec is None or not spec.submodule_search_locations:
        raise SchemaUnavailable("the check-jsonschema package, which ships the GitHub schemas, is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "builtin_schemas" / "vendor"


def _relax_workflow_schema(schema: dict[str, Any]) -> None:
    definitions = schema["definitions"]
    for job in ("normalJob", "reusableWorkflowCallJob"):
        strategy = definitions[job]["properties"]["strategy"]
        strategy.pop("required", None)
    globs = definitions["globs"]
    definitions["globs"] = {"anyOf": [{"type": "string", "minLength": 1}, globs]}


def _types(alternative: dict[str, Any], definitions: dict[str, Any]) -> set[str] | None:
    ref = alternative.get("$ref", "")
    if ref.startswith("#/definitions/"):
        alternative = definitions.get(ref[len("#/definitions/") :], {})
    declared = alternative.get("type")
    if declared is None:
        return None
    types = {declared} if isinstance(declared, str) else set(declared)
    return types | {"integer"} if "number" in types else types


def _disjoint_one_of_to_any_of(node: object, definitions: dict[str, Any]) -> None:
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


def _clarify_action_schema(schema: dict[str, Any]) -> None:
    step = schema.get("definitions", {}).get("runs-composite", {}).get("properties", {}).get("steps", {}).get("items")
    if not isinstance(step, dict) or "oneOf" not in step:
        return
    del step["oneOf"]
    step["allOf"] = [
        {"if": {"required": ["run"]}, "then": {"required": ["shell"]}},
        {"not": {"required": ["run", "uses"]}},
        {"anyOf": [{"required": ["run"]}, {"required": ["uses"]}]},
    ]


@cache
def validator(kind: FileKind) -> jsonschema.Draft7Validator:
    path = vendor_directory() / SCHEMA_FILES[kind]
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SchemaUnavailable(f"cannot read {path.name} from check-jsonschema: {error.strerror}") from None
    schema = copy.deepcopy(schema)
    if kind is FileKind.WORKFLOW:
        _relax_workflow_schema(schema)
    else:
        _clarify_action_schema(schema)
    _disjoint_one_of_to_any_of(schema, schema.get("definitions", {}))
    return jsonschema.Draft7Validator(schema)


@dataclass(frozen=True)
class SchemaError:
    message: str
    span: Span


def validate(document: Document, kind: FileKind) -> list[SchemaError]:
    """Schema violations; none for a document that GitHub would not read the way ci-checks does.

    That is a document with YAML features GitHub does not support (merge keys,
    custom tags): it is reported once for those, not again for their effects.
    """
    root = document.root
    if root is None or not document.usable or any(i.kind is IssueKind.UNSUPPORTED for i in document.issues):
        return []
    instance = to_plain(root)
    found: dict[Span, SchemaError] = {}
    for error in validator(kind).iter_errors(instance):
        for explained in _explain(root, error):
            # A value reached through several aliases is one mistake, reported where it is written.
            found.setdefault(explained.span, explained)
    return list(found.values())


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a sequence",
    "string": "a string",
    "boolean": "a boolean",
    "number": "a number",
    "integer": "an integer",
    "null": "null",
}


def _type_of(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "string"


def _where(path: list[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


def _expected(error: ValidationError) -> Any:
    return cast(Any, error.validator_value)


def _subschema(error: ValidationError) -> dict[str, Any]:
    return cast(dict[str, Any], error.schema)


def _instance(error: ValidationError) -> Any:
    return cast(Any, error.instance)


def _accepts(error: ValidationError, instance_type: str) -> bool:
    expected = _expected(error)
    types = expected if isinstance(expected, list) else [expected]
    return instance_type in types or (instance_type == "integer" and "number" in types)


def _branches(error: ValidationError) -> list[list[ValidationError]]:
    """The failures of each alternative of a oneOf/anyOf, in the schema's order."""
    groups: dict[int, list[ValidationError]] = {}
    for sub in error.context or ():
        groups.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    return [groups[index] for index in sorted(groups)]


def _wrong_type(branch: list[ValidationError], instance_type: str) -> bool:
    """Whether an alternative wants a different type at the value itself."""
    return any(e.validator == "type" and not e.relative_path and not _accepts(e, instance_type) for e in branch)


def _fit(branch: list[ValidationError]) -> tuple[int, int, int]:
    """How badly an alternative fits (lower is better): undeclared keys, missing keys, all errors."""
    unexpected = 0
    missing = 0
    for e in branch:
        if e.relative_path:
            continue
        if e.validator == "additionalProperties" and isinstance(_instance(e), dict):
            unexpected += sum(1 for key in _instance(e) if _is_extra(e, key))
        elif e.validator == "required":
            missing += 1
    return unexpected, missing, len(branch)


def _wanted(branch: list[ValidationError]) -> str | None:
    """What a scalar-level alternative asks for, in words; None when it fails deeper inside the value."""
    words = []
    for e in branch:
        if e.relative_path:
            return None
        if e.validator == "type":
            expected = _expected(e) if isinstance(_expected(e), list) else [_expected(e)]
            words.append(" or ".join(_TYPE_NAMES.get(t, t) for t in expected))
        elif e.validator == "pattern" and "${{" in str(_expected(e)).replace("\\", ""):
            words.append("an ${{ }} expression")
        elif e.validator == "enum":
            words.append("one of " + _listed(_expected(e)))
        elif e.validator == "const":
            words.append(_shown(_expected(e)))
        else:
            return None
    return words[-1] if words else None


def _listed(options: list[object]) -> str:
    names = [str(option) for option in options]
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")


def _explain(root: Node, error: ValidationError) -> Iterator[SchemaError]:
    path = list(error.absolute_path)
    node, key = node_at(root, path)
    where = _where(path)
    validator_name = error.validator
    if validator_name in ("oneOf", "anyOf") and error.context:
        instance_type = _type_of(_instance(error))
        branches = _branches(error)
        fitting = [b for b in branches if not _wrong_type(b, instance_type)]
        wanted = [_wanted(b) for b in branches]
        if all(len(b) == 1 and b[0].validator == "required" and not b[0].relative_path for b in branches):
            names = " or ".join(repr(name) for b in branches for name in _expected(b[0]))
            yield SchemaError(f"missing required key: one of {names} at {where}", _key_or_start(node, key))
            return
        if not fitting or all(w is not None for w in wanted):
            described = " or ".join(dict.fromkeys(w for w in wanted if w))
            found = _TYPE_NAMES[instance_type] if not isinstance(_instance(error), str) else _shown(_instance(error))
            yield SchemaError(f"expected {described or 'another value'} at {where}, found {found}", node.span)
            return
        for sub in min(fitting, key=_fit):
            yield from _explain(root, sub)
        return
    if validator_name == "additionalProperties" and isinstance(node, Mapping):
        allowed = sorted(_subschema(error).get("properties", {}))
        for item_key, _ in node.items():
            if item_key.value in _instance(error) and _is_extra(error, item_key.value):
                close = difflib.get_close_matches(item_key.value, allowed, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                yield SchemaError(f"unknown key {item_key.value!r} at {where}{hint}", item_key.span)
        return
    if validator_name == "not" and set(_expected(error)) == {"required"}:
        names = " and ".join(repr(name) for name in _expected(error)["required"])
        yield SchemaError(f"{names} cannot be used together at {where}", _key_or_start(node, key))
        return
    if validator_name == "required":
        anchor = _key_or_start(node, key)
        missing = [name for name in _expected(error) if name not in (_instance(error) or {})]
        names = ", ".join(repr(name) for name in missing)
        yield SchemaError(f"missing required key {names} at {where}", anchor)
        return
    if validator_name == "type":
        expected = _expected(error) if isinstance(_expected(error), list) else [_expected(error)]
        words = " or ".join(_TYPE_NAMES.get(t, t) for t in expected)
        yield SchemaError(f"expected {words} at {where}, found {_TYPE_NAMES[_type_of(_instance(error))]}", node.span)
        return
    if validator_name == "enum":
        options = [str(option) for option in _expected(error)]
        close = difflib.get_close_matches(str(_instance(error)), options, n=1, cutoff=0.6)
        if close:
            message = f"{_shown(_instance(error))} is not a known value at {where} (did you mean {close[0]!r}?)"
        else:
            message = f"{_shown(_instance(error))} is not one of {_listed(_expected(error))} at {where}"
        yield SchemaError(message, node.span)
        return
    if validator_name in ("minItems", "minProperties", "minLength"):
        yield SchemaError(f"{where} must not be empty", node.span)
        return
    if validator_name == "pattern":
        yield SchemaError(f"{_shown(_instance(error))} does not have the expected form at {where}", node.span)
        return
    yield SchemaError(f"{error.message} at {where}", node.span)


def _key_or_start(node: Node, key: Scalar | None) -> Span:
    """Where to report a problem with a whole mapping: its key, else its first character."""
    return key.span if key is not None else Span.point(node.span.path, node.span.line, node.span.column)


def _is_extra(error: ValidationError, name: str) -> bool:
    schema = _subschema(error)
    if name in schema.get("properties", {}):
        return False
    return not any(re.search(pattern, name) for pattern in schema.get("patternProperties", {}))


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
