"""`file: GLOB`: files of the repository, by a path glob; judged over the whole repository, so it takes no `where`.

In a `require` rule at least one file matches (or `count` of them); in a
`forbid` rule each matching file is a finding at its first line. Excluded
files, and links that leave the repository, do not count.

`referenced_by:` narrows to files by what refers to them, as the repository's
reference resolution finds it (`ci_checks.policy.referencing`: `uses:`, the
scripts, patches, requirements and Dockerfiles of `run:` scripts and shell
scripts, Dockerfile `COPY`/`ADD` sources, paths in Python string literals):
`false` for files nothing refers to (orphans), `true` for files something
refers to, or a glob (or a list) for files a matching file refers to.

```yaml
- id: one-rocm-patch
  kind: require
  require:
    - file: docker/amd_patch/**/*.patch
      count: {max: 1}
- id: no-orphan-patches
  kind: forbid
  forbid:
    - file: docker/**/*.patch
      referenced_by: false
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_checks.core.diagnostics import Span
from ci_checks.core.globs import Glob, matches_any
from ci_checks.policy.compiling import path_globs
from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope
from ci_checks.policy.referencing import referrers

PROPERTIES = {
    "file": {"description": "A repo-relative path glob.", "type": "string", "minLength": 1},
    "referenced_by": {
        "description": "Only files nothing refers to (false), something refers to (true), or a file matching these "
        "globs refers to.",
        "oneOf": [
            {"type": "boolean"},
            {"type": "string", "minLength": 1},
            {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
        ],
    },
}
_SHOWN = 3
"""How many of a file's referrers a finding names."""


class FileItem(Item):
    def __init__(self, glob: Glob, referenced_by: bool | tuple[Glob, ...] | None, context: ItemContext) -> None:
        if referenced_by is None:
            condition = ""
        elif referenced_by is False:
            condition = " that nothing refers to"
        elif referenced_by is True:
            condition = " that something refers to"
        else:
            condition = " that " + " or ".join(repr(str(referrer)) for referrer in referenced_by) + " refers to"
        super().__init__("file", f"a file matching {glob.text!r}{condition}")
        self.glob = glob
        self.referenced_by = referenced_by

    def find(self, scope: Scope) -> list[Hit]:
        if scope.workspace is None:
            return []
        repository = scope.workspace.repository
        paths = [
            path
            for path in repository.files
            if self.glob.matches(path) and not repository.excluded(path) and repository.resolve(path) is not None
        ]
        if self.referenced_by is None:
            return [Hit(Span.point(path), path) for path in paths]
        found = referrers(scope.workspace)
        hits = []
        for path in paths:
            by = sorted(found.of(path))
            if isinstance(self.referenced_by, tuple):
                by = [referrer for referrer in by if matches_any(self.referenced_by, referrer)]
            if bool(by) == (self.referenced_by is not False):
                hits.append(Hit(Span.point(path), path, context=_referred(by)))
        return hits


def _referred(by: list[str]) -> str:
    if not by:
        return ", which nothing in the repository refers to,"
    shown = ", ".join(by[:_SHOWN]) + (f" and {len(by) - _SHOWN} more" if len(by) > _SHOWN else "")
    return f", which {shown} refer{'s' if len(by) == 1 else ''} to,"


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    [glob] = path_globs(raw["file"], context.place.at("file"))
    written = raw.get("referenced_by")
    referenced_by: bool | tuple[Glob, ...] | None = (
        written
        if written is None or isinstance(written, bool)
        else path_globs(written, context.place.at("referenced_by"))
    )
    return FileItem(glob, referenced_by, context)


ITEM = ItemKind("file", "files of the repository matching a path glob", PROPERTIES, _compile, __doc__ or "", False)
