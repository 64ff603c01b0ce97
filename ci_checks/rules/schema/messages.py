"""Messages: how a jsonschema error becomes one positioned message, said as a person would.

"step has both `uses` and `run`; a step is either an action or a script", at
the second of the two keys.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ci_checks.core.diagnostics import Related, Span
from ci_checks.rules.schema.vendored import Schema
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, node_at

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError


@dataclass(frozen=True)
class SchemaError:
    message: str
    span: Span
    related: tuple[Related, ...] = ()


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


def _subschema(error: ValidationError) -> Schema:
    return cast(Schema, error.schema)


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


def _is_type_error(error: ValidationError) -> bool:
    return error.validator in ("type", "strictType")


def _wrong_type(branch: list[ValidationError], instance_type: str) -> bool:
    """Whether an alternative wants a different type at the value itself."""
    return any(_is_type_error(e) and not e.relative_path and not _accepts(e, instance_type) for e in branch)


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
        if _is_type_error(e):
            words.append(_type_words(e))
        elif e.validator == "pattern" and "${{" in str(_expected(e)).replace("\\", ""):
            words.append("an ${{ }} expression")
        elif e.validator == "enum":
            words.append("one of " + _listed(_expected(e)))
        elif e.validator == "const":
            words.append(_shown(_expected(e)))
        elif e.validator == "minLength":
            words.append("a non-empty string")
        elif e.validator in ("oneOf", "anyOf") and e.context:  # alternatives within an alternative (`$ref: env`)
            inner = [_wanted(branch) for branch in _branches(e)]
            if not all(inner):
                return None
            words.append(" or ".join(dict.fromkeys(cast(list[str], inner))))
        else:
            return None
    return words[-1] if words else None


def _type_words(error: ValidationError) -> str:
    expected = _expected(error) if isinstance(_expected(error), list) else [_expected(error)]
    words = " or ".join(_TYPE_NAMES.get(t, t) for t in expected)
    return "a non-empty string" if words == "a string" and _subschema(error).get("minLength") else words


def _listed(options: list[object]) -> str:
    names = [str(option) for option in options]
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")


def explain(root: Node, error: ValidationError) -> Iterator[SchemaError]:
    path = list(error.absolute_path)
    node, key = node_at(root, path)
    where = _where(path)
    validator_name = error.validator
    message = _subschema(error).get("x-message")
    if validator_name in ("oneOf", "anyOf") and error.context:
        if isinstance(message, str):
            yield SchemaError(message, _key_or_start(node, key))
            return
        yield from _explain_alternatives(root, error, node, key, where)
        return
    if validator_name == "additionalProperties" and isinstance(node, Mapping):
        allowed = sorted(_subschema(error).get("properties", {}))
        template = _subschema(error).get("x-unknown-key")
        for item_key, _ in node.items():
            if item_key.value in _instance(error) and _is_extra(error, item_key.value):
                close = difflib.get_close_matches(item_key.value, allowed, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                text = template.format(key=item_key.value) if isinstance(template, str) else None
                yield SchemaError(text or f"unknown key {item_key.value!r} at {where}{hint}", item_key.span)
        return
    if validator_name == "not" and "required" in _expected(error):
        names = list(_expected(error)["required"])
        if isinstance(message, str) and isinstance(node, Mapping):
            keys = [node.key_node(name) for name in names]
            later = max((k for k in keys if k is not None), key=lambda k: (k.span.line, k.span.column), default=None)
            yield SchemaError(message, later.span if later is not None else _key_or_start(node, key))
            return
        together = " and ".join(repr(name) for name in names)
        yield SchemaError(f"{together} cannot be used together at {where}", _key_or_start(node, key))
        return
    if validator_name == "dependencies" and isinstance(node, Mapping):
        yield from _explain_dependencies(error, node)
        return
    if validator_name == "required":
        anchor = _key_or_start(node, key)
        missing = [name for name in _expected(error) if name not in (_instance(error) or {})]
        listed = ", ".join(repr(name) for name in missing)
        yield SchemaError(f"missing required key {listed} at {where}", anchor)
        return
    if _is_type_error(error):
        yield SchemaError(f"expected {_type_words(error)} at {where}, found {_found(_instance(error))}", node.span)
        return
    if validator_name == "enum":
        options = [str(option) for option in _expected(error)]
        close = difflib.get_close_matches(str(_instance(error)), options, n=1, cutoff=0.6)
        if close:
            text = f"{_shown(_instance(error))} is not a known value at {where} (did you mean {close[0]!r}?)"
        else:
            text = f"{_shown(_instance(error))} is not one of {_listed(_expected(error))} at {where}"
        yield SchemaError(text, node.span)
        return
    if validator_name in ("minItems", "minProperties", "minLength"):
        yield SchemaError(f"{where} must not be empty", node.span)
        return
    if validator_name == "pattern":
        yield SchemaError(f"{_shown(_instance(error))} does not have the expected form at {where}", node.span)
        return
    yield SchemaError(f"{error.message} at {where}", node.span)


def _explain_alternatives(
    root: Node, error: ValidationError, node: Node, key: Scalar | None, where: str
) -> Iterator[SchemaError]:
    instance_type = _type_of(_instance(error))
    branches = _branches(error)
    fitting = [b for b in branches if not _wrong_type(b, instance_type)]
    wanted = [_wanted(b) for b in branches]
    if all(len(b) == 1 and b[0].validator == "required" and not b[0].relative_path for b in branches):
        names = " or ".join(repr(name) for b in branches for name in _expected(b[0]))
        yield SchemaError(f"missing required key: one of {names} at {where}", _key_or_start(node, key))
        return
    if len(fitting) == 1 and all(e.validator == "enum" and not e.relative_path for e in fitting[0]):
        yield from explain(root, fitting[0][0])
        return
    if not fitting or all(w is not None for w in wanted):
        described = " or ".join(dict.fromkeys(w for w in wanted if w))
        yield SchemaError(
            f"expected {described or 'another value'} at {where}, found {_found(_instance(error))}", node.span
        )
        return
    for sub in min(fitting, key=_fit):
        yield from explain(root, sub)


_ONLY_FOR = {
    "run": "only for `run` steps; a step that `uses` an action takes none",
    "uses": "only for steps that `uses` an action",
}


def _explain_dependencies(error: ValidationError, node: Mapping) -> Iterator[SchemaError]:
    for name, required in cast(dict[str, list[str]], _expected(error)).items():
        missing = [other for other in required if other not in node]
        key = node.key_node(name)
        if key is not None and missing:
            detail = _ONLY_FOR.get(missing[0], f"only used together with `{missing[0]}`")
            yield SchemaError(f"`{name}` is {detail}", key.span)


def _found(value: object) -> str:
    return _TYPE_NAMES[_type_of(value)] if not isinstance(value, str) else _shown(value)


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
