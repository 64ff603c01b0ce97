"""Checking configuration data against a JSON schema, with the first problem said as a person would.

The configuration file and each policy item are validated this way; the
message names the place (`rules.0.where`) and, for unknown keys and values,
the closest known one.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ci_checks.policy.model import PolicyError

if TYPE_CHECKING:
    import jsonschema

    from ci_checks.policy.model import Place


def first_error(
    data: object, schema: Mapping[str, Any], prefix: list[str | int] | None = None
) -> tuple[str, list[str | int], bool] | None:
    """The first problem: its message, its JSON path in `data`, and whether it is about a key there.

    Messages name places from the configuration's root: `prefix` is where `data` sits in it.
    """
    if _accepted(data, schema):
        return None
    import jsonschema  # only to explain a configuration the fast validator rejects

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=_error_order)
    if not errors:
        return None
    error = _within_the_fitting_shape(errors[0])
    where = list(error.absolute_path)
    if error.validator == "additionalProperties":
        return _message(error, prefix or []), [*where, _unknown_keys(error)[0]], True
    return _message(error, prefix or []), where, error.validator == "required"


_FAST: dict[str, Any] = {}


def _accepted(data: object, schema: Mapping[str, Any]) -> bool:
    """Whether the Rust validator accepts `data` (formats not checked, as jsonschema does not check them by default).

    False when it cannot say (data it cannot read, a schema it does not
    compile): the explaining validator then decides, so this only ever saves
    time. `tests/ci/linter/policy/test_policy_validation_fast.py` holds the two to the same
    verdicts.
    """
    import jsonschema_rs

    try:
        written = json.dumps(schema, sort_keys=True)
        validator = _FAST.get(written)
        if validator is None:
            validator = _FAST[written] = jsonschema_rs.Draft202012Validator(dict(schema), validate_formats=False)
        return bool(validator.is_valid(data))
    except (TypeError, ValueError, OverflowError):
        return False


def validate(data: Mapping[str, Any], schema: Mapping[str, Any], place: Place, what: str) -> None:
    """PolicyError at the first problem of `data` (a part of the configuration at `place`)."""
    problem = first_error(data, schema, place.path)
    if problem is None:
        return
    message, where, at_key = problem
    if message.startswith("unknown configuration key"):
        inside = ".".join(str(part) for part in where[:-1])  # `count` of an item: the key is not the item's own
        owner = f"`{inside}` in {what}" if inside else what
        message = message.replace("unknown configuration key", f"unknown key of {owner}", 1)
    raise PolicyError(message, place.span(*where, key=at_key))


_JSON_TYPES = {"object": dict, "array": list}


def _within_the_fitting_shape(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For a `oneOf` of which one choice has the value's type (`where` as one mapping or a list of them), the
    first problem within that choice: "rules.0.where cannot be empty", not "must be a list"."""
    if error.validator != "oneOf" or not error.context or not isinstance(error.instance, dict | list):
        return error  # a scalar's problem is said for all its shapes at once ("a number of bytes or a size")
    choices = cast(list[dict[str, Any]], error.validator_value)
    fitting = [
        index
        for index, choice in enumerate(choices)
        if isinstance(choice.get("type"), str) and isinstance(error.instance, _JSON_TYPES.get(choice["type"], ()))
    ]
    if len(fitting) != 1:
        return error
    # A `oneOf` error has a context only when no choice holds: the fitting one has errors of its own.
    inner = sorted((sub for sub in error.context if sub.relative_schema_path[0] == fitting[0]), key=_error_order)
    return _within_the_fitting_shape(inner[0])


def _error_order(error: jsonschema.ValidationError) -> tuple[list[str], int]:
    """First by place in the file; at one place, the error that says most (an unknown kind before its consequences)."""
    specific = {"enum": 0, "additionalProperties": 1, "required": 2}
    return list(map(str, error.absolute_path)), specific.get(str(error.validator), 3)


def _known_keys(error: jsonschema.ValidationError) -> list[str]:
    schema = cast(dict[str, Any], error.schema)
    return sorted(schema.get("properties", {}))


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    known = _known_keys(error)
    return [key for key in cast(dict[str, Any], error.instance) if key not in known]


def _message(error: jsonschema.ValidationError, prefix: list[str | int]) -> str:
    if error.validator == "additionalProperties":
        known = _known_keys(error)
        hints = []
        for key in _unknown_keys(error):
            close = difflib.get_close_matches(key, known, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        return f"unknown configuration key {', '.join(hints)}; known keys: {', '.join(known)}"
    where = ".".join(str(part) for part in [*prefix, *error.absolute_path]) or "the configuration"
    if error.validator == "enum":
        choices = [str(choice) for choice in cast(list[object], error.validator_value)]
        close = difflib.get_close_matches(str(error.instance), choices, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{where}: unknown value {error.instance!r}{hint}; expected one of {', '.join(choices)}"
    if error.validator == "minItems":
        count = error.validator_value
        return f"{where} needs at least {count} item{'s' if count != 1 else ''}"
    if error.validator == "required":
        return f"{where or 'the rule'}: {error.message.replace(' is a required property', ' is required')}"
    if error.validator == "minProperties":
        return f"{where} cannot be empty"
    if error.validator == "maxProperties":
        return f"{where} takes exactly one key"
    if error.validator == "pattern":
        return f"{where}: {error.instance!r} must match {error.validator_value}"
    if error.validator == "const":
        return f"{where} must be {error.validator_value!r}"
    if error.validator == "type":
        return f"{where} must be of type {error.validator_value}"
    if error.validator in ("minimum", "maximum"):
        return f"{where} must be {'at least' if error.validator == 'minimum' else 'at most'} {error.validator_value}"
    if error.validator == "maxLength":
        return f"{where} is longer than {error.validator_value} characters"
    if error.validator == "oneOf" and where == "max-file-size":
        return "max-file-size must be a number of bytes or a size such as 4MiB"
    if error.validator == "oneOf":
        return f"{where}: {_shapes(error)}"
    return f"{where}: {error.message}"


def _shapes(error: jsonschema.ValidationError) -> str:
    """What a `oneOf` wanted, from the types of its choices: 'must be a string or a mapping'."""
    names = {
        "string": "a string",
        "object": "a mapping",
        "array": "a list",
        "integer": "an integer",
        "boolean": "true or false",
    }
    wanted = []
    for choice in cast(list[dict[str, Any]], error.validator_value):
        kind = choice.get("type")
        if isinstance(kind, str) and names.get(kind) not in wanted:
            wanted.append(names.get(kind, kind))
    shown = " or ".join(wanted) if wanted else "one of the documented shapes"
    return f"must be {shown}"
