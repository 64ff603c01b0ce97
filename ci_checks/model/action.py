"""The composite-action model: `action.yml` metadata and, for composite actions, its steps."""

from __future__ import annotations

from dataclasses import dataclass, field

from ci_checks.core.source import SourceFile
from ci_checks.model.paths import Selected, get_text, select_text
from ci_checks.model.steps import Step, find_step, matching_steps
from ci_checks.model.values import mapping, pairs, text
from ci_checks.model.workflow import Input, Output
from ci_checks.syntax.yamlpos import Document, Mapping, Sequence


@dataclass(eq=False)
class Action:
    path: str
    document: Document
    node: Mapping
    name: str | None = None
    description: str | None = None
    inputs: dict[str, Input] = field(default_factory=dict)
    outputs: dict[str, Output] = field(default_factory=dict)
    using: str | None = None
    runs: Mapping | None = None
    steps: list[Step] = field(default_factory=list)

    @property
    def source(self) -> SourceFile:
        return self.document.source

    @property
    def is_composite(self) -> bool:
        return self.using == "composite"

    @property
    def default_shell(self) -> str | None:
        """Composite steps have no default shell: GitHub requires `shell:` on each `run:` step."""
        return None

    def step(self, name_or_id: str) -> Step:
        return find_step(self.steps, name_or_id, self.path)

    def steps_matching(self, uses: str | None = None, name: str | None = None, id: str | None = None) -> list[Step]:
        return matching_steps(self.steps, uses, name, id)

    def select(self, key_path: str) -> list[Selected]:
        """What a PATH from the action's root selects: `inputs.*.default`, `runs.steps[*].shell`."""
        return select_text(self.node, (), key_path)

    def get(self, key_path: str) -> Selected:
        return get_text(self.node, (), key_path, self.path)

    @classmethod
    def from_document(cls, document: Document) -> Action | None:
        root = document.root
        if not document.usable or not isinstance(root, Mapping):
            return None
        action = cls(document.path, document, root)
        action.name = text(root.get("name"))
        action.description = text(root.get("description"))
        action.inputs = {key.value: Input.build(key, value) for key, value in pairs(root.get("inputs"))}
        action.outputs = {key.value: Output.build(key, value) for key, value in pairs(root.get("outputs"))}
        runs = mapping(root.get("runs"))
        action.runs = runs
        if runs is not None:
            action.using = text(runs.get("using"))
            steps = runs.get("steps")
            if isinstance(steps, Sequence):
                action.steps = Step.build_all(action, steps, document.source)
        return action
