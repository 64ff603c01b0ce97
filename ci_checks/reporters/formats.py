"""The output formats `--output-format` and `--output FORMAT=FILE` choose from (`text` without colour)."""

from __future__ import annotations

from collections.abc import Callable

from ci_checks.check import Outcome
from ci_checks.reporters import github, json_output, junit, markdown, sarif, text

FORMATS: dict[str, Callable[[Outcome], str]] = {
    "text": lambda outcome: text.render(outcome.diagnostics, outcome.sources, outcome.files),
    "json": lambda outcome: json_output.render(outcome.diagnostics),
    "sarif": sarif.render,
    "github": github.render,
    "junit": junit.render,
    "markdown": markdown.render,
}
