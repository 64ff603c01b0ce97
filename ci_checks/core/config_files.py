"""Where a repository's configuration is, and the error a configuration is wrong with.

Finding the file and reading its text needs nothing of what checking it
needs (the rules, the policy engine, the schema), so a run that is reused from
the cache (`run_cache`) finds its configuration here and never parses it.
"""

from __future__ import annotations

from ci_checks.core.config_source import ConfigSource
from ci_checks.core.diagnostics import Related, Span
from ci_checks.core.source import SourceFile

CONFIG_FILES = (".github/ci-checks.yml", ".github/ci-checks.yaml")
PYPROJECT = "pyproject.toml"


class ConfigError(Exception):
    def __init__(self, message: str, span: Span, related: tuple[Related, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.related = related


def find(files: ConfigSource) -> SourceFile | None:
    """The repository's configuration file, if it has one: the first of `CONFIG_FILES` there, else a
    `pyproject.toml` that mentions ci-checks.

    A candidate that is there but is not a regular file (a link, a folder, a
    FIFO) is a positioned ConfigError: it is neither read nor silently passed over.
    """
    for relative in CONFIG_FILES:
        found = files.read(relative)
        if found is not None:
            return readable(found)
    pyproject = files.read(PYPROJECT)
    if pyproject is not None and "ci-checks" in readable(pyproject).text:
        return pyproject
    return None


def readable(file: SourceFile) -> SourceFile:
    """`file`, unless it could not be read as text (a positioned ConfigError)."""
    if file.problem is not None:
        raise ConfigError(file.problem.message, Span.point(file.path, file.problem.line, file.problem.column))
    return file
