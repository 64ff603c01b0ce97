"""What a command does to files: what it writes and where, what it does to a git tree, where its output goes.

`command_effects` reads one command in its `Scope` and yields:

- `Write`s: a place a command puts something at. `kind` says how sure that is
  and what is there: `clone` (another repository: `git clone`, `gh repo
  clone`, `git init DIR`, `git worktree add`), `git` (a tree changed in place: `git checkout`,
  `reset`, `pull`, `submodule`), `download` (`curl -o`, `wget`, `gh release
  download`, `pip download -d`, `rsync`/`scp` from another host), `create`
  (`mkdir`, `touch`, `tee`, a redirection), `copy` (`cp`, `mv`, `rsync`,
  `ln`, `install`, with where the content came from), `unpack` (`tar -x`, `unzip`, `7z x`: unknown names
  under a folder), and `named` (a program ci-checks does not know named the
  place among its arguments: it may have written there). A write whose place
  cannot be read has place None: it may be anywhere.
- `GitOperation`s: `git fetch`, `checkout`, `reset` and the like, with the
  folder they act in and the ref they name, so that which tree a folder holds
  can be followed; a clone is one too (`clone`, with its `--branch`), since it
  fetches every ref and checks one out.
- `Output`s: `NAME=value` lines written to `$GITHUB_OUTPUT` or `$GITHUB_ENV`.

Programs known to write nothing that matters here (`echo`, `grep`, `pip
install`, `apt-get`...) yield nothing. Writes to `$GITHUB_OUTPUT`,
`$GITHUB_ENV`, `$GITHUB_PATH`, `$GITHUB_STEP_SUMMARY`, `/dev/null` and the
standard streams are not files.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import takewhile
from typing import Literal

from ci_checks.model.files.places import Place, Scope
from ci_checks.model.references import docker_run_mounts, suffix_word, unwrapped
from ci_checks.syntax.shell import Command, Pipeline, Redirect, Word

WriteKind = Literal["checkout", "clone", "git", "download", "create", "copy", "unpack", "named", "opaque"]

_RUNNER_FILES = re.compile(r"\$\{?GITHUB_(OUTPUT|ENV|PATH|STEP_SUMMARY|STATE)\}?\Z")
_OUTPUT_FILES = re.compile(r"\$\{?GITHUB_(?P<which>OUTPUT|ENV)\}?\Z")
_DEVICES = re.compile(r"/dev/|&")
_WRITING_REDIRECTS = {">", ">>", "&>", "&>>", ">|"}
_QUIET = {
    "echo", "printf", "cat", "grep", "egrep", "fgrep", "awk", "ls", "test", "[", "[[", "true", "false", "exit",
    "return", "set", "shopt", "export", "unset", "pwd", "which", "type", "sleep", "nproc", "uname", "date", "whoami",
    "id", "df", "du", "free", "nvidia-smi", "rocm-smi", "rocminfo", "amd-smi", "hipconfig", "apt", "apt-get", "yum",
    "dnf", "apk", "brew", "chmod", "chown", "rm", "rmdir", "kill", "pkill", "ps", "jq", "yq", "head", "tail", "wc",
    "sort", "uniq", "cut", "tr", "basename", "dirname", "realpath", "readlink", "seq", "env", "printenv", "read",
    "local", "declare", "readonly", "shift", "wait", "trap", "eval", "ulimit", "umask", "hostname", "lscpu", "lspci",
    "nvcc", "gh", "curl", "wget", "conda", "mamba", "micromamba", "pip", "pip3", "uv", "npm", "ldconfig", "ccache",
    "sccache", "docker", "podman", "git", "diff", "cmp", "md5sum", "sha256sum", "sha1sum", "stat", "file", "find",
    "getent", "groups", "sync", "systemctl", "service", "ray", "rustup", "rustc", "protoc", "go", "node",
}  # fmt: skip
"""Programs that put no file a later command reads by name, or whose writes are read by their own rules below."""
SILENT = _QUIET - {"gh", "curl", "wget", "pip", "pip3", "uv", "docker", "podman", "git", "env"}
"""Programs that neither read a file by name nor write one: a command of one, without redirections, does nothing
the file model notes."""
_BUILDERS = {"make", "gmake", "ninja", "meson", "bazel", "bazelisk", "cargo", "gradle", "gradlew", "mvn", "scons",
             "configure", "autoreconf", "autogen.sh", "bootstrap.sh", "build.sh"}  # fmt: skip
"""Programs that write what they build under the folder they run in, without naming it."""
_GIT_IN_PLACE = {"checkout", "switch", "reset", "pull", "merge", "rebase", "restore", "submodule", "am", "cherry-pick",
                 "revert", "stash", "clean"}  # fmt: skip
"""Subcommands that change the files of the tree they run in."""
_GIT_TREE_OPERATIONS = _GIT_IN_PLACE | {"fetch", "init"}
"""Subcommands that change which tree a folder holds or will hold."""
_GIT_PATHS = {"checkout", "reset"}
"""Subcommands that, given paths after a ref, put what the ref holds at those paths."""
_GIT_VALUE_OPTIONS = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"}
_INIT_VALUE_OPTIONS = {"-b", "--initial-branch", "--template", "--separate-git-dir", "--object-format", "--ref-format"}
_CLONE_VALUE_OPTIONS = {"-b", "--branch", "-o", "--origin", "--depth", "--reference", "--reference-if-able",
                        "--separate-git-dir", "-c", "--config", "--filter", "-j", "--jobs", "-u", "--upload-pack",
                        "--shallow-since", "--shallow-exclude", "--template", "--server-option",
                        "--bundle-uri", "--upstream-remote-name"}  # fmt: skip
"""The options of `git clone` that take a value, and `gh repo clone`'s own (`-u` is both's)."""
_CURL_VALUE_OPTIONS = {"-H", "--header", "-d", "--data", "--data-raw", "--data-binary", "-u", "--user", "-X",
                       "--request", "-A", "--user-agent", "-e", "--referer", "-m", "--max-time", "--retry",
                       "--retry-delay", "--retry-max-time", "--connect-timeout", "-w", "--write-out", "-F", "--form",
                       "-b", "--cookie", "-c", "--cookie-jar", "-x", "--proxy", "--cacert", "--cert", "--key", "-K",
                       "--config", "-T", "--upload-file", "-r", "--range", "-z", "--time-cond", "--limit-rate",
                       "--resolve", "--interface", "-Y", "-y", "--speed-limit", "--speed-time"}  # fmt: skip
_WGET_VALUE_OPTIONS = {"-t", "--tries", "-T", "--timeout", "--header", "-U", "--user-agent", "--user", "--password",
                       "-e", "--execute", "-a", "--append-output", "-o", "--output-file", "-O", "--output-document",
                       "-w", "--wait", "-i", "--input-file", "-Q", "--quota", "--limit-rate"}  # fmt: skip
_CP_VALUE_OPTIONS = {"-t", "--target-directory", "-S", "--suffix"}
_COPIERS = {
    "cp": _CP_VALUE_OPTIONS,
    "mv": _CP_VALUE_OPTIONS,
    "ln": _CP_VALUE_OPTIONS,
    "install": _CP_VALUE_OPTIONS | {"-m", "--mode", "-o", "--owner", "-g", "--group"},
    "rsync": {"-e", "--rsh", "--exclude", "--include", "--exclude-from", "--include-from", "--files-from", "--filter",
              "-f", "--chmod", "--chown", "-T", "--temp-dir", "--partial-dir", "--backup-dir", "--suffix", "--log-file",
              "--rsync-path", "--compare-dest", "--copy-dest", "--link-dest", "--password-file", "--port", "--timeout",
              "--bwlimit", "--max-size", "--min-size", "-B", "--block-size", "-M", "--remote-option"},
    "scp": {"-P", "-i", "-o", "-F", "-J", "-l", "-S", "-c"},
}  # fmt: skip
"""Copying programs, with their options that take a value (`cp -f` forces, `rsync -f` filters, `rsync -t` keeps
times, `cp -t` names the target folder)."""
_NOT_A_NAME = re.compile(r"\s|^[\d.,:%]*$")
"""A word no program takes as a path it writes: text with spaces, a number, a version."""
_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)\Z", re.DOTALL)


@dataclass(frozen=True, eq=False)
class Write:
    """Something a command or step puts at `place` (None: somewhere that cannot be known).

    `source` is where a copy's content came from; `this_repository` says a checkout is of this repository, and
    `root` is then the repository path checked out there ("" for the whole repository).
    """

    kind: WriteKind
    place: Place | None
    source: Place | None = None
    this_repository: bool = False
    root: str = ""


@dataclass(frozen=True)
class GitOperation:
    """A git command acting on the tree in `folder` (None: unknown): `operation` is its subcommand, `ref` the
    ref it names (the first operand that is not an option; None without one). With `paths`, it names paths
    (`git checkout REF -- f`, `git reset REF f`, `git checkout -- f`): it puts what the ref (or the index) holds
    there, and leaves the tree at the ref it was at."""

    operation: str
    folder: Place | None
    ref: str | None
    paths: bool = False


@dataclass(frozen=True)
class Output:
    """`NAME=value` written to `$GITHUB_OUTPUT` (`to_env` False) or `$GITHUB_ENV` (True)."""

    name: str
    value: str
    to_env: bool


Effect = Write | GitOperation | Output


def command_effects(command: Command, scope: Scope) -> Iterator[Effect]:
    """What `command` does to files, its words read in `scope`."""
    for redirect in command.redirects:
        yield from redirect_writes(redirect, scope)
    words = unwrapped(command.words)
    if not words or not words[0].static or words[0].value.startswith("-"):
        return  # `command -v x` runs nothing
    name = words[0].value.rsplit("/", 1)[-1]
    arguments = words[1:]
    if name == "git":
        yield from _git(arguments, scope)
    elif name == "gh":
        yield from _gh(arguments, scope)
    elif name == "curl":
        yield from _curl(arguments, scope)
    elif name == "wget":
        yield from _wget(arguments, scope)
    elif name in ("mkdir", "touch"):
        for word in _operands(arguments, {"-m", "--mode"}):
            yield Write("create", scope.where(word.value))
    elif name == "tee":
        for word in _operands(arguments, set()):
            if not _not_a_file(word.value):
                yield Write("create", scope.where(word.value))
    elif name in _COPIERS:
        yield from _copy(name, arguments, scope)
    elif name == "tar":
        yield from _tar(arguments, scope)
    elif name in ("unzip", "7z", "7za"):
        yield from _unzip(name, arguments, scope)
    elif name in ("gunzip", "xz", "bunzip2", "zstd") or (name == "gzip" and "-d" in (w.value for w in arguments)):
        for word in _operands(arguments, set()):
            place = scope.where(word.value)
            yield Write("create", place.joined("..").joined(_unzipped(place.path)) if place is not None else None)
    elif name in ("pip", "pip3") or (name == "uv" and arguments[:1] and arguments[0].value == "pip"):
        yield from _pip(arguments[1:] if name == "uv" else arguments, scope)
    elif name == "docker" and arguments[:1] and arguments[0].value in ("run", "cp", "create"):
        yield from _docker(arguments, scope)
    elif name not in _QUIET and name not in ("cd", "pushd", "popd"):
        if name in _BUILDERS or (name == "cmake" and any(word.value == "--build" for word in arguments)):
            yield Write("named", scope.cwd)  # a build writes its outputs under the folder it runs in
        yield from _named(arguments, scope)


def pipeline_outputs(pipeline: Pipeline) -> Iterator[Output]:
    """`echo "NAME=value" | tee -a "$GITHUB_OUTPUT"`: what the last stage appends, from what the first prints."""
    stages = [stage for stage in pipeline.stages if isinstance(stage, Command)]
    if len(stages) != len(pipeline.stages) or len(stages) < 2:
        return
    last = stages[-1]
    if last.name != "tee":
        return
    for word in last.words[1:]:
        match = _OUTPUT_FILES.match(word.value)
        if match is not None:
            yield from _printed(stages[0], match.group("which") == "ENV")


def redirect_writes(redirect: Redirect, scope: Scope) -> Iterator[Write]:
    """`> file`, `>> file`, `&> file`: a file created, unless it is a device or a file of the runner's."""
    if redirect.operator not in _WRITING_REDIRECTS or redirect.target is None:
        return  # only `>&-` and `<&-`, which close a stream, have no target
    target = redirect.target.value
    if target and not _not_a_file(target):
        yield Write("create", scope.where(target))


def command_outputs(command: Command) -> Iterator[Output]:
    """`echo "NAME=value" >> "$GITHUB_OUTPUT"`."""
    for redirect in command.redirects:
        match = _OUTPUT_FILES.match(redirect.target.value) if redirect.target is not None else None
        if match is not None and redirect.operator in (">>", ">"):
            yield from _printed(command, match.group("which") == "ENV")


def _printed(command: Command, to_env: bool) -> Iterator[Output]:
    if command.name not in ("echo", "printf"):
        return
    words = [word.value for word in command.words[1:] if not word.value.startswith("-")]
    if command.name == "printf":
        words = words[1:] if words and "%" in words[0] else words
    match = _ASSIGNMENT.match(" ".join(words))
    if match is not None:
        yield Output(match.group("name"), match.group("value"), to_env)


def _not_a_file(target: str) -> bool:
    return bool(_DEVICES.match(target)) or bool(_RUNNER_FILES.match(target)) or target in ("-",)


def _operands(arguments: list[Word], value_options: set[str]) -> list[Word]:
    """The arguments that are not options nor the values of `value_options`; after `--`, every one."""
    found: list[Word] = []
    skip = False
    for index, word in enumerate(arguments):
        if skip:
            skip = False
        elif word.value == "--":
            return found + arguments[index + 1 :]
        elif word.value.startswith("-") and word.value != "-":
            skip = word.value in value_options
        else:
            found.append(word)
    return found


def _option_value(arguments: list[Word], names: tuple[str, ...], attached: tuple[str, ...] = ()) -> Word | None:
    """The value of the last of these options (`-o FILE`, `--output=FILE`, `-oFILE`, `-sLo FILE`); None when it has
    none (`--dir=` is empty, a last `-o` lacks one: the program then fails or uses no value of its own)."""
    found: Word | None = None
    short = {name[1] for name in names if len(name) == 2}
    for index, word in enumerate(arguments):
        value = word.value
        bundled = _bundles(value, value[-1]) and value[-1] in short  # `-fsSLo FILE`
        if value in names or bundled:
            found = arguments[index + 1] if index + 1 < len(arguments) else None
            continue
        for prefix in attached:
            if value.startswith(prefix):
                found = suffix_word(word, len(prefix))  # None for an empty value
                break
    return found


def _git(arguments: list[Word], scope: Scope) -> Iterator[Effect]:
    index = 0
    folder = scope.cwd
    while index + 1 < len(arguments) and arguments[index].value.startswith("-"):  # a last option runs nothing
        value = arguments[index].value
        if value == "-C":
            folder = scope.place(arguments[index + 1].value, folder)
        elif value in ("--git-dir", "--work-tree") or value.startswith(("--git-dir=", "--work-tree=")):
            folder = None
        index += 2 if value in _GIT_VALUE_OPTIONS else 1
    if index >= len(arguments):
        return
    operation = arguments[index].value
    rest = arguments[index + 1 :]
    if operation == "clone":
        yield from _clone(rest, scope, folder)
        return
    if operation == "worktree" and rest[:1] and rest[0].value == "add":
        operands = _operands(rest[1:], {"-b", "-B", "--reason"})
        if operands:
            yield Write("clone", scope.where(operands[0].value, folder))
        return
    if operation not in _GIT_TREE_OPERATIONS:
        return
    if operation == "init":
        yield from _init(rest, scope, folder)
        return
    before_paths = list(takewhile(lambda word: word.value != "--", rest))
    operands = _operands(before_paths, {"-b", "-B", "-c", "-C", "--depth", "-m", "--message", "-o", "--origin"})
    ref = next((word.value for word in operands if operation not in ("fetch", "pull") or word is not operands[0]), None)
    paths = operation in _GIT_PATHS and (len(before_paths) + 1 < len(rest) or len(operands) > 1)
    yield GitOperation(operation, folder, ref, paths)
    if operation in _GIT_IN_PLACE:
        yield Write("git", folder)


def _init(rest: list[Word], scope: Scope, folder: Place | None) -> Iterator[Effect]:
    """`git init DIR` makes folder DIR a repository, which a `git fetch` and `git checkout FETCH_HEAD` there then
    fill as a clone would; `git init` alone makes the folder it runs in one, which was there already. It names no
    ref."""
    operands = _operands(rest, _INIT_VALUE_OPTIONS)
    place = scope.where(operands[0].value, folder) if operands else folder
    if operands and (place is None or place != folder):
        yield Write("clone", place)
    yield GitOperation("init", place, None)


def _clone(rest: list[Word], scope: Scope, folder: Place | None) -> Iterator[Effect]:
    """`git clone URL [FOLDER]` clones into FOLDER, else into the name git guesses from the URL: its last name after
    a `/` or a `:` (`host:r.git`), less `.git` ("" names no place). The clone fetches every ref into the tree
    there and checks out its `--branch` (None: the remote's default)."""
    operands = _operands(rest, _CLONE_VALUE_OPTIONS)
    if not operands:
        return
    if len(operands) >= 2:
        named = operands[1].value
    else:
        named = re.split("[/:]", operands[0].value.rstrip("/"))[-1].removesuffix(".git")
    yield Write("clone", scope.where(named, folder))
    branch = _option_value(rest, ("-b", "--branch"), ("--branch=",))
    yield GitOperation("clone", scope.place(named, folder), branch.value if branch is not None else None)


def _gh(arguments: list[Word], scope: Scope) -> Iterator[Effect]:
    values = [word.value for word in arguments]
    if values[:2] == ["repo", "clone"]:  # `git clone` of the repository's URL, with the git flags after `--`
        separator = values.index("--") if "--" in values else len(values)
        yield from _git(arguments[1:separator] + arguments[separator + 1 :], scope)
    elif values[:2] == ["pr", "checkout"]:
        yield GitOperation("checkout", scope.cwd, values[2] if len(values) > 2 else None)
        yield Write("git", scope.cwd)
    elif values[:2] in (["run", "download"], ["release", "download"], ["attestation", "download"]):
        directory = _option_value(arguments, ("-D", "--dir"), ("--dir=",))
        file = _option_value(arguments, ("-O", "--output"), ("--output=",))
        if file is not None:
            if file.value != "-":  # `-`: to standard output
                yield Write("download", scope.where(file.value))
        else:
            yield Write("download", scope.where(directory.value) if directory is not None else scope.cwd)


def _curl(arguments: list[Word], scope: Scope) -> Iterator[Write]:
    folder_word = _option_value(arguments, ("--output-dir",), ("--output-dir=",))
    folder = scope.where(folder_word.value) if folder_word is not None else scope.cwd
    output = _option_value(arguments, ("-o", "--output"), ("--output=", "-o"))
    if output is not None:
        if output.value != "-":
            yield Write("download", scope.where(output.value, folder))
        return
    if any(
        word.value in ("--remote-name", "--remote-name-all") or _bundles(word.value, "O") for word in arguments
    ):  # `-O` is a bundle of one
        urls = [word for word in _operands(arguments, _CURL_VALUE_OPTIONS) if "://" in word.value]
        for url in urls:
            yield Write("download", _remote_name(url.value, folder, scope))


def _wget(arguments: list[Word], scope: Scope) -> Iterator[Write]:
    output = _option_value(arguments, ("-O", "--output-document"), ("--output-document=", "-O"))
    if output is not None:
        if output.value != "-":
            yield Write("download", scope.where(output.value))
        return
    prefix = _option_value(arguments, ("-P", "--directory-prefix"), ("--directory-prefix=", "-P"))
    folder = scope.where(prefix.value) if prefix is not None else scope.cwd
    for url in _operands(arguments, _WGET_VALUE_OPTIONS | {"-P", "--directory-prefix"}):
        yield Write("download", _remote_name(url.value, folder, scope, wget=True))


def _remote_name(url: str, folder: Place | None, scope: Scope, *, wget: bool = False) -> Place | None:
    """Where a download named by its URL lands in `folder`: under the last segment of the URL's path, which wget
    names `index.html` when it is empty and follows with the URL's query, its `/` written `%2F` (curl then fails
    or, in later versions, picks a name of its own); the folder when the name cannot be known."""
    address, mark, query = url.partition("#")[0].partition("?")
    name = (address.partition("://")[2] or address).partition("/")[2].rpartition("/")[2]
    if wget:
        name = (name or "index.html") + mark + query.replace("/", "%2F")
    if not name or "$" in name or folder is None:
        return folder
    return scope.where(name, folder)


def _bundles(value: str, flag: str) -> bool:
    """Whether a bundle of short flags (`-sLO`) holds `flag`."""
    return value.startswith("-") and flag in value[1:] and value[1:].isalpha()  # `--x` holds a `-`, no letter


def _copy(name: str, arguments: list[Word], scope: Scope) -> Iterator[Write]:
    value_options = _COPIERS[name]
    target_word = None
    if "-t" in value_options:
        target_word = _option_value(arguments, ("-t", "--target-directory"), ("--target-directory=",))
    operands = _operands(arguments, value_options)
    if target_word is not None:
        sources, target = operands, target_word.value
    elif len(operands) >= 2:
        sources, target = operands[:-1], operands[-1].value
    elif name == "ln" and operands:
        sources, target = operands, "./"  # `ln -s /opt/x` links it here under its own name
    else:
        return
    remote = name in ("rsync", "scp")
    if remote and _on_host(target):
        return  # to another host
    place = scope.place(target)
    if place is None:
        yield Write("copy", scope.where(target))  # somewhere ci-checks cannot tell, with unknown content
        return
    if len(sources) == 1 and not target.endswith("/") and target_word is None:
        kind: WriteKind = "download" if remote and _on_host(sources[0].value) else "copy"
        yield Write(kind, place, None if kind == "download" else scope.place(sources[0].value))
        return
    for source in sources:
        if remote and _on_host(source.value):  # from another host: content ci-checks cannot know
            # under its name there; a folder's contents (`h:x/`, no name) land in the target itself
            yield Write("download", place.joined(posixpath.basename(source.value.split(":", 1)[1])))
            continue
        source_place = scope.place(source.value)
        name_there = posixpath.basename(source_place.path) if source_place is not None else ""
        if not name_there or source.value.endswith("/"):
            yield Write("copy", place, source_place)
        else:
            yield Write("copy", place.joined(name_there), source_place)


def _on_host(value: str) -> bool:
    """Whether an `rsync`/`scp` operand names a path on another host (`host:path`, `user@host:path`)."""
    return ":" in value.partition("/")[0]


def _tar(arguments: list[Word], scope: Scope) -> Iterator[Write]:
    if not arguments:
        return  # `tar` alone writes nothing
    values = [word.value for word in arguments]
    first = values[0]  # the old-style options when it is all letters: `tar xzf a.tgz`
    extracting = "--extract" in values or "--get" in values or any(_bundles(v, "x") for v in values)
    extracting = extracting or (first.isalpha() and "x" in first)
    folder_word = _option_value(arguments, ("-C", "--directory"), ("--directory=", "-C"))  # `-Cdeps` too
    if extracting:
        yield Write("unpack", scope.where(folder_word.value) if folder_word is not None else scope.cwd)
        return
    reading = any(
        value in ("--list", "--diff", "--compare") or _bundles(value, "t") or _bundles(value, "d") for value in values
    )
    if reading or (first.isalpha() and ("t" in first or "d" in first)):
        return  # `tar -tf x.tar` lists, `tar -df x.tar` compares: the archive is only read
    archive = _option_value(arguments, ("-f", "--file"), ("--file=",))
    inside = next((word for word in arguments if _bundles(word.value, "f")), None)
    if archive is None and inside is not None:  # `-cfz x`: f takes the rest of its bundle, `z`
        archive = suffix_word(inside, inside.value.index("f") + 1)
    elif archive is None and first.isalpha() and "f" in first and len(arguments) > 1:
        archive = arguments[1]  # `tar czf out.tgz`: the options of the first word take the next words
    if archive is not None and archive.value != "-":
        yield Write("create", scope.where(archive.value))


def _unzip(name: str, arguments: list[Word], scope: Scope) -> Iterator[Write]:
    if name == "unzip":
        folder = _option_value(arguments, ("-d",), ("-d",))
    else:
        folder = _option_value(arguments, (), ("-o",))
        if not arguments or arguments[0].value not in ("x", "e"):
            return
    yield Write("unpack", scope.where(folder.value) if folder is not None else scope.cwd)


def _unzipped(path: str) -> str:
    name = posixpath.basename(path)
    return name.rsplit(".", 1)[0] if "." in name else name


def _pip(arguments: list[Word], scope: Scope) -> Iterator[Write]:
    if not arguments:
        return
    subcommand = arguments[0].value
    options = {"download": ("-d", "--dest"), "wheel": ("-w", "--wheel-dir"), "install": ("-t", "--target")}
    names = options.get(subcommand)
    if names is None:
        return
    folder = _option_value(arguments[1:], names, tuple(f"{name}=" for name in names if name.startswith("--")))
    if folder is not None:
        yield Write("download", scope.where(folder.value))
    elif subcommand != "install":
        yield Write("download", scope.cwd)


def _docker(arguments: list[Word], scope: Scope) -> Iterator[Write]:
    if arguments[0].value == "cp":
        operands = _operands(arguments[1:], set())
        if len(operands) == 2 and ":" in operands[0].value:
            yield Write("download", scope.where(operands[1].value))
        return
    for mount in docker_run_mounts(arguments[1:]):
        if mount.kind == "volume" and mount.word.value.startswith((".", "/", "$", "~")):  # else a volume's name
            yield Write("named", scope.where(mount.word.value))


def _named(arguments: list[Word], scope: Scope) -> Iterator[Write]:
    """A program ci-checks does not know: each argument that names a place may be one it writes."""
    for word in arguments:
        value = word.value
        if value.startswith("-"):
            if "=" not in value:
                continue
            value = value.split("=", 1)[1]
        if not value or "://" in value or _NOT_A_NAME.search(value) or _not_a_file(value):
            continue
        place = scope.where(value)
        if place is not None and place.path and not place.glob:  # the base itself would be every file
            yield Write("named", place)
