"""The positioned model of workflows and composite actions."""

from ci_checks.model.action import Action
from ci_checks.model.steps import ActionRef, ScalarLocator, Step
from ci_checks.model.values import Entry
from ci_checks.model.workflow import (
    Container,
    Input,
    Job,
    Output,
    RunDefaults,
    RunsOn,
    Secret,
    Strategy,
    Trigger,
    Workflow,
    WorkflowCall,
)

__all__ = [
    "Action",
    "ActionRef",
    "Container",
    "Entry",
    "Input",
    "Job",
    "Output",
    "RunDefaults",
    "RunsOn",
    "ScalarLocator",
    "Secret",
    "Step",
    "Strategy",
    "Trigger",
    "Workflow",
    "WorkflowCall",
]
