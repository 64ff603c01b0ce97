"""A Dockerfile built from one context, as stages whose flows say what each instruction puts in the image.

Per stage (`FROM image [AS name]`): `WORKDIR` moves and creates the working
directory, `ENV` and `ARG` set variables, `COPY`/`ADD` put a context path
(or, with `--from=`, another stage's path) at their destination, `RUN
--mount=type=bind` makes a context path visible for that command, and each
`RUN` script is walked like a `run:` step (`flow.Walker`), starting in the
working directory. A stage built `FROM` another stage of the file reads what
that stage left; one built from an image starts from files ci-checks cannot
know.

So `git apply /tmp/amd_patch/megatron.patch` after
`COPY docker/amd_patch/latest/megatron.patch /tmp/amd_patch/megatron.patch`
reads the context's `docker/amd_patch/latest/megatron.patch`, and a
`Flow.origin` of the path gives that repository path (when the context is a
repository folder) or says nothing put a file there.

`ARG NAME=default` gives NAME the value the build passes (`--build-arg
NAME=value`), else its default with the variables before it substituted;
`ARG NAME` without a default takes the value of the `ARG NAME` before the
first `FROM`. A value passed from the build's environment or from words that
cannot be read, and the platform and proxy arguments BuildKit sets
(`TARGETARCH`, `HTTP_PROXY`...), are unknown. An `ARG` before the first
`FROM` is seen only by `FROM` lines (`FROM ${BASE_IMAGE}`, which may name a
stage) and by an `ARG NAME` in a stage; one in a stage until the stage ends.
A stage built from another keeps its `ENV`s; its `ARG`s are unknown there
(builders differ on whether they pass them on). A name that an `ENV` and an
`ARG` set to different values is unknown (BuildKit and the classic builder
disagree on which one wins).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from types import MappingProxyType

from ci_checks.core.diagnostics import Span
from ci_checks.core.source import FileLocator, SourceFile
from ci_checks.model.files.effects import Write
from ci_checks.model.files.flow import Flow, Origin, Walker, runs_standard_input
from ci_checks.model.files.places import CONTEXT, ROOT, STAGE, Place, Scope
from ci_checks.syntax import shell
from ci_checks.syntax.dockerfile import Dockerfile, Instruction, flags_end
from ci_checks.syntax.shell import Command, Word

_ENV_PAIR = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\"[^\"]*\"|'[^']*'|\S*)")
_ARG = re.compile(r"(?<!\S)(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<value>\"[^\"]*\"|'[^']*'|\S*))?(?!\S)")
_MOUNT = re.compile(r"--mount=(?P<options>\S+)")
_FEEDS = re.compile(r"\s*<<-?[\"']?(?P<marker>[A-Za-z_][A-Za-z0-9_]*)")
_ARCHIVE = re.compile(r"\.(tar|tar\.(gz|bz2|xz|zst)|tgz|tbz2|txz)\Z")


PREDEFINED_ARGUMENTS = frozenset(
    {
        *(f"{side}{part}" for side in ("TARGET", "BUILD") for part in ("PLATFORM", "OS", "ARCH", "VARIANT")),
        *(name for proxy in ("HTTP", "HTTPS", "FTP", "NO", "ALL") for name in (f"{proxy}_PROXY", f"{proxy}_proxy")),
        "SOURCE_DATE_EPOCH",
    }
)
"""Arguments BuildKit sets for every build (also those named `BUILDKIT_...`): their values are the builder's."""

NONE_PASSED: Mapping[str, str | None] = MappingProxyType({})
"""The build arguments of a build that passes none: every `ARG` has its default."""


@dataclass(frozen=True, eq=False)
class Source:
    """A `COPY`/`ADD` source: the word, the place it names with the variables known there substituted (in the
    context, or in a stage for `--from=`; None for a URL, a variable without a known value or another image),
    and the instruction's keyword."""

    word: Word
    place: Place | None
    keyword: str


@dataclass(frozen=True, eq=False)
class Mount:
    """A `RUN --mount=type=bind` source: as written, where, the place it names (in the context, or in the stage
    `from=` names, its variables substituted; None for an image's, a variable without a known value, a quoted
    value), and that stage's name (None: the context)."""

    written: str
    span: Span
    place: Place | None
    stage: str | None


@dataclass(eq=False)
class Stage:
    index: int
    name: str | None
    image: str
    flow: Flow
    span: Span
    cwd: Place | None = field(default_factory=lambda: Place(ROOT))
    variables: dict[str, str | None] = field(default_factory=dict)
    """The working directory and the variables known after the instructions read so far."""
    environment: dict[str, str | None] = field(default_factory=dict)
    """The variables `ENV` set, here or in the stage this one is built from."""


@dataclass(eq=False)
class Image:
    """A Dockerfile (repository path `path`) built from context `context` (a repository folder; None: unknown)
    with build arguments `arguments` (each name's value, None: unknown; None for all: any `ARG` may be set)."""

    path: str
    context: str | None
    arguments: Mapping[str, str | None] | None = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    mounts: list[Mount] = field(default_factory=list)

    @property
    def flows(self) -> list[Flow]:
        return [stage.flow for stage in self.stages]

    _named: dict[str, Stage] = field(default_factory=dict)
    """The stages by name (lowercase; the first of a name): a file of thousands of stages looks each up at once."""

    def stage(self, name: str) -> Stage | None:
        found = self._named.get(name.lower())
        if found is not None:
            return found
        if name.isdigit() and int(name) < len(self.stages):
            return self.stages[int(name)]
        return None

    def add(self, stage: Stage) -> None:
        self.stages.append(stage)
        if stage.name is not None:
            self._named.setdefault(stage.name.lower(), stage)

    def places(self) -> list[Place]:
        """Every place of the image's file system its instructions write (COPY destinations, clones, mkdirs...)."""
        return [
            event.effect.place
            for flow in self.flows
            for event in flow.writes
            if isinstance(event.effect, Write) and event.effect.place is not None and event.effect.place.base == ROOT
        ]


def image(
    dockerfile: Dockerfile,
    path: str,
    context: str | None,
    is_folder: Callable[[str], bool],
    arguments: Mapping[str, str | None] | None = NONE_PASSED,
) -> Image:
    """`dockerfile` (at repository path `path`) built from repository folder `context` with build arguments
    `arguments`; `is_folder` says whether a repository path is a folder (a `COPY dir /x` copies the folder's
    contents, `COPY file /x/` the file)."""
    built = Image(path, context, arguments)
    stage: Stage | None = None
    declared: dict[str, str | None] = {}  # the `ARG`s before the first `FROM`
    for instruction, parts in dockerfile.instruction_parts():
        keyword = instruction.keyword
        if keyword == "FROM":
            stage = _stage(built, instruction, parts, context, Scope(None, declared))
            continue
        if stage is None:
            if keyword == "ARG":
                for name, default in _declared(instruction.arguments):
                    declared[name] = _argument(arguments, name, default, Scope(None, declared), None)
            continue
        scope = Scope(stage.cwd, dict(stage.variables))
        if keyword == "WORKDIR":
            place = scope.place(instruction.arguments.strip())
            stage.cwd = place
            if place is not None:
                stage.flow.note(Write("create", place), instruction.span, None, None)
        elif keyword == "ENV":
            values = _env(instruction.arguments, scope)
            stage.variables.update(values)
            stage.environment.update(values)
        elif keyword == "ARG":
            here = Scope(stage.cwd, stage.variables)  # read, not copied: `ARG A=1 B=$A` sees `A`
            for name, default in _declared(instruction.arguments):
                value = _argument(arguments, name, default, here, declared.get(name))
                if name in stage.environment and stage.environment[name] != value:
                    value = None  # BuildKit lets the later of the two win, the classic builder the `ENV`
                stage.variables[name] = value
        elif keyword in ("COPY", "ADD"):
            _copy(built, stage, instruction, parts, scope, is_folder)
        elif keyword == "RUN":
            _run(built, stage, instruction, parts, scope, dockerfile.source)
    return built


def _declared(text: str) -> list[tuple[str, str | None]]:
    """The names an `ARG` declares (`ARG A=1 B`), each with its default as written (None: no default)."""
    return [(match.group("name"), match.group("value")) for match in _ARG.finditer(text)]


def _argument(
    passed: Mapping[str, str | None] | None, name: str, default: str | None, scope: Scope, first: str | None
) -> str | None:
    """The value of `ARG name[=default]`: the build's, else the default read in `scope`, else `first` (the value of
    the `ARG` before the first `FROM`, for one declared again in a stage); None when it cannot be known."""
    if passed is None or name in PREDEFINED_ARGUMENTS or name.startswith("BUILDKIT_"):
        return None
    if name in passed:
        return passed[name]
    return _value(default, scope) if default is not None else first


def _value(written: str, scope: Scope) -> str | None:
    """The value of an `ENV` or `ARG` as written (quotes removed, variables substituted); None when a variable
    without a known value is left in it."""
    if len(written) >= 2 and written[0] == written[-1] == "'":
        value: str | None = written[1:-1]  # single quotes: no substitution
    else:
        value = scope.expand(written.strip('"'))
    return None if value is None or "$" in value else value


def _stage(
    built: Image, instruction: Instruction, parts: list[Command | shell.Script], context: str | None, scope: Scope
) -> Stage:
    """A stage from its `FROM` line, whose image may be named by an `ARG` before the first `FROM` (`scope`)."""
    words = [word.value for word in _words(parts)[1:] if not word.value.startswith("--")]
    written = words[0] if words else ""
    expanded = scope.expand(written)
    image_name = expanded if expanded is not None and "$" not in expanded else written
    name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
    parent = built.stage(image_name)
    flow = Flow()
    if context is not None:
        flow.note(Write("checkout", Place(CONTEXT), this_repository=True, root=context), instruction.span, None, None)
    else:
        flow.note(Write("opaque", Place(CONTEXT)), instruction.span, None, None)
    if parent is not None:
        flow.lookups[ROOT] = partial(_origin_at_end, parent.flow)
    flow.lookups[STAGE] = partial(_stage_origin, built)
    stage = Stage(len(built.stages), name, image_name, flow, instruction.span)
    if parent is not None:
        stage.cwd = parent.cwd
        stage.variables = {  # the parent's `ENV`s; its `ARG`s, which builders differ on passing on, are unknown
            name: value if name in parent.environment and parent.environment[name] == value else None
            for name, value in parent.variables.items()
        }
        stage.environment = {name: stage.variables[name] for name in parent.environment}
    built.add(stage)
    return stage


def _origin_at_end(flow: Flow, place: Place, ignore: frozenset[str]) -> Origin:
    return flow.origin(place, flow.end, ignore)


def _stage_origin(built: Image, place: Place, ignore: frozenset[str]) -> Origin:
    stage = built.stage(place.base[len(STAGE) :])
    if stage is None:
        return Origin(None)
    return stage.flow.origin(replace(place, base=ROOT), stage.flow.end, ignore)


def _words(parts: list[Command | shell.Script]) -> list[Word]:
    return parts[0].words if parts and isinstance(parts[0], Command) else []


def _env(arguments: str, scope: Scope) -> dict[str, str | None]:
    pairs = {m.group("name"): m.group("value") for m in _ENV_PAIR.finditer(arguments)}
    if not pairs:  # the old `ENV NAME value` form
        name, _, value = arguments.strip().partition(" ")
        pairs = {name: value.strip()} if name else {}
    return {name: _value(value, scope) for name, value in pairs.items()}


def _copy(
    built: Image,
    stage: Stage,
    instruction: Instruction,
    parts: list[Command | shell.Script],
    scope: Scope,
    is_folder: Callable[[str], bool],
) -> None:
    words = _words(parts)[1:]
    flags = [word.value for word in words if word.value.startswith("--")]
    operands = [word for word in words if not word.value.startswith("--")]
    if len(operands) < 2:
        return
    *sources, destination_word = operands
    destination = scope.place(destination_word.value)
    origin = next((flag.split("=", 1)[1] for flag in flags if flag.startswith("--from=")), None)
    base: str | None = CONTEXT  # `--from=` an image, not a stage of the file: a place that cannot be known
    if origin is not None:
        base = STAGE + origin if built.stage(origin) is not None else None
    into_folder = destination_word.value.endswith("/") or len(sources) > 1
    for word in sources:
        written = scope.expand(word.value)
        place = _source_place(written, base)
        if word.value.startswith("<<"):  # a here-document: into a folder, a file named after its marker
            name = word.value[2:].lstrip("-").strip("\"'")
            created = destination.joined(name) if into_folder and destination is not None and name else destination
            stage.flow.note(Write("create", created), instruction.span, None, None)
            continue
        built.sources.append(Source(word, place, instruction.keyword))
        if destination is None:
            stage.flow.note(Write("copy", None), instruction.span, None, None)
            continue
        if place is None:
            downloaded = written is not None and "://" in written
            stage.flow.note(Write("download" if downloaded else "copy", destination), instruction.span, None, None)
            continue
        if instruction.keyword == "ADD" and _ARCHIVE.search(place.path):
            stage.flow.note(Write("unpack", destination), instruction.span, None, None)  # ADD unpacks a local archive
            continue
        whole = place.glob or (place.base == CONTEXT and _is_folder(built.context, place.path, is_folder))
        target = destination if whole or not into_folder else destination.joined(posixpath.basename(place.path))
        stage.flow.note(Write("copy", target, place.literal_folder()), instruction.span, None, None)


def _source_place(value: str | None, base: str | None) -> Place | None:
    """The place source `value` (its variables substituted; None: too long) names in `base` (the context or a
    stage; None: one that cannot be known)."""
    if value is None or "://" in value or value.startswith("git@") or "$" in value or base is None:
        return None
    return Place(base).joined(value.lstrip("/"))


def _is_folder(context: str | None, path: str, is_folder: Callable[[str], bool]) -> bool:
    if context is None:
        return False
    return is_folder(posixpath.normpath(posixpath.join(context, path)))  # normpath("") is ".", the root


def _run(
    built: Image,
    stage: Stage,
    instruction: Instruction,
    parts: list[Command | shell.Script],
    scope: Scope,
    file: SourceFile,
) -> None:
    flags = flags_end(instruction.arguments)
    for match in _MOUNT.finditer(instruction.arguments):
        options = dict(item.split("=", 1) for item in match.group("options").split(",") if "=" in item)
        target = scope.place(options.get("target", options.get("dst", options.get("destination", ""))))
        if target is None:
            continue
        if options.get("type", "bind") == "bind":
            origin = options.get("from")
            source = options.get("source", options.get("src", ""))  # none: the root of the context or stage
            place = _source_place(scope.expand(source), CONTEXT if origin is None else STAGE + origin)
            stage.flow.note(Write("copy", target, place), instruction.span, None, None)
            if source and match.start() < flags:  # an option of the `RUN`, not a word of its script
                where = _option_span(instruction, file, match.start("options"), match.group("options"), source)
                known = place if not any(quote in source for quote in "\"'") else None
                built.mounts.append(Mount(source, where, known, origin))
        else:
            stage.flow.note(Write("named", target), instruction.span, None, None)
    walker = Walker(stage.flow, None)
    for part in parts:
        if isinstance(part, shell.Script):
            walker.script(part, scope.copy())
        else:
            walker.command(part, scope.copy())
    scripts = [part for part in parts if isinstance(part, shell.Script)]
    for heredoc in instruction.heredocs:  # `RUN bash -ex <<EOF`: the here-document is the script bash runs
        if any(_fed(script, command, heredoc.marker) for script in scripts for command in script.commands()):
            body = shell.parse(heredoc.body, FileLocator(file, heredoc.offsets))
            Walker(stage.flow, None).script(body, scope.copy())


def _option_span(instruction: Instruction, file: SourceFile, start: int, options: str, value: str) -> Span:
    """Where the `source=`/`src=` value of a `--mount` option starting at `start` of the arguments is written."""
    offset = start
    for item in options.split(","):
        key, _, written = item.partition("=")
        if key in ("source", "src") and written == value:
            offset += len(key) + 1
            break
        offset += len(item) + 1
    return FileLocator(file, instruction.offsets).span(offset, offset + len(value))


def _fed(script: shell.Script, command: Command, marker: str) -> bool:
    """Whether `command` is a shell that runs the here-document `marker` (`bash -ex <<"EOF"`): a `RUN` line holds
    no here-document body, so the redirection is read from the text that follows the command."""
    follows = _FEEDS.match(script.text, command.end)
    return follows is not None and follows.group("marker") == marker and runs_standard_input(command)
