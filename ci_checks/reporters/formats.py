"""The output formats `--output-format` and `--output FORMAT=FILE` choose from (`text` without colour).

Each writes file names that are not UTF-8 the same way (see `escaping`).
"""

from __future__ import annotations

from collections.abc import Callable

from ci_checks.check import Outcome
from ci_checks.reporters import github, json_output, junit, markdown, sarif, text
from ci_checks.reporters.escaping import escaped


def _text(outcome: Outcome) -> str:
    return text.render(outcome.diagnostics, outcome.sources, outcome.files)


def _json(outcome: Outcome) -> str:
    return json_output.render(outcome.diagnostics)


_RENDERERS: dict[str, Callable[[Outcome], str]] = {
    "text": _text,
    "json": _json,
    "sarif": sarif.render,
    "github": github.render,
    "junit": junit.render,
    "markdown": markdown.render,
}


def _escaping(render: Callable[[Outcome], str]) -> Callable[[Outcome], str]:
    return lambda outcome: render(escaped(outcome))


FORMATS: dict[str, Callable[[Outcome], str]] = {name: _escaping(render) for name, render in _RENDERERS.items()}
