"""The configuration file's schema, built from its parts: `schemas/ci-checks.schema.json` is its printout.

`python -m ci_checks.config.schema > schemas/ci-checks.schema.json` writes it
again after a rule kind, item kind or configuration key changes; a test checks
that the committed file is what this builds.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from ci_checks.core.linters import BACKENDS, PROFILES
from ci_checks.policy.schema import rule_defs

_NAMES = {"type": "array", "items": {"type": "string", "minLength": 1}}
PROPERTIES: dict[str, Any] = {
    "version": {"description": "Version of this file's format.", "const": 1},
    "select": {
        **_NAMES,
        "description": "Rules to run: codes (CC011), code prefixes (CC0), rule names (duplicate-key), policy rule "
        "ids and linter codes (SC2086, ZZ-unpinned-uses, AL). Default: all.",
    },
    "ignore": {**_NAMES, "description": "Rules not to run, written like select."},
    "profile": {
        "description": "Which linter findings to keep, as --profile takes it: correctness (the default: what breaks "
        "or exposes), security (and the hardening advice: unpinned actions, permissions, deprecated runtimes), all "
        "(and the linters' info-level notes). Built-in rules are in every profile; select and ignore apply on top.",
        "enum": list(PROFILES),
    },
    "exclude": {
        **_NAMES,
        "description": "Repo-relative path globs of files (or folders, and all below them) that ci-checks skips.",
    },
    "per-file-ignores": {
        "description": "Rules not to run in some files: repo-relative path globs (matching a file, or a folder and "
        "all below it) to the names ignored there, written like ignore.",
        "type": "object",
        "propertyNames": {"minLength": 1},
        "additionalProperties": _NAMES,
    },
    "max-file-size": {
        "description": "Largest file read, in bytes or with a unit: 512KiB, 4MiB, 1GiB.",
        "oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": "^[0-9]+ ?([KMG]i?B|B)?$"}],
    },
    "backends": {
        "description": "External linters to run, as --backends takes them: all (the default), none, or a list of "
        "actionlint, shellcheck and zizmor ([] and [none] for none).",
        "oneOf": [
            {"enum": ["all", "none"]},
            {"type": "array", "uniqueItems": True, "items": {"enum": ["all", "none", *BACKENDS]}},
        ],
    },
    "fixes": {
        "description": "What --fix writes where a finding leaves the value to the team.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "timeout-minutes": {
                "description": "The timeout-minutes --fix gives a self-hosted job without one (default: 360, "
                "GitHub's own limit, which keeps what the job does; a lower value is an unsafe fix).",
                "type": "integer",
                "minimum": 1,
                "maximum": 4320,
            }
        },
    },
    "severity": {
        "description": "Severity overrides: a rule code, name, policy rule id or linter code (or prefix) to error, "
        "warning or info.",
        "type": "object",
        "additionalProperties": {"enum": ["error", "warning", "info"]},
    },
    "runners": {
        "description": "The self-hosted runners jobs may ask for, by name: each with the labels it carries and its "
        "GPU vendor. Handed to actionlint as its known self-hosted labels. Without it, the runners are inferred "
        "from the workflows; a runner named here wins over the inferred one whose labels it carries.",
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "labels": {
                    "description": "The runner's labels (default: its name); a job's runs-on must name labels one "
                    "runner has.",
                    "type": "array",
                    "minItems": 1,
                    "uniqueItems": True,
                    "items": {"type": "string", "minLength": 1},
                },
                "vendor": {
                    "description": "The GPU vendor: amd (containers need --device=/dev/kfd and --device=/dev/dri) "
                    "or nvidia (containers need --gpus).",
                    "enum": ["amd", "nvidia"],
                },
                "self-hosted": {
                    "description": "false for a GitHub-hosted larger runner listed for its labels (default: true).",
                    "type": "boolean",
                },
            },
        },
    },
    "rules": {
        "description": "Policy rules: structural checks this repository defines for itself.",
        "type": "array",
        "items": {"$ref": "#/$defs/rule"},
    },
}


@cache
def build(precise: bool = True) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://ci-checks.dev/schemas/ci-checks.schema.json",
        "title": "ci-checks configuration",
        "description": "The configuration file .github/ci-checks.yml, or [tool.ci-checks] in pyproject.toml: rule "
        "selection and the policy rules.",
        "type": "object",
        "additionalProperties": False,
        "properties": PROPERTIES,
        "$defs": rule_defs(precise),
    }


if __name__ == "__main__":
    print(json.dumps(build(), indent=2))
