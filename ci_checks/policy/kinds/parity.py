"""`parity`: workflows that must stay in step (the CUDA and ROCm paths) define the same names.

`workflows` (two or more paths) are compared by `compare`: `inputs` (of
`workflow_call` and `workflow_dispatch`), `secrets`, `outputs`, `jobs` (by id)
and `steps` (by name); a name present in one and absent from another is a
finding where it is defined, unless `allow` lists it (globs).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.globs import Glob, compile_glob, matches_any
from ci_checks.core.repository import FileKind
from ci_checks.model import Workflow
from ci_checks.model.loading import LoadedFile, Workspace
from ci_checks.policy.compiling import GLOB_OR_LITERAL, name_glob
from ci_checks.policy.findings import no_match, unreadable
from ci_checks.policy.model import Covers, PolicyRule, RuleContext, RuleKind
from ci_checks.policy.scopes import step_anchor
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE_DOCS = """\
Two workflows that should match differ, as a policy `parity` rule defines it.

## What it does
For a rule of kind `parity`, compares the listed workflows by the aspects in
`compare`: `inputs` (of `workflow_call` and `workflow_dispatch`), `secrets`
and `outputs` (of `workflow_call`), `jobs` (by id) and `steps` (by name, else
id, else what they use or run). Each name present in one workflow and absent
from another is reported where it is defined, unless `allow` lists it.

## Why it matters
CUDA and ROCm paths of the same CI drift: an input added to one reusable
workflow and not the other, a step fixed in one copy only. Parity makes every
difference either fixed or written down in `allow` as intended.

## Example
```yaml
rules:
  - id: rocm-parity
    kind: parity
    workflows: [.github/workflows/_run-ci.yml, .github/workflows/_run-ci-rocm.yml]
    compare: [inputs, secrets, steps]
    allow: {steps: ["Wait for GPU ready"]}
```

## Fix
Add the missing input, secret or step to the other workflow, or list the name
under `allow` when the difference is intended.
"""

RULE = Rule(
    "CC103",
    "policy-parity",
    "Workflows that a policy `parity` rule pairs differ",
    Severity.ERROR,
    RULE_DOCS,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)


ASPECTS = ("inputs", "secrets", "outputs", "jobs", "steps")


@dataclass(frozen=True)
class ParitySpec:
    workflows: tuple[tuple[str, Span], ...]
    compare: tuple[str, ...]
    allow: Mapping[str, tuple[Glob, ...]]


def _compile(raw: Mapping[str, Any], context: RuleContext) -> ParitySpec:
    place = context.place
    workflows = []
    for index, text in enumerate(raw["workflows"]):
        try:
            compile_glob(text)
        except ValueError as error:
            raise place.error(f"invalid path {text!r}: {error}", "workflows", index) from None
        workflows.append((text.removeprefix("./"), place.span("workflows", index)))
    allow = {
        aspect: tuple(name_glob(value, place.at("allow", aspect, i)) for i, value in enumerate(values))
        for aspect, values in raw.get("allow", {}).items()
    }
    return ParitySpec(tuple(workflows), tuple(raw["compare"]), allow)


def _check(rule: PolicyRule, workspace: Workspace, covers: Covers) -> Iterator[Diagnostic]:
    spec: ParitySpec = rule.spec
    workflows: list[tuple[LoadedFile, Workflow]] = []
    for path, span in spec.workflows:
        if not workspace.repository.exists(path):
            yield no_match(rule, span, f"workflow {path!r} does not exist")
            continue
        file = workspace.load(path, FileKind.WORKFLOW)
        workspace.consulted.add(path)
        if file.workflow is None:
            if covers(path):
                yield unreadable(rule, file)
            continue
        workflows.append((file, file.workflow))
    if len(workflows) < len(spec.workflows):
        return
    for aspect in spec.compare:
        allowed = spec.allow.get(aspect, ())
        named = [(file, _names(workflow, aspect)) for file, workflow in workflows]
        for file, names in named:
            if not covers(file.path):
                continue
            for name, span in names.items():
                lacking = [other.path for other, other_names in named if name not in other_names]
                if lacking and not matches_any(allowed, name):
                    singular = aspect.removesuffix("s")
                    detail = f"{singular} {name!r} of {file.path} has no counterpart in {', '.join(lacking)}"
                    yield rule.finding(span, detail)


def _names(workflow: Workflow, aspect: str) -> dict[str, Span]:
    """The names of one aspect of a workflow, each with where it is first defined."""
    call = workflow.workflow_call
    if aspect == "inputs":
        inputs = {**workflow.workflow_dispatch_inputs, **(call.inputs if call else {})}
        return {name: item.key.span for name, item in inputs.items()}
    if aspect == "secrets":
        return {name: secret.key.span for name, secret in (call.secrets if call else {}).items()}
    if aspect == "outputs":
        return {name: output.key.span for name, output in (call.outputs if call else {}).items()}
    if aspect == "jobs":
        return {job_id: job.key.span for job_id, job in workflow.jobs.items()}
    steps: dict[str, Span] = {}
    for step in workflow.steps():
        steps.setdefault(step.label, step_anchor(step))
    return steps


_NAMES = {"type": "array", "items": GLOB_OR_LITERAL}
KIND = RuleKind(
    "parity",
    RULE,
    {
        "workflows": {
            "description": "Repo-relative paths of the workflows that must match.",
            "type": "array",
            "minItems": 2,
            "items": {"type": "string", "minLength": 1},
        },
        "compare": {
            "description": "What must match.",
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"enum": list(ASPECTS)},
        },
        "allow": {
            "description": "Names (globs) that may differ, by aspect.",
            "type": "object",
            "additionalProperties": False,
            "properties": dict.fromkeys(ASPECTS, _NAMES),
        },
    },
    ("workflows", "compare"),
    _compile,
    __doc__ or "",
    check_repository=_check,
)
