"""The file model of one repository: every job's and composite action's flow, and every Dockerfile as built.

`RepositoryFiles` is made once per checked repository (`RepositoryContext.files`)
and computes each part when a rule first asks for it. A Dockerfile is read
with the contexts the repository's jobs build it from (`docker build`,
`docker/build-push-action`); one that no job builds is read with the
repository root and with its own folder as context, the two usual choices.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ci_checks.core.repository import FileKind, Repository
from ci_checks.model.action import Action
from ci_checks.model.files.flow import Flow
from ci_checks.model.files.jobs import Build, BuildArguments, JobFlow, action_flow, job_flow
from ci_checks.model.files.places import Place
from ci_checks.model.loading import LoadedFile, Workspace
from ci_checks.model.steps import Step
from ci_checks.model.workflow import Job, Workflow

if TYPE_CHECKING:
    from ci_checks.core.config_source import ConfigSource
    from ci_checks.model.files.docker import Image

_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+)$", re.MULTILINE)

_MAX_VARIANTS = 8
"""How many readings of one Dockerfile from one context, with different build arguments, are made."""

UNSURE = frozenset({"opaque", "unplaced"})
"""Writes that may have touched any path: an action ci-checks does not know, a write to a place that cannot be
read. A path after them is still taken for the repository's file the checkout put there."""


@dataclass(frozen=True, eq=False)
class Owned:
    """A flow with what it belongs to, for messages (`job 'test'`, `the image`), and its image if it is a stage's."""

    flow: Flow
    owner: str
    image: Image | None = None


@dataclass(frozen=True, eq=False)
class DockerBuild:
    """A job's build of a repository Dockerfile: the job's flow, the build, and its context as a repository folder
    (None: a folder that is not this repository's, or unknown)."""

    flow: JobFlow
    build: Build
    dockerfile: str
    context: str | None

    def made(self, source: Place) -> bool:
        """Whether a context path (`COPY assets/ ...`) was put there by the job before the build, not by the
        checkout: then its absence from the repository proves nothing."""
        if self.build.context is None or self.build.git_context:
            return False
        place = self.build.context.joined(source.path)
        origin = self.flow.origin(place, self.build.seq, UNSURE, folder=True)
        return origin.write is not None and origin.repository_path is None


class RepositoryFiles:
    def __init__(
        self, workspace: Workspace, workflows: Callable[[], list[Workflow]], trusted: ConfigSource | None = None
    ) -> None:
        self.workspace = workspace
        self._workflows = workflows
        self._trusted = trusted
        self._jobs: dict[tuple[int, int | None], JobFlow] = {}
        self._folders: dict[str, bool] = {}

    @property
    def repository(self) -> Repository:
        return self.workspace.repository

    def job(self, job: Job, steps: int | None = None) -> JobFlow:
        """The flow of a job, or of its first `steps` steps when the rest does not matter (the whole one when it
        is already known)."""
        flow = self._jobs.get((id(job), None)) or self._jobs.get((id(job), steps))
        if flow is None:
            flow = self._jobs[(id(job), steps)] = job_flow(job, steps)
        return flow

    @cached_property
    def jobs(self) -> list[tuple[Job, JobFlow]]:
        """Every job with steps of every workflow of the repository, with its flow."""
        return [(job, self.job(job)) for workflow in self._workflows() for job in workflow.jobs.values() if job.steps]

    @cached_property
    def actions(self) -> list[tuple[Action, JobFlow]]:
        """Every composite action of the repository, with its flow."""
        found = []
        for path in self.repository.actions:
            action = self.workspace.load(path, FileKind.ACTION).action
            if action is not None and action.is_composite:
                found.append((action, action_flow(action, posixpath.dirname(path))))
        return found

    @cached_property
    def builds(self) -> list[DockerBuild]:
        """The builds of repository Dockerfiles in the repository's jobs."""
        found = []
        for _, flow in self.jobs:
            for build in flow.builds:
                context = self._repository_folder(flow, build, build.context)
                for place in build.dockerfiles:
                    dockerfile = self._repository_folder(flow, build, place)
                    if dockerfile is not None:
                        found.append(DockerBuild(flow, build, dockerfile, context))
        return found

    def _repository_folder(self, flow: JobFlow, build: Build, place: Place | None) -> str | None:
        if place is None or place.glob:
            return None
        if build.git_context:
            return None if place.outside else place.path
        return flow.origin(place, build.seq, UNSURE).repository_path

    def builds_of(self, dockerfile: str) -> list[DockerBuild]:
        return [build for build in self.builds if build.dockerfile == dockerfile]

    def images(self, path: str) -> list[Image]:
        """A repository Dockerfile read with each context it is built from (None among them: an unknown one)."""
        return self._images.get(path, [])

    @cached_property
    def _images(self) -> dict[str, list[Image]]:
        from ci_checks.model.files.docker import image  # Dockerfiles are read only where a rule needs them

        found: dict[str, list[Image]] = {}
        for path in self.repository.dockerfiles:
            parsed = self.workspace.load(path, FileKind.DOCKERFILE).dockerfile
            if parsed is None:
                continue
            builds = self.builds_of(path)
            folder = posixpath.dirname(path)
            variants = _variants(builds) if builds else [("", ()), (folder, ())]
            found[path] = [
                image(parsed, path, context, self._is_folder, self._arguments(passed)) for context, passed in variants
            ]
        return found

    def in_context(self, built: Image, place: Place) -> bool:
        """Whether a context path (`COPY assets/ ...`, `RUN --mount=type=bind,source=assets`) of a Dockerfile read
        with a known context is there: in the repository, or made by a job that builds it from that context."""
        context = built.context or ""
        path = posixpath.normpath(posixpath.join(context, place.path)) if place.path else context or "."
        if self.repository.exists(path):
            return True
        return any(build.context == built.context and build.made(place) for build in self.builds_of(built.path))

    def _arguments(self, passed: BuildArguments | None) -> dict[str, str | None] | None:
        """The build arguments an image is read with: those its build passes, and as unknown those passed by a
        build whose Dockerfile cannot be told (it may be this one)."""
        loose = self._loose_arguments
        if passed is None or loose is None:
            return None
        return {**dict(passed), **dict.fromkeys(loose)}

    @cached_property
    def _loose_arguments(self) -> frozenset[str] | None:
        """The names of the build arguments passed by builds that may build any of the repository's Dockerfiles:
        those of composite actions, and those of jobs whose Dockerfile is not a repository path (None: a build
        passes arguments that cannot be read)."""
        loose = [build for _, flow in self.actions for build in flow.builds]
        for _, flow in self.jobs:
            for build in flow.builds:
                places = build.dockerfiles or (None,)
                if any(self._repository_folder(flow, build, place) is None for place in places):
                    loose.append(build)
        names: set[str] = set()
        for build in loose:
            if build.arguments is None:
                return None
            names.update(name for name, _ in build.arguments)
        return frozenset(names)

    @cached_property
    def all_images(self) -> list[Image]:
        return [built for images in self._images.values() for built in images]

    def _is_folder(self, path: str) -> bool:
        """Whether a repository path is a folder, asked once per path (a `COPY` may name one source thousands of
        times), for as long as the images read from it are kept."""
        if path not in self._folders:
            located = self.repository.locate(path)
            self._folders[path] = isinstance(located, Path) and located.is_dir()
        return self._folders[path]

    @cached_property
    def image_places(self) -> list[Place]:
        """Every place of an image's file system that a repository Dockerfile writes: a job that runs in a
        container may find them there."""
        return [place for built in self.all_images for place in built.places()]

    def flows_of(
        self, targets: list[LoadedFile], covers: Callable[[str], bool], mentioning: tuple[tuple[str, ...], ...] = ()
    ) -> Iterator[Owned]:
        """The flows of the workflows and actions asked about, and of the Dockerfiles a run reports on; with
        `mentioning`, only those whose scripts hold a word of each group (a rule that looks for an install between
        `git fetch` and `git checkout` need not follow a job that runs neither)."""
        for file in targets:
            if file.workflow is not None:
                for job in file.workflow.jobs.values():
                    if job.steps and _mention(_texts(job.steps), mentioning):
                        yield Owned(self.job(job), f"job '{job.id}'")
            elif file.action is not None and _mention(_texts(file.action.steps), mentioning):
                yield from (Owned(flow, "the action") for action, flow in self.actions if action is file.action)
        for path in self.repository.dockerfiles:
            if covers(path) and _mention(self.workspace.load(path).source.text, mentioning):
                for built in self.images(path):
                    yield from (Owned(stage.flow, "the image", built) for stage in built.stages)

    @cached_property
    def submodules(self) -> list[str]:
        """The paths of git submodules (from `.gitmodules`): their files are not part of this repository's tree.

        Under `--config-ref` the file is read from the ref: a folder that a change names a submodule stays this
        repository's (CC092 reports the entry)."""
        if self._trusted is not None:
            then = self._trusted.read(".gitmodules")
            return submodule_paths(then.text) if then is not None and then.problem is None else []
        if not self.repository.exists(".gitmodules"):
            return []
        return submodule_paths(self.repository.read(".gitmodules").text)

    def in_submodule(self, path: str) -> bool:
        return any(path == folder or path.startswith(folder + "/") for folder in self.submodules)

    @cached_property
    def by_name(self) -> dict[str, list[str]]:
        """The repository's files by their names."""
        found: dict[str, list[str]] = {}
        for path in self.repository.files:
            if not self.repository.excluded(path):
                found.setdefault(posixpath.basename(path), []).append(path)
        return found

    @cached_property
    def flows(self) -> list[Flow]:
        """Every flow of the repository: jobs, composite actions, Dockerfile stages."""
        return [
            *(flow for _, flow in self.jobs),
            *(flow for _, flow in self.actions),
            *(flow for built in self.all_images for flow in built.flows),
        ]


def submodule_paths(text: str) -> list[str]:
    """The `path = ...` entries of a `.gitmodules` text."""
    return [match.group(1).strip().strip("/") for match in _SUBMODULE_PATH.finditer(text)]


def _variants(builds: list[DockerBuild]) -> list[tuple[str | None, BuildArguments | None]]:
    """The contexts and build arguments a Dockerfile is read with, one reading for each pair its builds give; past
    `_MAX_VARIANTS` readings of one context, that context is read once, with arguments that cannot be known."""
    variants = list(dict.fromkeys((build.context, build.build.arguments) for build in builds))
    per_context: dict[str | None, int] = {}
    for context, _ in variants:
        per_context[context] = per_context.get(context, 0) + 1
    crowded = [context for context, count in per_context.items() if count > _MAX_VARIANTS]
    kept = [(context, passed) for context, passed in variants if context not in crowded]
    return kept + [(context, None) for context in crowded]


def _texts(steps: list[Step]) -> str:
    return "\n".join(step.run.value for step in steps if step.run is not None)


_QUOTING = str.maketrans("", "", "\"'\\")


def _mention(text: str, groups: tuple[tuple[str, ...], ...]) -> bool:
    """Whether the text holds a word of each group, as the shell reads it (`git fe""tch` is `git fetch`)."""
    read = text.translate(_QUOTING)
    return all(any(word in read for word in group) for group in groups)
