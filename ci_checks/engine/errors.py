"""What stopped a check, as standard error shows it: a configuration's mistake positioned, a repository's failure."""

from __future__ import annotations

from ci_checks.core import config_files, escaping
from ci_checks.core.escaping import one_line


def config_error(error: config_files.ConfigError, prefix: str = "") -> str:
    """A configuration's mistake, positioned: `path:line:col: error: message`, then its notes; `prefix` is the
    folder of its repository when several are checked."""
    span = error.span
    lines = [f"{escaping.path(prefix + span.path)}:{span.line}:{span.column}: error: {one_line(error.message)}\n"]
    for related in error.related:
        where = related.span
        place = f"{where.line}:{where.column}"
        if where.path != span.path:
            place = f"{escaping.path(prefix + where.path)}:{place}"
        lines.append(f"  = note: {one_line(related.message)} at {place}\n")
    return "".join(lines)


def failure(root: str, error: Exception) -> str:
    """What stopped one repository of several from being checked, said for that repository."""
    if isinstance(error, config_files.ConfigError):
        return config_error(error, "" if root == "." else f"{root}/")
    return f"ci-checks: error: {escaping.path(root)}: {one_line(str(error))}\n"
