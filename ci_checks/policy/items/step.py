"""`step: SELECTOR`: steps of jobs and composite actions.

A selector is a glob of a step's name or id (`step: Install*`), or a mapping
of `uses` (a glob of `owner/repo[/path]`, or of the whole value when it has
`@`), `name` and `id`; `{literal: TEXT}` takes a name as written, `[` and `*`
included. Found at the step's first line.

```yaml
- step: {uses: actions/checkout}
  count: 1
```
in a `require` rule over jobs: every job has exactly one checkout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_checks.policy.compiling import STEP_SELECTOR, step_selector
from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope, StepSelector
from ci_checks.policy.scopes import step_anchor

PROPERTIES = {"step": STEP_SELECTOR}


class StepItem(Item):
    def __init__(self, selector: StepSelector, context: ItemContext) -> None:
        super().__init__("step", f"a step {selector}")
        self.selector = selector

    def find(self, scope: Scope) -> list[Hit]:
        return [Hit(step_anchor(step), step.label) for step in scope.steps if self.selector.matches(step)]


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    return StepItem(step_selector(raw["step"], context.place.at("step")), context)


ITEM = ItemKind("step", "steps selected by name, id or what they use", PROPERTIES, _compile, __doc__ or "")
