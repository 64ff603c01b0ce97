"""The output formats `--output-format` and `--output FORMAT=FILE` choose from (`text` and `concise` without colour).

Each writes file names that are not UTF-8 the same way (see `escaping`). A
format's module is imported when it is first written: a hook's run that
prints text needs none of the others.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable

from ci_checks.core import escaping
from ci_checks.engine.outcome import Outcome


def escaped(outcome: Outcome) -> Outcome:
    """The outcome with its paths, messages, rule names and codes escaped; itself when nothing needs it."""
    if not any(escaping.needs(diagnostic) for diagnostic in outcome.diagnostics) and not any(
        escaping.needs_path(name) for name in (*outcome.sources, *outcome.checked)
    ):
        return outcome
    return dataclasses.replace(
        outcome,
        diagnostics=[escaping.escaped_diagnostic(diagnostic) for diagnostic in outcome.diagnostics],
        sources={escaping.path(name): file for name, file in outcome.sources.items()},
        checked=[escaping.path(name) for name in outcome.checked],
    )


def _text(outcome: Outcome) -> str:
    from ci_checks.reporters import text

    return text.render(outcome.diagnostics, outcome.sources, outcome.files)


def _concise(outcome: Outcome) -> str:
    from ci_checks.reporters import text

    return text.concise(outcome.diagnostics, outcome.files)


def _json(outcome: Outcome) -> str:
    from ci_checks.reporters import json_output

    return json_output.render(outcome.diagnostics)


def _module_render(name: str) -> Callable[[Outcome], str]:
    def render(outcome: Outcome) -> str:
        written: Callable[[Outcome], str] = importlib.import_module(f"ci_checks.reporters.{name}").render
        return written(outcome)

    return render


_RENDERERS: dict[str, Callable[[Outcome], str]] = {
    "text": _text,
    "concise": _concise,
    "json": _json,
    "sarif": _module_render("sarif"),
    "github": _module_render("github"),
    "junit": _module_render("junit"),
    "markdown": _module_render("markdown"),
}


def _escaping(render: Callable[[Outcome], str]) -> Callable[[Outcome], str]:
    return lambda outcome: render(escaped(outcome))


FORMATS: dict[str, Callable[[Outcome], str]] = {name: _escaping(render) for name, render in _RENDERERS.items()}
