"""`file: GLOB`: files of the repository, by a path glob; judged over the whole repository, so it takes no `where`.

In a `require` rule at least one file matches (or `count` of them); in a
`forbid` rule each matching file is a finding at its first line. Excluded
files, and links that leave the repository, do not count.

```yaml
- id: one-rocm-patch
  kind: require
  require:
    - file: docker/amd_patch/**/*.patch
      count: {max: 1}
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_checks.diagnostics import Span
from ci_checks.globs import Glob
from ci_checks.policy.compiling import ItemContext, path_globs
from ci_checks.policy.model import Hit, Item, ItemKind
from ci_checks.policy.scopes import Scope

PROPERTIES = {"file": {"description": "A repo-relative path glob.", "type": "string", "minLength": 1}}


class FileItem(Item):
    def __init__(self, glob: Glob, context: ItemContext) -> None:
        super().__init__("file", f"a file matching {glob.text!r}", context.place.span("file"))
        self.glob = glob

    def find(self, scope: Scope) -> list[Hit]:
        if scope.workspace is None:
            return []
        repository = scope.workspace.repository
        return [
            Hit(Span.point(path), path)
            for path in repository.files
            if self.glob.matches(path) and not repository.excluded(path) and repository.resolve(path) is not None
        ]


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    [glob] = path_globs(raw["file"], context.place.at("file"))
    return FileItem(glob, context)


ITEM = ItemKind("file", "files of the repository matching a path glob", PROPERTIES, _compile, __doc__ or "", False)
