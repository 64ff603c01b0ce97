"""The file model: what each step, command and Dockerfile instruction puts where, and what a read resolves to."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ci_checks.core import source
from ci_checks.core.diagnostics import Span
from ci_checks.core.repository import Repository
from ci_checks.model import Workflow
from ci_checks.model.files.docker import Image, Stage, image
from ci_checks.model.files.effects import GitOperation, Output, Write, command_effects
from ci_checks.model.files.flow import Flow, Walker
from ci_checks.model.files.jobs import JobFlow, checkout, job_flow
from ci_checks.model.files.places import CONTEXT, HOME, ROOT, STAGE, TEMP, WORKSPACE, Place, Scope, place_of, written
from ci_checks.model.files.python import PathMention, path_mentions
from ci_checks.model.files.repository import UNSURE, RepositoryFiles
from ci_checks.model.loading import Workspace
from ci_checks.model.references import docker_run_mounts
from ci_checks.rules.context import RepositoryContext
from ci_checks.syntax import dockerfile, yamlpos
from ci_checks.syntax.shell import Command, parse_fragment
from tests.ci.linter.conftest import MakeRepo, run_cli

W = Place(WORKSPACE)


def _flow(script: str, start: Place | None = W, variables: dict[str, str | None] | None = None) -> Flow:
    flow = Flow()
    Walker(flow, None).script(parse_fragment(script), Scope(start, dict(variables or {})))
    return flow


def _writes(script: str, start: Place | None = W) -> list[tuple[str, str | None]]:
    flow = _flow(script, start)
    return [
        (event.effect.kind, str(event.effect.place) if event.effect.place is not None else None)
        for event in flow.writes
        if isinstance(event.effect, Write)
    ]


def _workflow(text: str) -> Workflow:
    workflow = Workflow.from_document(yamlpos.parse(source.decode(".github/workflows/ci.yml", text.encode())))
    assert workflow is not None
    return workflow


def _job(steps: str, top: str = "") -> JobFlow:
    """The flow of a job with these steps (YAML indented by six spaces), in a workflow with `top` keys."""
    text = f"on: push\n{top}jobs:\n  job:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"
    return job_flow(_workflow(text).jobs["job"])


def _files(root: Path) -> RepositoryFiles:
    context = RepositoryContext(Workspace(Repository(root)), [], lambda path: True)
    return context.files


@pytest.mark.parametrize(
    ("text", "cwd", "expected"),
    [
        ("scripts/x.sh", W, Place(WORKSPACE, "scripts/x.sh")),
        ("$GITHUB_WORKSPACE/a/../b", None, Place(WORKSPACE, "b")),
        ("${{ github.workspace }}/b", None, Place(WORKSPACE, "b")),
        ("${GITHUB_WORKSPACE}", None, Place(WORKSPACE)),
        ("/opt/x/", None, Place(ROOT, "opt/x")),
        ("~/cache", None, Place(HOME, "cache")),
        ("${{ runner.temp }}/p", None, Place(TEMP, "p")),
        ("../../x", Place(WORKSPACE, "ci"), Place(WORKSPACE, "../x")),
        ("/../etc", None, Place(ROOT, "etc")),
        ("patches/*.patch", W, Place(WORKSPACE, "patches/*.patch", glob=True)),
        ("x.sh", None, None),
        ("$OTHER/x.sh", W, None),
        ("~user/x", W, None),
        ("a/${{ matrix.arch }}/b", W, None),
        ("https://example.com/x.sh", W, None),
        ("{a,b}/x", W, None),
        ("/X11/lib", None, Place(ROOT, "X11/lib")),
        ("/../Xorg/x", None, Place(ROOT, "Xorg/x")),
        ("$HOME/Xauthority", None, Place(HOME, "Xauthority")),
        ("/opt/../..", None, Place(ROOT)),
    ],
)
def test_a_word_names_a_place_or_nothing_that_can_be_known(text: str, cwd: Place | None, expected: Place) -> None:
    assert place_of(text, cwd) == expected


def test_variables_of_env_values_and_of_the_script_are_substituted() -> None:
    scope = Scope(W, {"ROOT": "${{ github.workspace }}/src", "P": "$ROOT/p", "GONE": None})
    assert scope.place("$P/x.patch") == Place(WORKSPACE, "src/p/x.patch")
    assert scope.place("${{ env.ROOT }}/y") == Place(WORKSPACE, "src/y")
    assert scope.place("$GONE/x") is None
    assert (Scope(None).place("$PWD/x"), Scope(W).place("$PWD/x")) == (None, Place(WORKSPACE, "x"))
    flow = _flow('D=/opt/m\ncd "$D" && bash run.sh\nHERE=$(pwd)\ncd /\nbash "$HERE/b.sh"\n')
    assert [str(read.reference.place) for read in flow.reads] == ["/opt/m", "/opt/m/run.sh", "/opt/m/b.sh"]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("git clone https://github.com/o/Megatron-LM.git", [("clone", "Megatron-LM")]),
        ("git clone --depth 1 -b main https://x/o/r dir", [("clone", "dir")]),
        ('git clone "$URL" "$DIR"', [("clone", None)]),
        (
            "curl -o /tmp/${ARCHIVE} https://x; ln -sf /usr/lib/${ARCH}/a.so.1 /usr/lib/${ARCH}/a.so",
            [("download", "/tmp"), ("copy", "/usr/lib")],
        ),
        (
            "curl -fsSLo tools/gen.sh https://x/gen.sh; curl -O https://x/a/b.tgz",
            [("download", "tools/gen.sh"), ("download", "b.tgz")],
        ),
        (
            "wget -q -O /tmp/x.patch https://x; wget -P dl https://x/y.tar.gz",
            [("download", "/tmp/x.patch"), ("download", "dl/y.tar.gz")],
        ),
        (
            "mkdir -p assets/ build && touch build/stamp",
            [("create", "assets"), ("create", "build"), ("create", "build/stamp")],
        ),
        (
            "cp -r patches /opt/p; cp a.txt b.txt out/; mv x y",
            [("copy", "/opt/p"), ("copy", "out/a.txt"), ("copy", "out/b.txt"), ("copy", "y")],
        ),
        (
            "tar -xzf a.tgz -C deps; tar czf out.tgz src; unzip -q w.zip -d wheels",
            [("unpack", "deps"), ("create", "out.tgz"), ("unpack", "wheels")],
        ),
        ('echo "x=1" >> "$GITHUB_OUTPUT"; echo hi > /dev/null 2>&1; echo a > notes.txt', [("create", "notes.txt")]),
        (
            "python tools/download.py --assets-dir ./assets --out=build/x",
            [("named", "tools/download.py"), ("named", "assets"), ("named", "build/x")],
        ),
        ("echo ok; pip install -e .; command -v rustup; apt-get install -y x", []),
        ("cd build && make -j8 && cmake --build out", [("named", "build"), ("named", "build"), ("named", "build/out")]),
        ("cd /opt/other && git fetch origin pr && git checkout -f FETCH_HEAD", [("git", "/opt/other")]),
        ("gh release download v1 -D bin; gh repo clone o/tools", [("download", "bin"), ("clone", "tools")]),
        (  # a decompressor writes the file beside the archive, less its last suffix
            "gunzip dl/a.tar.gz; xz -d /opt/b.xz; zstd -d c; gzip -d x/d.txt.gz; gzip e.txt",
            [("create", "dl/a.tar"), ("create", "/opt/b"), ("create", "c"), ("create", "x/d.txt"), ("named", "e.txt")],
        ),
    ],
)
def test_what_commands_write(script: str, expected: list[tuple[str, str | None]]) -> None:
    assert _writes(script) == expected


def _effects(script: str) -> list[str]:
    """Each write, git operation and output of a script run in the workspace, as one line (a clone as its write)."""
    shown: list[str] = []
    for event in _flow(script).events:
        effect = event.effect
        if isinstance(effect, Write):
            shown.append(f"{effect.kind} {effect.place}" + (f" from {effect.source}" if effect.source else ""))
        elif isinstance(effect, GitOperation):
            if effect.operation != "clone":
                shown.append(f"git {effect.operation} in {effect.folder} at {effect.ref}")
        else:
            shown.append(f"output {effect.name}={effect.value}" + (" to env" if effect.to_env else ""))
    return shown


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (  # `-C` moves the tree a git command acts in; `--git-dir`/`--work-tree` make it unknown; a value is skipped
            "git -C; git --git-dir=x checkout v; git --work-tree y reset --hard; git -C a checkout -- f",
            "git checkout in None at v; git None; git reset in None at None; git None; "
            "git checkout in a at None; git a",
        ),
        (  # fetch and pull name the remote first, then the ref; init and fetch change no files in place
            "git -c a=b pull origin main; git fetch origin; git fetch origin v2 --depth 1; git init n; git log -1",
            "git pull in . at main; git .; git fetch in . at None; git fetch in . at v2; clone n;"
            " git init in n at None",
        ),
        (  # `git init DIR` makes a repository folder (in `git -C`'s, past each option's value), `git init` or
            # `git init .` makes the folder it runs in one; init names no ref
            "git init; git init .; git -C /opt init -b main --template /t x; git init --bare --initial-branch m r.git;"
            ' git init "$D"',
            "git init in . at None; git init in . at None; clone /opt/x; git init in /opt/x at None; clone r.git;"
            " git init in r.git at None; clone None; git init in None at None",
        ),
        (
            "git checkout -b new origin/main; git checkout main -- f; git -C sub switch dev",
            "git checkout in . at origin/main; git .; git checkout in . at main; git .; "
            "git switch in sub at dev; git sub",
        ),
        (  # a clone lands in its folder operand, else in the URL's last name less `.git`, under `git -C`'s folder
            "git -C /opt clone https://x/r.git; git -C /opt clone https://x/r.git d; git clone https://x/o/r/;"
            " git clone git@host:r.git; git clone --depth 1; git clone https://x/",
            "clone /opt/r; clone /opt/d; clone r; clone r; clone x",
        ),
        (  # only `git worktree add` adds a tree, at its first operand
            "git worktree add -b b ../wt main; git -C /opt worktree add w; git worktree list; git worktree;"
            " git remote add origin https://x; git worktree add -B b2 ../wt2; git worktree add --reason r ../wt3",
            "clone ../wt; clone /opt/w; clone ../wt2; clone ../wt3",
        ),
        (  # the values of options are no refs, in each spelling
            "git --git-dir y checkout v; git --work-tree=z reset; git checkout -B b origin/x; git switch -c new main;"
            " git switch -C new2 base; git fetch --depth 1 origin v3; git merge -m msg feature;"
            " git merge --message msg feature2; git pull -o opt origin main; git pull --origin o2 origin dev",
            "git checkout in None at v; git None; git reset in None at None; git None; git checkout in . at origin/x;"
            " git .; git switch in . at main; git .; git switch in . at base; git .; git fetch in . at v3;"
            " git merge in . at feature; git .; git merge in . at feature2; git .; git pull in . at main; git .;"
            " git pull in . at dev; git .",
        ),
        (  # a name ending in a letter the URL's slashes are stripped around keeps it
            "git clone https://x/o/MLX; gh repo clone o/MLX; wget https://x/MLX",
            "clone MLX; clone MLX; download MLX",
        ),
        (
            "gh repo clone o/r dir; gh repo clone o/r/; gh pr checkout 12; gh pr checkout; gh run list",
            "clone dir; clone r; git checkout in . at 12; git .; git checkout in . at None; git .",
        ),
        (  # `gh ... download` writes its `-O` file (`-`: standard output, nothing), else into `-D` or here
            "gh release download v1 -O x.tgz; gh run download 1 --dir=art; gh attestation download a --output=o.json;"
            " gh release download v1 --output -; gh release download v1 -D d --output f; gh run download 2 -D d2;"
            " gh release download v1 --dir d3; gh release download",
            "download x.tgz; download art; download o.json; download f; download d2; download d3; download .",
        ),
        (  # curl writes its `-o` file in each spelling (in `--output-dir`), `-` and a dangling `-o` write nothing
            "curl --output-dir dl -O https://x/a.tgz; curl --output-dir=dl -o f https://x; curl --output f https://x;"
            " curl --output=g https://x; curl -oh https://x; curl -o - https://x; curl https://x; curl https://x -o;"
            " curl -o x https://y -o z",
            "download dl/a.tgz; download dl/f; download f; download g; download h; download z",
        ),
        (  # `-O` in each spelling names the file after the URL, less its query; a value option's value is no URL
            "curl -sLO https://x/b; curl --remote-name https://x/c; curl --remote-name-all https://x/d;"
            " curl -H 'X: https://h/y' -O https://x/e?v=1; curl -O https://x/$F; curl -O --output-dir $D https://x/g",
            "download b; download c; download d; download e; download .; download None",
        ),
        (  # `-O` names the file after the last segment of the URL's path (which may hold another URL), before the
            # first `?` and any `#`; a path ending in `/` or none gives no name (curl fails): somewhere in the folder
            "curl -O 'https://x/h?a=1?b=2'; curl -O https://x/o/r/c.sh; curl -O https://x/dir/; curl -O https://x;"
            " curl -O 'https://x/i#j/k#l'; curl -O https://web.archive.org/web/2/https://x.org",
            "download h; download c.sh; download .; download .; download i; download x.org",
        ),
        (
            "wget -O a https://x; wget --output-document b https://x; wget --output-document=c https://x;"
            " wget -Od https://x; wget -O - https://x; wget https://x/n -O",
            "download a; download b; download c; download d; download n",
        ),
        (  # `-P` in each spelling is the folder the URL's last name lands in, with its query, `index.html` for none
            "wget -P p https://x/a; wget --directory-prefix q https://x/b; wget --directory-prefix=r https://x/c;"
            " wget -Ps https://x/d; wget https://x/e.tgz?raw=1; wget https://x/f/; wget https://x/$F; "
            "wget -t 3 https://x/g",
            "download p/a; download q/b; download r/c; download s/d; download e.tgz?raw=1; download index.html; "
            "download .; download g",
        ),
        (  # as wget 1.21 names its files: `index.html` for a URL without path, a URL without scheme read the same,
            # a `/` of the query written `%2F`, the fragment dropped
            "wget https://x; wget x.org; wget x.org/p/a.sh; wget 'https://x/s?q=a/b'; wget 'https://x/t?v=1#f';"
            " wget 'https://x/u/#f'",
            "download index.html; download index.html; download a.sh; download s?q=a%2Fb; download t?v=1; "
            "download index.html",
        ),
        (  # `-t` names the folder the sources go into
            "cp -t out a.txt; cp --target-directory=out a b; cp -t out/ c; cp -t out",
            "copy out/a.txt from a.txt; copy out/a from a; copy out/b from b; copy out/c from c",
        ),
        (  # the values of each program's options are no sources
            "install -o root -g root -m 755 a.sh /usr/bin/; install --mode=644 --owner root b.txt /etc/;"
            " rsync -a --chmod 755 a dest/; rsync --chown u b dest/; rsync --filter f --include i c dir/;"
            " mv --suffix .bak -S .old d dir/; rsync -e ssh --exclude x e dir/; install --mode 644 --group g f /etc/;"
            " cp --target-directory out g",
            "copy /usr/bin/a.sh from a.sh; copy /etc/b.txt from b.txt; copy dest/a from a; copy dest/b from b; "
            "copy dir/c from c; copy dir/d from d; copy dir/e from e; copy /etc/f from f; copy out/g from g",
        ),
        (  # options that take no value: `cp -f` forces, `cp -P` and `rsync -P` take none, `rsync -t` keeps times
            "cp -f x y; cp -rf a b/; rsync -P c d; rsync -avt src/ dest/; rsync -t e f; cp -P g h; rsync -avS i j",
            "copy y from x; copy b/a from a; copy d from c; copy dest from src; copy f from e; copy h from g;"
            " copy j from i",
        ),
        (  # a source or target ending in a letter the slashes are stripped around keeps it; `/` is the root
            "cp a dirX/; cp a /; rsync a.txt b.txt; scp h:/x/fileX out/; cp aX b/; rsync -a / b/; rsync ./x:y out/",
            "copy dirX/a from a; copy /a from a; copy b.txt from a.txt; download out/fileX; copy b/aX from aX;"
            " copy b from /; copy out/x:y from x:y",
        ),
        (  # a source ending in `/` is copied as the folder's contents; several go into the target by name
            "rsync -a src/ dest/; rsync -a src/ b dest; cp a.txt $D/x; cp a $D/; cp x",
            "copy dest from src; copy dest from src; copy dest/b from b; copy None; copy None",
        ),
        (  # scp's value options are its own; a source on another host is downloaded, a target there writes nothing
            "scp -i id.pem a.txt out/; scp -o Opt=1 -P 22 -F cfg b.txt out/; scp -J j -l 5 c.txt out/;"
            " scp d.txt host:/x; rsync -a out/ user@h:/x; scp h:e.txt h:f/ ./; rsync user@h:/x/g.txt local.txt",
            "copy out/a.txt from a.txt; copy out/b.txt from b.txt; copy out/c.txt from c.txt; download e.txt; "
            "download .; download local.txt",
        ),
        (  # a host's path runs from the first `:`, a local path with `:` after a `/` is on no host; a variable set
            # empty leaves `/` (`$E/` is the root); a source that cannot be known goes into the target's folder
            "scp h:/x/a:b out/; rsync ./a:b/c out/; E=; cp a $E/; cp -r $E/ out/; cp $S out/",
            "download out/a:b; copy out/c from a:b/c; copy /a from a; copy out from /; copy out",
        ),
        (  # `ln -s path` links it here under its own name, or into `-t`'s folder
            "ln -s /opt/x; ln -sf /opt/y z; ln -s -t lib /opt/z",
            "copy x from /opt/x; copy z from /opt/y; copy lib/z from /opt/z",
        ),
        (  # after `--` every word is an operand; `-` alone is a name; a directory stack survives a branch and
            # is a subshell's too
            "cp -- -w.txt out/; cp -f -- a.txt b.txt; mkdir -; pushd /a; if x; then :; fi; popd; mkdir b;"
            " pushd /a; (popd; mkdir c)",
            "copy out/-w.txt from -w.txt; copy b.txt from a.txt; create -; create b; create c",
        ),
        (  # a write below a variable is somewhere in its deepest known folder, but never the whole root
            "mkdir /$X; mkdir /opt/$X",
            "create None; create /opt",
        ),
        (  # in a folder that cannot be known, a relative path names no place; an absolute one still does
            "git -C $X clone https://x/r.git; git -C $X worktree add w; curl --output-dir $D -o f https://x;"
            " git -C $X -C sub init; git -C $X clone https://x/s.git /opt/s; git -C /opt clone https://x/t.git",
            "clone None; clone None; download None; git init in None at None; clone /opt/s; clone /opt/t",
        ),
        (  # a wrapped `cd` moves the shell, it writes nothing; a program named by a variable, or none, is unknown
            'builtin cd build; command popd +1; builtin pushd out; sudo; command; "$TOOL" out.txt; ${RUN} x/y',
            "",
        ),
        (
            "pip install -t lib x; pip install --target=lib2 x; pip install --target lib3 x; pip install x; pip;"
            " pip download -d dl x; pip download --dest=dl2 x; pip download --dest dl3 x; pip download x; pip list",
            "download lib; download lib2; download lib3; download dl; download dl2; download dl3; download .",
        ),
        (
            "pip wheel -w wh .; pip wheel --wheel-dir=wh2 .; pip wheel --wheel-dir wh3 .; pip wheel .;"
            " uv pip install --target t x; uv pip install x; pip3 download y",
            "download wh; download wh2; download wh3; download .; download t; download .",
        ),
        (  # printf's format is dropped when it holds a `%`; the printed words are the `NAME=value` line
            "printf 'x=1' >> $GITHUB_OUTPUT; printf >> $GITHUB_OUTPUT; printf '%s' 'y=2' >> $GITHUB_OUTPUT;"
            " echo z=a  b >> $GITHUB_ENV; echo -n 'w=3' > \"$GITHUB_OUTPUT\"; cat f >> $GITHUB_OUTPUT; echo v=4 < x",
            "output x=1; output y=2; output z=a b to env; output w=3",
        ),
        (  # a pipeline's last stage `tee`s what its first prints
            'echo x=1 | cat | tee -a $GITHUB_OUTPUT; echo y=2 | tee -a "$GITHUB_ENV"; echo z=3 | tee out.txt;'
            " echo u=5 | tee -a $GITHUB_OUTPUT | cat; echo t=6 | (tee -a $GITHUB_OUTPUT);"
            ' echo w=8 | (cat) | tee -a $GITHUB_OUTPUT; echo s=7 | tee "$GITHUB_OUTPUT"',
            "output x=1; output y=2 to env; create out.txt; output s=7",
        ),
        (  # `docker cp` out of a container downloads; a volume names the host path it mounts
            "docker cp c:/x out; docker cp out c:/x; docker cp a b c; docker run -v ./data:/data img;"
            " docker run --volume $PWD/x:/x img; docker run -v vol:/x img; docker create -v /opt/y:/y img; "
            "docker build .; docker run -v ~/cache:/c img",
            "download out; named data; named x; named /opt/y; named $HOME/cache",
        ),
        (  # tar unpacks in `-C`'s folder in each spelling, or here
            "tar -xzf a.tgz -C deps; tar --extract -f b.tar --directory=d2; tar xf c.tar; tar --get -f x;"
            " tar -x --directory d3 -f y; tar -zxvf a.tgz -Cd4; tar xzf a.tgz -C d5 some/path;"
            " curl -sL https://x/a.tgz | tar -xz -C d6; tar -xC d7 -f a.tar",
            "unpack deps; unpack d2; unpack .; unpack .; unpack d3; unpack d4; unpack d5; unpack d6; unpack d7",
        ),
        (  # tar creates its `-f` archive in each spelling (`-`: standard output; `-cfz` names `z`, as GNU tar reads
            # it); listing or comparing only reads it
            "tar -cf out.tar src; tar czf out.tgz src; tar --create --file=f.tar src; tar -c -f - src; tar -cvf;"
            " tar --list -f x.tar; tar -c --file g.tar s; tar; tar -tf z.tar; tar tvf y.tar; tar -d -f w.tar;"
            " tar --compare --file=v.tar; tar --diff -f v2.tar; tar df w2.tar; tar cz src; tar -rf u.tar more;"
            " tar -czvf t.tgz src; tar -cfz s.tgz src; tar czf",
            "create out.tar; create out.tgz; create f.tar; create g.tar; create u.tar; create t.tgz; create z",
        ),
        (  # `tar rf` appends to its archive, creating it, even with no file to add; `-cffile`'s first `f` takes the
            # rest of its bundle
            "tar rf app.tar; tar -cffile src",
            "create app.tar; create file",
        ),
        (  # 7z unpacks only with `x` or `e`, into its `-o` folder; unzip into its `-d` folder
            "7z x a.7z -oout; 7z e a.7z -oout2; 7z a x.7z f; 7za x b.7z; 7z; unzip a.zip -d out; unzip -dout2 a.zip;"
            " unzip a.zip",
            "unpack out; unpack out2; unpack .; unpack out; unpack out2; unpack .",
        ),
        (  # git's options end at its subcommand, each `-C` read in the folder of the one before; an option last, or
            # a `-C` with its folder last, names no subcommand
            "git; git --version; git -C a; git --no-pager reset; git --no-pager -C a checkout v;"
            " git -C a -C b checkout x",
            "git reset in . at None; git .; git checkout in a at v; git a; git checkout in a/b at x; git a/b",
        ),
        (  # docker's options end at the image: a `-v` after it is the container's; a volume's host path ends at its
            # first `:`; each other option but a flag takes the next word; no image runs nothing
            "docker run -v ./data:/data:ro img; docker run img ls -v /opt; docker run -v ./x:/x; docker run -v;"
            " docker run -e A=1 --gpus=all --rm --volume=/opt/v:/v -w /work --name n -dit -v ./w:/w img cmd",
            "named data; named /opt/v; named w",
        ),
        (  # a dangling `-o` or an empty `--dir=` is the last of its options: the one before it no longer counts
            "curl -o x https://y -o; gh release download v1 -D d --dir=; wget -O a https://x/b -O;"
            " gh run download 1 -D e -D",
            "download .; download b; download .",
        ),
        (  # `-O` alone is a bundle; `--O` none
            "curl --O https://x/a; curl -O https://x/b",
            "download b",
        ),
        (  # a folder's contents from another host land in the target itself; a named path under its name there
            "scp -r h: out/; rsync -a h:/x/. out/; scp h:/x/y out/",
            "download out; download out; download out/y",
        ),
        (  # only a writing redirection to a path writes: `>&-` closes a stream, a missing target names nothing
            "cat < in.txt >> log.txt; echo a >&- 2>",
            "create log.txt",
        ),
        (  # a `case` whose one arm matches all moves the shell as that arm does; an empty one leaves it
            "case $x in *) cd sub ;; esac; touch f; case $y in esac; touch g",
            "create sub/f; create sub/g",
        ),
    ],
)
def test_what_each_command_does_to_files(script: str, expected: str) -> None:
    assert "; ".join(_effects(script)) == expected


def test_a_word_of_a_here_document_fed_to_a_shell_spans_its_own_characters() -> None:
    script = "bash <<'EOF'\ngit apply /tmp/a.patch\nEOF\n"
    (patch,) = _flow(script).reads
    start = script.index("/tmp/a.patch") + 1  # a fragment counts columns from its start
    assert (patch.reference.span.column, patch.reference.span.end_column) == (start, start + len("/tmp/a.patch"))


def test_git_operations_name_the_folder_and_ref() -> None:
    command = next(iter(parse_fragment("git -C /opt/m fetch origin refs/pull/1/head").commands()))
    assert list(command_effects(command, Scope(W))) == [GitOperation("fetch", Place(ROOT, "opt/m"), "refs/pull/1/head")]
    flow = _flow("cd /opt/m\ngit checkout -f FETCH_HEAD\ngit log -1\n")
    operations = [event.effect for event in flow.git_operations]
    assert operations == [GitOperation("checkout", Place(ROOT, "opt/m"), "FETCH_HEAD")]


def test_a_clone_is_a_git_operation_of_the_branch_it_checks_out_and_a_checkout_of_paths_says_so() -> None:
    flow = _flow(
        "git -C /opt clone -b v1 https://x/r.git; git clone --branch=v2 u d; git clone https://x/e; git clone u $D;"
        " git checkout v3 -- f; git checkout v4 f g; git reset --hard v5; git checkout -b b origin/x; git checkout -- f"
    )
    assert [event.effect for event in flow.git_operations] == [
        GitOperation("clone", Place(ROOT, "opt/r"), "v1"),
        GitOperation("clone", Place(WORKSPACE, "d"), "v2"),
        GitOperation("clone", Place(WORKSPACE, "e"), None),
        GitOperation("clone", None, None),  # where cannot be known: its write is anywhere, its tree nowhere known
        GitOperation("checkout", W, "v3", paths=True),
        GitOperation("checkout", W, "v4", paths=True),
        GitOperation("reset", W, "v5"),
        GitOperation("checkout", W, "origin/x"),
        GitOperation("checkout", W, None, paths=True),
    ]


def test_outputs_written_to_the_runner_files_are_read() -> None:
    flow = _flow('echo "dockerfile=./docker/Dockerfile.ci" | tee -a "$GITHUB_OUTPUT"\necho "X=/opt/x" >> $GITHUB_ENV\n')
    outputs = [event.effect for event in flow.events if isinstance(event.effect, Output)]
    assert outputs == [Output("dockerfile", "./docker/Dockerfile.ci", False), Output("X", "/opt/x", True)]
    # an event names the command that made it; a pipeline's output is made by no one command of it
    assert [event.command.argv if event.command else None for event in flow.events] == [None, ["echo", "X=/opt/x"]]


def test_the_working_directory_follows_subshells_branches_stacks_and_functions() -> None:
    script = """
(cd sub && bash a.sh)
bash b.sh
pushd /opt/x; bash c.sh; popd
bash d.sh
if [ -n "$X" ]; then cd elsewhere; fi
bash e.sh
setup() { cd /srv && bash f.sh; }
cd "$GITHUB_WORKSPACE/ci"
setup
bash g.sh
echo x | (cd /tmp && cat)
bash h.sh
"""
    shown = [str(read.reference.place) for read in _flow(script).reads if read.reference.kind == "script"]
    assert shown == ["sub/a.sh", "b.sh", "/opt/x/c.sh", "d.sh", "/srv/f.sh", "/srv/g.sh", "/srv/h.sh"]


def test_cd_pushd_and_popd_move_the_working_directory_or_make_it_unknown() -> None:
    """`cd` alone goes home and skips its options; `cd -`, two operands, a glob, `pushd` alone (it swaps the stack)
    and a `popd` with nothing pushed leave the working directory unknown; a value holding `=` is assigned whole."""
    script = (
        "cd; mkdir a; cd -P /opt; mkdir b; cd -; mkdir c; cd /opt; cd x y; mkdir d; cd /opt; pushd; mkdir e; popd;"
        " mkdir f; popd; mkdir g; cd /srv/*; mkdir h; D=/opt/k=v; cd $D; mkdir i; declare E=/e=1; cd $E; mkdir j"
    )
    assert _writes(script) == [
        ("create", "$HOME/a"),
        ("create", "/opt/b"),
        ("create", None),
        ("create", None),
        ("create", None),
        ("create", "/opt/f"),
        ("create", None),
        ("create", None),
        ("create", "/opt/k=v/i"),
        ("create", "/e=1/j"),
    ]


def test_a_shell_fed_a_here_document_runs_it_in_a_process_of_its_own() -> None:
    flow = _flow(
        "bash -ex <<'EOF'\ncd /opt/m\ngit apply /tmp/a.patch\nEOF\nbash x.sh\nsudo bash -c 'cd /y' <<EOF\nz\nEOF\n"
    )
    assert [str(read.reference.place) for read in flow.reads] == ["/opt/m", "/tmp/a.patch", "x.sh", "/y"]
    (patch,) = [read for read in flow.reads if read.reference.kind == "patch"]
    text = "bash -ex <<'EOF'\ncd /opt/m\ngit apply /tmp/a.patch"
    assert patch.reference.span.column == text.index("/tmp/a.patch") + 1  # a fragment counts columns from its start


def test_standard_input_is_not_a_file() -> None:
    script = "python3 - <<'PY'\nprint(1)\nPY\npython - \"$A\" <<EOF\nx\nEOF\nbash -s < setup.sh\ncurl -sSL u | bash -\n"
    assert [read.reference.kind for read in _flow(script).reads] == []


def test_a_read_resolves_through_copies_to_the_repository_file() -> None:
    flow = Flow()
    flow.note(Write("checkout", W, this_repository=True), Span.point("x"), None, None)
    Walker(flow, None).script(
        parse_fragment("cp -r $GITHUB_WORKSPACE/patches /opt/p\ncd /opt/m && git apply /opt/p/fix.patch\n"),
        Scope(W),
    )
    (read,) = [read for read in flow.reads if read.reference.kind == "patch"]
    assert flow.origin(read.reference.place, read.seq).repository_path == "patches/fix.patch"
    assert flow.origin(Place(ROOT, "opt/q/fix.patch"), read.seq).write is None
    Walker(flow, None).script(parse_fragment("mkdir -p /srv/x && cp -r patches /srv/x"), Scope(W))
    into = flow.origin(Place(ROOT, "srv/x/patches/fix.patch"), flow.end)
    assert into.repository_path == "patches/fix.patch"  # copied into a folder that was there
    Walker(flow, None).script(parse_fragment("cp a.sh /srv/$D/b.sh"), Scope(W))
    somewhere = flow.origin(Place(ROOT, "srv/x/patches/fix.patch"), flow.end)
    assert (somewhere.kind, somewhere.repository_path) == ("copy", None)  # anything in /srv may have changed


def test_another_repositorys_checkout_and_working_directory_are_not_this_repository() -> None:
    flow = _job("""\
      - uses: actions/checkout@v4
        with: {repository: NVIDIA/Megatron-LM, path: megatron}
      - working-directory: megatron
        run: pip install -e . && bash tools/x.sh
      - run: git clone https://github.com/o/dep dep && cd dep && pip install -e .
      - uses: actions/checkout@v4
      - run: bash scripts/test.sh
""")
    origins = [(str(read.reference.place), flow.origin(read.reference.place, read.seq)) for read in flow.reads]
    assert [(place, origin.kind, origin.repository_path) for place, origin in origins] == [
        ("megatron", "checkout", None),
        ("megatron/tools/x.sh", "checkout", None),
        ("dep", "clone", None),
        ("dep", "clone", None),
        ("scripts/test.sh", "checkout", "scripts/test.sh"),
    ]


def test_env_and_outputs_flow_between_steps_and_builds_find_their_dockerfile() -> None:
    flow = _job(
        """\
      - uses: actions/checkout@v4
      - id: pick
        run: |
          echo "dockerfile=./docker/Dockerfile.ci.lts" | tee -a "$GITHUB_OUTPUT"
          echo "PATCHES=$GITHUB_WORKSPACE/patches" >> "$GITHUB_ENV"
      - run: git apply "$PATCHES/a.patch"
      - uses: docker/build-push-action@v6
        with: {file: "${{ steps.pick.outputs.dockerfile }}", context: .}
      - uses: docker/build-push-action@v6
        with: {file: docker/Dockerfile.git}
      - run: docker build -f Dockerfile.rocm "$CTX"
        working-directory: docker
""",
        top='env: {CTX: "${{ github.workspace }}/docker"}\n',
    )
    (read,) = [read for read in flow.reads if read.reference.kind == "patch"]
    assert flow.origin(read.reference.place, read.seq).repository_path == "patches/a.patch"
    assert [([str(p) for p in b.dockerfiles], str(b.context), b.git_context) for b in flow.builds] == [
        (["docker/Dockerfile.ci.lts"], ".", False),
        (["docker/Dockerfile.git"], ".", True),
        (["docker/Dockerfile.rocm"], "docker", False),
    ]


def test_a_step_of_unknown_effect_makes_only_the_workspace_unknown() -> None:
    flow = _job("""\
      - run: cd /opt/other && git fetch origin x && git checkout FETCH_HEAD
      - run: bash a.sh
      - uses: some/action@v1
        with: {out: reports/}
      - run: bash b.sh
""")
    origins = [
        flow.origin(read.reference.place, read.seq).kind for read in flow.reads if read.reference.kind == "script"
    ]
    assert origins == [None, "opaque"]
    b = flow.reads[-1]
    assert flow.origin(b.reference.place, b.seq, UNSURE).write is None
    assert flow.origin(Place(WORKSPACE, "reports/r.xml"), flow.end, UNSURE).kind == "named"


@pytest.fixture
def seed_shape(make_repo: MakeRepo) -> Path:
    return make_repo(
        {
            ".github/workflows/image.yml": (
                "on: push\njobs:\n  image:\n    runs-on: ubuntu-latest\n    steps:\n"
                "      - uses: actions/checkout@v4\n"
                "      - run: mkdir -p assets && docker build -f docker/Dockerfile.rocm -t x .\n"
            ),
            "docker/Dockerfile.rocm": (
                "FROM rocm/pytorch:latest AS base\n"
                "RUN git clone https://github.com/o/Megatron-LM /opt/Megatron-LM\n"
                "COPY docker/amd_patch/latest/megatron.patch /tmp/amd_patch/megatron.patch\n"
                "COPY docker/amd_patch/ /tmp/all/\n"
                "COPY assets/ /opt/data/\n"
                "WORKDIR /opt/Megatron-LM\n"
                "RUN git apply /tmp/amd_patch/megatron.patch && git apply /tmp/all/sglv0.5.10/megatron.patch\n"
                "FROM base\n"
                "RUN --mount=type=bind,source=docker/extra,target=/mnt/extra bash /mnt/extra/run.sh\n"
                "COPY --from=base /tmp/amd_patch /patches\n"
                "RUN git apply /patches/megatron.patch && git apply /tmp/none.patch\n"
                'RUN bash -ex <<"EOF"\n'
                "    cd /opt/Megatron-LM\n"
                "    git apply --check /tmp/all/sglv0.5.10/megatron.patch\n"
                "EOF\n"
            ),
            "docker/amd_patch/latest/megatron.patch": "diff\n",
            "docker/amd_patch/sglv0.5.10/megatron.patch": "diff\n",
        }
    )


def test_dockerfile_reads_resolve_through_copies_stages_and_mounts(seed_shape: Path) -> None:
    files = _files(seed_shape)
    (built,) = files.images("docker/Dockerfile.rocm")
    assert built.context == ""
    resolved = [
        (str(read.reference.place), flow.origin(read.reference.place, read.seq).repository_path)
        for flow in built.flows
        for read in flow.reads
        if read.reference.kind in ("patch", "script")
    ]
    assert resolved == [
        ("/tmp/amd_patch/megatron.patch", "docker/amd_patch/latest/megatron.patch"),
        ("/tmp/all/sglv0.5.10/megatron.patch", "docker/amd_patch/sglv0.5.10/megatron.patch"),
        ("/mnt/extra/run.sh", "docker/extra/run.sh"),
        ("/patches/megatron.patch", "docker/amd_patch/latest/megatron.patch"),
        ("/tmp/none.patch", None),
        ("/tmp/all/sglv0.5.10/megatron.patch", "docker/amd_patch/sglv0.5.10/megatron.patch"),
    ]
    (build,) = files.builds_of("docker/Dockerfile.rocm")
    assert build.made(Place("context", "assets")) and not build.made(Place("context", "docker"))
    assert Place(ROOT, "opt/Megatron-LM") in files.image_places


def test_python_names_only_literal_paths_and_anchored_globs() -> None:
    text = """
import glob, os
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
PATCHES = ROOT / "docker" / "patches"
def apply(name):
    for p in glob.glob(f"{name}/*"):
        pass
    for p in PATCHES.glob("*.patch"):
        pass
    for p in sorted((ROOT / "third").rglob("*.diff")):
        pass
    return os.path.join(os.path.dirname(__file__), "fix.patch"), "utf-8", f"{name}.patch", "a/b.patch"
"""
    # `os.path.join`'s parts, `"utf-8"` and `f"{name}/*"` mention nothing of their own
    assert path_mentions(source.decode("ci/apply.py", text.encode()), "ci/apply.py") == [
        PathMention("docker/patches", True, False),
        PathMention("docker/patches/*.patch", True, True),
        PathMention("third/**/*.diff", True, True),
        PathMention("ci/fix.patch", True, False),
        PathMention("a/b.patch", False, False),
    ]


def test_python_names_the_folder_itself_as_the_empty_path_and_a_glob_of_it_names_nothing() -> None:
    text = (
        "import glob, os\nopen('./')\nglob.glob('.')\nopen(os.path.join(os.path.dirname(__file__), '.'))\n"
        "open('docs/../setup.cfg')\n"
    )
    assert path_mentions(source.decode("x.py", text.encode()), "x.py") == [
        PathMention("", False, False),
        PathMention("", True, False),
        PathMention("setup.cfg", False, False),
    ]


def test_python_mentions_each_path_once_where_it_is_written_not_where_its_name_is_used() -> None:
    """A name assigned a path mentions nothing where it is assigned or used: the string does, once; `joinpath`
    joins its arguments; `.parents[N]` is followed for N up to 15 (a deeper one is unknown)."""
    text = (
        "from pathlib import Path\nHERE = Path(__file__).parent\nP = 'patches/fix.patch'\nopen(P)\nopen(P)\n"
        "HERE.joinpath('x', 'y.patch')\nPath(__file__).parents[15] / 'deep.patch'\n"
        "Path(__file__).parents[16] / 'deeper.patch'\n"
    )
    path = "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/x.py"
    assert path_mentions(source.decode(path, text.encode()), path) == [
        PathMention("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", True, False),
        PathMention("patches/fix.patch", False, False),
        PathMention("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/x/y.patch", True, False),
        PathMention("a/b/deep.patch", True, False),
    ]


def test_a_function_is_followed_a_bounded_number_of_times() -> None:
    """A function that calls itself, or is called by calls that repeat, is walked at most 16 times: a script cannot
    make the walk grow without bound."""
    reads = _flow("g() { bash x.sh; g; g; g; }\nf() { g; g; g; g; g; g; g; g; g; g; }\nf\nf\nf\n").reads
    assert 1 <= len(reads) <= 16


def test_a_python_string_that_is_no_valid_glob_leaves_orphan_patch_judging(make_repo: MakeRepo) -> None:
    """A docstring or message holding `[n-m]` (a range that runs backwards) is no glob: orphan-patch passes over it
    and still reports the copy nothing applies (it failed with an internal error, reporting nothing)."""
    root = make_repo(
        {
            "docker/Dockerfile": "FROM ubuntu:24.04\nCOPY docker/patches/fix.patch /tmp/fix.patch\n"
            "RUN git clone https://example.com/x /x && cd /x && git apply /tmp/fix.patch\n",
            "docker/patches/fix.patch": "diff\n",
            "docker/patches/old/fix.patch": "diff\n",
            "tools/report.py": 'HELP = "rows [n-m] of *.patch"\n',
        }
    )
    result = run_cli("check", root, "--select", "CC042", "--backends", "none", "--output-format", "concise")
    assert (result.code, result.err) == (1, "")
    assert [line.split(" ")[:2] for line in result.out.splitlines()[:-1]] == [
        ["docker/patches/old/fix.patch:1:1:", "CC042"]
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "P = 'docker/a.patch'\nP = 'docker/b.patch'\nopen(P + '.orig')\n"
            "A, B = 'docker/c.patch', 'x'\nopen(A + '.orig')\n",
            [("docker/a.patch", False, False), ("docker/b.patch", False, False), ("docker/c.patch", False, False)],
            id="a name assigned twice or by unpacking is unknown",
        ),
        pytest.param(
            "import glob, os\nfrom pathlib import Path\nopen(str('docker/a.patch'))\n"
            "open(os.path.abspath('docker/b.patch'))\nopen(Path('docker/c.patch'))\nglob.iglob('patches/*.patch')\n",
            [
                ("patches/*.patch", False, True),
                ("docker/a.patch", False, False),
                ("docker/b.patch", False, False),
                ("docker/c.patch", False, False),
            ],
            id="str, abspath, Path and iglob name their argument once",
        ),
        pytest.param(
            "from glob import glob\nglob('docker/*.diff')\n",
            [("docker/*.diff", False, True)],
            id="a glob imported by name names its pattern once",
        ),
        pytest.param(
            "open('docker/patches')\nopen('fix.patch')\nopen('utf-8')\n",
            [("docker/patches", False, False), ("fix.patch", False, False)],
            id="a string names a path by a slash or by a suffix",
        ),
        pytest.param(
            "import glob\ndef find(a, b):\n    glob.glob(f'{a}/x/{b}.patch')\n    glob.glob(f'docker/{b}.patch')\n",
            [("docker/*.patch", False, True)],
            id="a glob names a folder only when the text before its first unknown part holds a slash",
        ),
        pytest.param(
            "import os\nfrom pathlib import Path\nPath() / 'docker' / 'fix.patch'\nPath('docker') / '/opt/fix.patch'\n"
            "os.path.join('docker', __file__)\nos.path.join('my patches ', 'fix.patch')\n"
            "Path('/opt') / 'fix.patch'\nPath('docker/X') / 'fix.patch'\n",
            [
                ("docker/fix.patch", False, False),
                ("/opt/fix.patch", False, False),
                ("ci/x.py", True, False),
                ("my patches /fix.patch", False, False),
                ("/opt/fix.patch", False, False),
                ("docker/X/fix.patch", False, False),
            ],
            id="a join starts at an absolute or anchored part and keeps each part's text",
        ),
        pytest.param(
            "import os\nfrom pathlib import Path\ndef parents(name):\n    os.path.dirname('docker/patches/')\n"
            "    Path('ci/docker/patches/').parent\n    Path('docker/patches/X').parent\n"
            "    os.path.dirname(f'docker/patches/{name}')\n"
            "    os.path.join(os.path.dirname(f'{name}.py'), 'fix.patch')\n"
            "    Path(f'{name}.py').parent / 'fix.patch'\n    os.path.join(os.path.dirname('setup.py'), 'fix.patch')\n",
            [
                ("docker/patches", False, False),
                ("ci/docker", False, False),
                ("docker/patches", False, False),
                ("docker/patches", False, False),
                ("fix.patch", False, False),
            ],
            id="dirname drops what follows the last slash, parent the last name; neither knows an unknown one's",
        ),
        pytest.param(
            "import glob, os\nROOT = os.path.dirname(os.path.dirname(__file__))\nHERE = os.path.dirname(__file__)\n"
            "open(f'{ROOT}/docker/a.patch')\nopen(ROOT + '/XLA/b.patch')\nopen(f'{HERE}/c.patch')\n"
            "glob.glob(f'{ROOT}/patches/*.patch')\n",
            [
                ("ci", True, False),
                ("patches/*.patch", True, True),
                ("docker/a.patch", True, False),
                ("XLA/b.patch", True, False),
                ("ci/c.patch", True, False),
            ],
            id="an f-string or a + that starts from __file__ is a repository path, a / after the root's own path",
        ),
        pytest.param(
            "from pathlib import Path\nPath(__file__).parents[0] / 'a.patch'\nPath(__file__).parents[1] / 'b.patch'\n",
            [("ci/a.patch", True, False), ("b.patch", True, False)],
            id="parents[0] is the parent, parents[1] the one above",
        ),
        pytest.param(
            "import glob\nglob.glob('*.patch')\nglob.glob('')\n",
            [("*.patch", False, True)],
            id="a glob of known parts names its pattern, a folder known or not; an empty one names nothing",
        ),
    ],
)
def test_python_path_expressions_are_evaluated_as_python_evaluates_them(
    text: str, expected: list[tuple[str, bool, bool]]
) -> None:
    """Each row is a file `ci/x.py`: what `os.path`, `pathlib`, `glob` and names make of its strings, as far as the
    file itself tells (`dirname("a/b/")` is `a/b`, `Path("a/b/").parent` is `a`; a parameter is unknown)."""
    mentions = path_mentions(source.decode("ci/x.py", text.encode()), "ci/x.py")
    assert mentions == [PathMention(*mention) for mention in expected]


def test_python_a_file_is_read_whatever_python_warns_of_it() -> None:
    """An invalid escape such as `"\\d"` makes Python warn while parsing (an error where warnings are errors):
    the file is read all the same, and no warning about the scanned file escapes."""
    text = 'PATTERN = "v\\d+"\nopen("docker/fix.patch")\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mentions = path_mentions(source.decode("ci/x.py", text.encode()), "ci/x.py")
    assert mentions == [PathMention("docker/fix.patch", False, False)]


def test_each_known_action_writes_its_places_in_its_step_at_its_uses_line() -> None:
    """A checkout at its `path:` (read with the step's env), a restore at each `path:` line that is no exclusion
    (the workspace without one), an action it does not know anywhere in the workspace and at each path of its
    `with:`; each write is the step's, at the `uses:` line (or at the `with:` value for a path it names)."""
    flow = _job(
        """\
      - name: sources
        uses: actions/checkout@v4
        with: {path: "${{ env.SRC }}"}
      - name: artifacts
        uses: actions/download-artifact@v4
        with:
          path: |
            dist
            !dist/skip
            $RUNNER_TEMP/w/${{ matrix.arch }}/x
      - uses: actions/cache@v4
        with: {key: k}
      - name: generate
        uses: some/generator@v1
        with:
          out: build/gen plain .venv
""",
        top="env: {SRC: src}\n",
    )
    assert [
        (
            event.effect.kind if isinstance(event.effect, Write) else None,
            str(event.effect.place) if isinstance(event.effect, Write) else None,
            event.step.index if event.step is not None else None,
            event.span.line,
        )
        for event in flow.events
    ] == [
        ("checkout", "src", 0, 8),
        ("download", "dist", 1, 11),
        ("download", "$RUNNER_TEMP/w", 1, 11),
        ("download", ".", 2, 17),
        ("opaque", ".", 3, 20),
        ("named", "build/gen", 3, 22),
        ("named", ".venv", 3, 22),
    ]
    assert flow.origin(Place(WORKSPACE, "src/a.sh"), flow.starts[1]).repository_path == "a.sh"


def test_build_push_builds_the_dockerfile_of_its_context_or_an_unknown_one() -> None:
    flow = _job("""\
      - uses: actions/checkout@v4
      - uses: docker/build-push-action@v6
        with: {context: docker}
      - uses: docker/build-push-action@v6
        with: {context: "${{ matrix.context }}"}
""")
    assert [([str(p) for p in b.dockerfiles], str(b.context), b.git_context) for b in flow.builds] == [
        (["docker/Dockerfile"], "docker", False),
        ([], "None", False),
    ]


def test_a_composite_action_starts_with_this_repository_in_the_workspace_and_its_folder(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            "tools/act/action.yml": "runs:\n  using: composite\n  steps:\n"
            "    - run: bash scripts/x.sh && bash $GITHUB_ACTION_PATH/run.sh\n      shell: bash\n",
        }
    )
    ((_, flow),) = _files(root).actions
    assert [flow.origin(read.reference.place, read.seq).repository_path for read in flow.reads] == [
        "scripts/x.sh",
        "tools/act/run.sh",
    ]


@pytest.mark.parametrize(
    ("text", "cwd", "expected"),
    [
        ("$GITHUB_WORKSPACE/out/${NAME}", None, Place(WORKSPACE, "out")),
        ("${{ github.workspace }}/${NAME}", None, Place(WORKSPACE)),
        ("out/$NAME", Place(WORKSPACE, "sub"), Place(WORKSPACE, "sub/out")),
        ("/tmp/megatron-${VERSION}.tgz", None, Place(ROOT, "tmp")),
        ("/${NAME}/y", None, None),
        ("$NAME/y", None, None),
    ],
)
def test_a_write_to_a_word_partly_unknown_is_somewhere_in_its_deepest_known_folder(
    text: str, cwd: Place | None, expected: Place | None
) -> None:
    assert Scope(W).where(text, cwd) == expected


def test_a_place_is_shown_and_written_back_as_a_word_that_reads_as_it() -> None:
    assert [str(place) for place in (Place(HOME), Place(TEMP, "p"), Place(STAGE + "build"))] == [
        "$HOME",
        "$RUNNER_TEMP/p",
        "stage:build",
    ]
    places = [Place(WORKSPACE), Place(WORKSPACE, "a/b"), Place(ROOT, "opt")]
    words = [written(place) for place in places]
    assert words == ["$GITHUB_WORKSPACE", "$GITHUB_WORKSPACE/a/b", "/opt"]
    assert [Scope(None).place(word) for word in words] == places
    # a base no script can name is written as a variable no script sets
    assert [written(Place(STAGE + "build", "x")), written(Place(CONTEXT))] == ["$STAGE_BUILD", "$CONTEXT"]


def test_a_place_inside_a_folder_and_the_literal_folder_of_a_glob() -> None:
    assert Place(WORKSPACE, "../x").within(W) is None
    assert Place(WORKSPACE, "a/x").within(W) == "a/x"
    assert Place(WORKSPACE, "a/b/*.patch", glob=True).literal_folder() == Place(WORKSPACE, "a/b")


def test_a_subshell_keeps_the_variables_of_its_parent() -> None:
    flow = _flow('D=/opt/m\n(bash "$D/x.sh")\n')
    assert [str(read.reference.place) for read in flow.reads] == ["/opt/m/x.sh"]


@pytest.mark.parametrize(
    ("steps", "builds", "reported"),
    [
        (  # the Git context is the repository at the ref: what the job made in the workspace is not in it
            "      - run: mkdir -p assets\n"
            "      - uses: docker/build-push-action@v6\n        with: {file: docker/Dockerfile}\n",
            [("docker/Dockerfile", "")],
            True,
        ),
        (  # an action ci-checks does not know leaves the checkout's files for what they are
            "      - uses: some/action@v1\n      - run: docker build -f docker/Dockerfile .\n",
            [("docker/Dockerfile", "")],
            True,
        ),
        (  # a folder made with something inside it is there for `COPY`
            "      - run: mkdir -p assets/x && docker build -f docker/Dockerfile .\n",
            [("docker/Dockerfile", "")],
            False,
        ),
        (  # a Dockerfile outside the repository is none of its builds
            "      - uses: docker/build-push-action@v6\n        with: {file: ../other/Dockerfile}\n",
            [],
            True,
        ),
    ],
)
def test_a_copy_source_missing_from_the_repository_is_reported_unless_the_job_made_it_in_the_context(
    make_repo: MakeRepo, steps: str, builds: list[tuple[str, str]], reported: bool
) -> None:
    root = make_repo(
        {
            ".github/workflows/image.yml": "on: push\njobs:\n  image:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n" + steps,
            "docker/Dockerfile": "FROM ubuntu:24.04\nCOPY assets/ /opt/data/\n",
        }
    )
    assert [(build.dockerfile, build.context) for build in _files(root).builds] == builds
    result = run_cli("check", root, "--select", "CC041", "--backends", "none", "--output-format", "concise")
    assert [line.split(" ")[:2] for line in result.out.splitlines()[:-1]] == (
        [["docker/Dockerfile:2:6:", "CC041"]] if reported else []
    )


@pytest.fixture
def fetching(make_repo: MakeRepo) -> Path:
    job = "    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: {}\n"
    action = "runs:\n  using: composite\n  steps:\n    - run: {}\n      shell: bash\n"
    return make_repo(
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n  a:\n"
            + job.format("git fetch origin x")
            + "  b:\n"
            + job.format("echo hi"),
            "tools/fetch/action.yml": action.format("git fetch origin y"),
            "tools/quiet/action.yml": action.format("echo hi"),
            "docker/Dockerfile": "FROM ubuntu:24.04\nRUN git fetch origin z\n",
            "other/Dockerfile": "FROM ubuntu:24.04\nRUN git fetch origin z\n",
            "quiet/Dockerfile": "FROM ubuntu:24.04\nRUN echo hi\n",
        }
    )


def test_the_flows_asked_about_are_those_of_the_targets_and_covered_dockerfiles_that_mention_the_words(
    fetching: Path,
) -> None:
    files = _files(fetching)
    targets = [files.workspace.load(path) for path in (".github/workflows/ci.yml", *files.repository.actions)]
    owned = files.flows_of(targets, lambda path: not path.startswith("other/"), (("fetch",),))
    actions = {id(flow): action.path for action, flow in files.actions}
    images = {id(stage.flow): built.path for built in files.all_images for stage in built.stages}
    assert sorted((found.owner, actions.get(id(found.flow)) or images.get(id(found.flow))) for found in owned) == [
        ("job 'a'", None),
        ("the action", "tools/fetch/action.yml"),
        ("the image", "docker/Dockerfile"),
        ("the image", "docker/Dockerfile"),
    ]


def test_a_jobs_flow_is_made_once_and_the_whole_one_stands_for_its_first_steps(fetching: Path) -> None:
    files = _files(fetching)
    workflow = files.workspace.load(".github/workflows/ci.yml").workflow
    assert workflow is not None
    job = workflow.jobs["a"]
    first = files.job(job, 1)
    assert list(first.starts) == [0]
    assert files.job(job, 1) is first
    whole = files.job(job)
    assert list(whole.starts) == [0, 1]
    assert files.job(job) is whole
    assert files.job(job, 1) is whole


def test_env_sets_variables_in_either_form_and_an_exec_form_run_reads_what_it_names(
    make_repo: MakeRepo,
) -> None:
    """`ENV A=value B="value"` (quotes stripped), the old `ENV NAME value` (however spaced) and a value naming an
    earlier variable all set what a `RUN` reads; `RUN ["bash", "x.sh"]` reads its script like a shell line."""
    root = make_repo(
        {
            "docker/Dockerfile": (
                "FROM ubuntu:24.04\n"
                "COPY patches/ /opt/patches/\n"
                'ENV P="/opt/patches" TOOLS=/opt/MAX\n'
                "ENV OLD    /opt/patches/old\n"
                "ENV NEW=$P/new\n"
                "WORKDIR /src\n"
                "RUN git apply $P/a.patch && git apply $OLD/b.patch && git apply $NEW/c.patch && bash $TOOLS/x.sh\n"
                'RUN ["bash", "/opt/patches/run.sh"]\n'
            ),
            "patches/a.patch": "diff\n",
        }
    )
    built = _files(root).images("docker/Dockerfile")[0]
    assert built.context == ""
    assert [
        (str(read.reference.place), built.stages[0].flow.origin(read.reference.place, read.seq).repository_path)
        for read in built.stages[0].flow.reads
        if read.reference.kind in ("patch", "script")
    ] == [
        ("/opt/patches/a.patch", "patches/a.patch"),
        ("/opt/patches/old/b.patch", "patches/old/b.patch"),
        ("/opt/patches/new/c.patch", "patches/new/c.patch"),
        ("/opt/MAX/x.sh", None),
        ("/opt/patches/run.sh", "patches/run.sh"),
    ]


def test_docker_build_commands_are_builds_of_the_file_they_name_or_of_their_contexts_dockerfile() -> None:
    flow = _job("""\
      - uses: actions/checkout@v4
      - run: |
          docker build docker && docker build --file docker/Dockerfile.rocm -t x .
          docker build --file=docker/Dockerfile.git -t y "$CTX"
      - run: docker build -t z ci
      - run: docker build -f=docker/Dockerfile.eq . && docker build -fdocker/Dockerfile.joined --force-rm .
""")
    assert [([str(p) for p in b.dockerfiles], str(b.context), b.step.index) for b in flow.builds] == [
        (["docker/Dockerfile"], "docker", 1),
        (["docker/Dockerfile.rocm"], ".", 1),
        (["docker/Dockerfile.git"], "None", 1),
        (["ci/Dockerfile"], "ci", 2),
        (["docker/Dockerfile.eq"], ".", 3),
        (["docker/Dockerfile.joined"], ".", 3),
    ]


def test_a_run_step_starts_in_its_jobs_default_working_directory_or_else_its_workflows() -> None:
    flows = {
        job.id: job_flow(job)
        for job in _workflow(
            "on: push\ndefaults: {run: {working-directory: wf}}\njobs:\n"
            "  own:\n    runs-on: x\n    defaults: {run: {working-directory: jobdir}}\n    steps:\n"
            "      - run: bash a.sh\n      - run: bash b.sh\n        working-directory: step\n"
            "  inherited:\n    runs-on: x\n    steps:\n      - run: bash c.sh\n"
        ).jobs.values()
    }
    assert {name: [str(read.reference.place) for read in flow.reads] for name, flow in flows.items()} == {
        "own": ["jobdir/a.sh", "step/b.sh"],
        "inherited": ["wf/c.sh"],
    }


@pytest.mark.parametrize(
    ("with_", "this_repository", "place"),
    [
        ("{}", True, Place(WORKSPACE)),
        ("{path: sub/dir, repository: '${{ github.repository }}'}", True, Place(WORKSPACE, "sub/dir")),
        ("{path: '${{ github.workspace }}/src', repository: o/other}", False, Place(WORKSPACE, "src")),
        ("{path: ../outside}", True, None),
        ("{path: /opt/x}", True, None),
        ("{path: $RUNNER_TEMP/x}", True, None),
        ("{path: 'a/*'}", True, None),
        ("{path: $DIR/x}", True, None),
    ],
)
def test_a_checkout_is_of_this_repository_or_another_at_a_workspace_path_or_an_unknown_place(
    with_: str, this_repository: bool, place: Place | None
) -> None:
    text = "on: push\njobs:\n  job:\n    runs-on: x\n    steps:\n      - uses: actions/checkout@v4\n"
    text += f"        with: {with_}\n"
    found = checkout(_workflow(text).jobs["job"].steps[0])
    assert found is not None
    assert (found.this_repository, found.place) == (this_repository, place)


def test_a_job_is_asked_about_when_its_steps_scripts_hold_a_word_of_each_group(
    make_repo: MakeRepo,
) -> None:
    """Each group's word may be in any step, and nothing but the scripts' own text holds it."""
    root = make_repo(
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n"
            "      - run: git fetch origin x\n      - uses: actions/checkout@v4\n      - run: pip install -e .\n",
        }
    )
    files = _files(root)
    targets = [files.workspace.load(".github/workflows/ci.yml")]

    def owners(*groups: tuple[str, ...]) -> list[str]:
        return [found.owner for found in files.flows_of(targets, lambda path: True, groups)]

    assert owners(("fetch",), ("develop", "install")) == ["job 'a'"]
    assert owners(("fetch",), ("X",)) == owners(("checkout",)) == []


def test_a_bind_mount_copies_a_path_of_the_context_or_of_a_stage_and_another_mount_may_hold_anything(
    make_repo: MakeRepo,
) -> None:
    """A bind mount's `source` (or `src`) is a path of the context, or with `from=` of that stage's file system
    (by name or index), with or without a leading slash; without one, the whole context or stage. Its `target`
    (`dst`) holds it for the command; a source that cannot be read or an image's holds unknown content, a cache
    mount whatever an earlier build left, and a mount at a target that cannot be read is nowhere known (the mounts
    after it still are)."""
    mounts = (
        "FROM ubuntu:24.04 AS build\nCOPY tools /opt/tools\nFROM ubuntu:24.04\n"
        "RUN --mount=type=bind,from=build,source=/opt/tools,target=/mnt/t bash /mnt/t/a.sh\n"
        "RUN --mount=type=bind,from=0,target=/mnt/root bash /mnt/root/opt/tools/b.sh\n"
        "RUN --mount=type=bind,source=/docker/extra,target=/mnt/e bash /mnt/e/c.sh\n"
        "RUN --mount=src=docker,dst=/mnt/d bash /mnt/d/extra/d.sh\n"
        "RUN --mount=type=bind,target=/ctx bash /ctx/e.sh\n"
        "RUN --mount=type=bind,from=nginx:latest,target=/mnt/n bash /mnt/n/f.sh\n"
        "RUN --mount=type=bind,source=$X,target=/mnt/x --mount=type=cache,target=/mnt/c --mount=type=bind,target=$T"
        " bash /mnt/x/g.sh && bash /mnt/c/h.sh\n"
        "RUN --mount=type=bind,target=$T --mount=type=bind,source=tools,target=/mnt/u bash /mnt/u/j.sh\n"
        "COPY --from=build /opt/tools/*.sh /usr/bin/\nRUN bash /usr/bin/i.sh\n"
    )
    root = make_repo({"docker/Dockerfile": mounts, "tools/a.sh": ""})
    built = _files(root).images("docker/Dockerfile")[0]
    flow = built.stages[1].flow
    origins = [(str(read.reference.place), flow.origin(read.reference.place, read.seq)) for read in flow.reads]
    assert [(place, origin.kind, origin.repository_path) for place, origin in origins] == [
        ("/mnt/t/a.sh", "copy", "tools/a.sh"),
        ("/mnt/root/opt/tools/b.sh", "copy", "tools/b.sh"),
        ("/mnt/e/c.sh", "copy", "docker/extra/c.sh"),
        ("/mnt/d/extra/d.sh", "copy", "docker/extra/d.sh"),
        ("/ctx/e.sh", "copy", "e.sh"),
        ("/mnt/n/f.sh", "copy", None),
        ("/mnt/x/g.sh", "copy", None),
        ("/mnt/c/h.sh", "named", None),
        ("/mnt/u/j.sh", "copy", "tools/j.sh"),
        ("/usr/bin/i.sh", "copy", "tools/i.sh"),
    ]


def test_copy_and_add_put_each_source_at_its_destination_or_in_it(
    make_repo: MakeRepo,
) -> None:
    """A folder of the context is copied whole at the destination, a file into a destination ending in `/` (or given
    with other sources) under its name, else as the destination; `ADD` of a local archive unpacks it there, of a URL
    downloads; a source or destination that cannot be read, or another image's path, puts unknown content; a
    here-document creates the file, or in a folder a file named after its marker; a `COPY` of one word does
    nothing."""
    dockerfile = (
        "FROM ubuntu:24.04\nCOPY tools /opt/tools\nCOPY tools a.sh /opt/both\nCOPY a.sh /opt/one/\n"
        "COPY a.sh /opt/renamed.sh\nCOPY lonely\nCOPY <<EOF /etc/conf.txt\nx\nEOF\nCOPY a.sh $DEST/\n"
        "ADD https://example.com/x.tgz /opt/dl/\nADD $URL /opt/var/\nADD tools/x.tar.gz /opt/unpacked/\n"
        "COPY tools/x.tar.gz /opt/packed/\nCOPY --from=nginx /x /opt/nginx\n"
        'COPY <<robots.txt <<"humans.txt" /srv/html/\nUser-agent: *\nrobots.txt\nteam\nhumans.txt\n'
    )
    root = make_repo({"docker/Dockerfile": dockerfile, "tools/run.sh": "", "a.sh": ""})
    from_root, from_docker = _files(root).images("docker/Dockerfile")
    assert (from_root.context, from_docker.context) == ("", "docker")
    assert [
        f"{event.span.line}: {event.effect.kind} {event.effect.place} from {event.effect.source}"
        for event in from_root.stages[0].flow.writes
        if isinstance(event.effect, Write) and event.effect.kind != "checkout"
    ] == [
        "2: copy /opt/tools from tools",
        "3: copy /opt/both from tools",
        "3: copy /opt/both/a.sh from a.sh",
        "4: copy /opt/one/a.sh from a.sh",
        "5: copy /opt/renamed.sh from a.sh",
        "7: create /etc/conf.txt from None",
        "10: copy None from None",
        "11: download /opt/dl from None",
        "12: copy /opt/var from None",
        "13: unpack /opt/unpacked from None",
        "14: copy /opt/packed/x.tar.gz from tools/x.tar.gz",
        "15: copy /opt/nginx from None",
        "16: create /srv/html/robots.txt from None",
        "16: create /srv/html/humans.txt from None",
    ]
    assert [(source.word.value, source.keyword, str(source.place)) for source in from_root.sources][6:] == [
        ("https://example.com/x.tgz", "ADD", "None"),
        ("$URL", "ADD", "None"),
        ("tools/x.tar.gz", "ADD", "tools/x.tar.gz"),
        ("tools/x.tar.gz", "COPY", "tools/x.tar.gz"),
        ("/x", "COPY", "None"),
    ]
    moved = set(from_docker.places()) - set(from_root.places())
    assert moved == {Place(ROOT, "opt/both/tools")}  # `tools` is no folder of the context `docker`


def test_each_source_of_a_copy_of_several_is_put_whatever_the_source_before_it_was() -> None:
    """After a here-document, an unknown destination, a URL or variable, or an archive `ADD` unpacks, the next
    source is still put (and listed); a source is the word as written (`Xa.sh`); in a context that cannot be known a
    source is taken for a file, so into a folder destination it goes under its own name."""
    text = (
        "FROM ubuntu:24.04\nCOPY <<EOF a.sh /opt/h/\nx\nEOF\nCOPY a.sh b.sh $DEST/\nADD $URL a.sh /opt/var/\n"
        "ADD tools/x.tar.gz a.sh /opt/u/\nCOPY Xa.sh /opt/x/\nCOPY tools /opt/t/\n"
    )
    parsed = dockerfile.parse(source.decode("Dockerfile", text.encode()))
    shown = []
    for context in ("", None):
        built = image(parsed, "Dockerfile", context, lambda path: path == "tools")
        assert [found.word.value for found in built.sources] == [
            *("a.sh", "a.sh", "b.sh", "$URL", "a.sh", "tools/x.tar.gz", "a.sh", "Xa.sh", "tools")
        ]
        shown.append(
            [
                f"{event.span.line}: {event.effect.kind} {event.effect.place} from {event.effect.source}"
                for event in built.stages[0].flow.writes
                if isinstance(event.effect, Write) and event.effect.kind not in ("checkout", "opaque")
            ]
        )
    put = [
        "2: create /opt/h/EOF from None",
        "2: copy /opt/h/a.sh from a.sh",
        "5: copy None from None",
        "5: copy None from None",
        "6: copy /opt/var from None",
        "6: copy /opt/var/a.sh from a.sh",
        "7: unpack /opt/u from None",
        "7: copy /opt/u/a.sh from a.sh",
        "8: copy /opt/x/Xa.sh from Xa.sh",
    ]
    assert shown == [[*put, "9: copy /opt/t from tools"], [*put, "9: copy /opt/t/tools from tools"]]


def _built(text: str) -> Image:
    return image(dockerfile.parse(source.decode("Dockerfile", text.encode())), "Dockerfile", "", lambda path: False)


def _put(stage: Stage) -> list[str]:
    return [
        f"{event.span.line}: {event.effect.kind} {event.effect.place} from {event.effect.source}"
        for event in stage.flow.writes
        if isinstance(event.effect, Write) and event.effect.kind in ("copy", "create")
    ]


def test_a_here_document_copied_into_a_folder_is_named_after_its_marker_without_dash_or_quotes() -> None:
    """`COPY <<-EOF <<XEOX /opt/h/` creates `/opt/h/EOF` and `/opt/h/XEOX`: the `-` (strip tabs) is no part of
    the name, and a marker's own letters, whatever they are, all are."""
    built = _built("FROM ubuntu:24.04\nCOPY <<-EOF <<XEOX /opt/h/\n\tx\n\tEOF\ny\nXEOX\n")
    assert _put(built.stages[0]) == ["2: create /opt/h/EOF from None", "2: create /opt/h/XEOX from None"]


def test_a_mount_option_value_may_hold_an_equals_sign_and_a_mount_without_a_target_mounts_nothing() -> None:
    """BuildKit splits each mount option at its first `=` (`source=conf=a` is the context path `conf=a`); the
    target may be spelt `destination`; a mount without a target (an error to BuildKit) puts nothing anywhere."""
    built = _built(
        "FROM ubuntu:24.04\nRUN --mount=type=bind,source=conf=a,destination=/mnt/c --mount=type=bind,source=tools"
        " bash /mnt/c/k.sh\n"
    )
    flow = built.stages[0].flow
    assert _put(built.stages[0]) == ["2: copy /mnt/c from conf=a"]
    assert [flow.origin(read.reference.place, read.seq).repository_path for read in flow.reads] == ["conf=a/k.sh"]


def test_the_script_of_a_here_document_fed_to_a_run_shell_is_positioned_where_it_is_in_the_dockerfile() -> None:
    built = _built("FROM ubuntu:24.04\nRUN bash <<EOF\ngit apply /tmp/y.patch\nEOF\n")
    [read] = built.stages[0].flow.reads
    assert (read.reference.span.line, read.reference.span.column, read.reference.span.end_column) == (3, 11, 23)


def test_what_comes_before_the_first_from_is_passed_over_and_an_arg_makes_its_variable_unknown() -> None:
    """An `ARG` before the first `FROM` belongs to no stage and the stages after it are still read; an `ARG A=b=c`
    declares `A` with the default `b=c`, so after it `$A` is unknown where an `ENV` had set it to another value
    (BuildKit lets the later win, the classic builder the `ENV`); `--from=1` in a file of one stage names an image,
    not a stage, so what it copies is unknown."""
    built = _built(
        "ARG BASE=ubuntu:24.04\nFROM $BASE\nENV A=/x\nCOPY a.sh $A/\nARG A=b=c\nCOPY a.sh $A/\n"
        "COPY --from=1 /x /opt/x\n"
    )
    [stage] = built.stages
    assert stage.variables == {"A": None}
    assert _put(stage) == ["4: copy /x/a.sh from a.sh", "6: copy None from None", "7: copy /opt/x from None"]
    assert (built.stage("1"), built.stage("0")) == (None, stage)


def _sources(built: Image) -> list[str]:
    return [f"{source.word.value} -> {source.place}" for source in built.sources]


def test_an_arg_default_is_seen_by_from_lines_and_where_a_stage_declares_it_again_until_the_stage_ends() -> None:
    """An `ARG` before the first `FROM` names the base image (here a stage of the file, which is then read as the
    parent) and is unknown inside a stage until `ARG NAME` declares it there; a stage's own `ARG` (quotes removed,
    earlier variables substituted) lasts until the stage ends, and is unknown in a stage built from it."""
    built = _built(
        "ARG PATCH_DIR=docker/patches\nARG BASE=builder\nARG UNSET\n"
        "FROM ubuntu:24.04 AS builder\nCOPY ${PATCH_DIR}/a.patch /tmp/\nARG PATCH_DIR\n"
        'COPY ${PATCH_DIR}/a.patch /tmp/\nARG TOOLS="docker/my tools" SUB=$PATCH_DIR/sub\nWORKDIR /opt/$SUB\n'
        "COPY ${TOOLS}/x.sh ./\nARG UNSET\nCOPY $UNSET/y.sh /tmp/\n"
        "FROM ${BASE}\nCOPY $PATCH_DIR/b.patch /tmp/\nCOPY $TOOLS/c.sh /tmp/\nARG LOCAL=local\n"
        "FROM ubuntu:24.04\nCOPY $LOCAL/d.sh /tmp/\n"
    )
    assert [(stage.name, stage.image) for stage in built.stages] == [
        ("builder", "ubuntu:24.04"),
        (None, "builder"),
        (None, "ubuntu:24.04"),
    ]
    assert _sources(built) == [
        "${PATCH_DIR}/a.patch -> None",
        "${PATCH_DIR}/a.patch -> docker/patches/a.patch",
        "${TOOLS}/x.sh -> docker/my tools/x.sh",
        "$UNSET/y.sh -> None",
        "$PATCH_DIR/b.patch -> None",
        "$TOOLS/c.sh -> None",
        "$LOCAL/d.sh -> None",
    ]
    assert built.stages[0].cwd == Place(ROOT, "opt/docker/patches/sub")
    assert built.stages[1].cwd == Place(ROOT, "opt/docker/patches/sub")  # the parent's working directory


def test_an_arg_set_by_the_builder_or_by_an_env_of_another_value_is_unknown_and_an_env_of_the_same_value_is_kept() -> (
    None
):
    """The platform and proxy arguments are the builder's, whatever their default; an `ENV` and an `ARG` of one
    name and different values leave it unknown (BuildKit and the classic builder disagree on which wins); an `ENV`
    of a variable without a known value is unknown, not the text of the variable (`$LATER` is empty there, not
    what a later `ENV` sets)."""
    built = _built(
        "FROM ubuntu:24.04\nARG TARGETARCH=amd64 HTTP_PROXY=http://proxy:3128 BUILDKIT_INLINE_CACHE=1\n"
        "COPY bin/${TARGETARCH}/tool /usr/bin/\nENV P=/a\nARG P=/b\nARG Q=/q\nENV Q=/q\nENV R=$Q/r Z=$LATER/z\n"
        "ENV LATER=/opt\nARG SAME=/q\nENV SAME=/q\n"
    )
    [stage] = built.stages
    assert _sources(built) == ["bin/${TARGETARCH}/tool -> None"]
    assert stage.variables == {
        "TARGETARCH": None,
        "HTTP_PROXY": None,
        "BUILDKIT_INLINE_CACHE": None,
        "P": None,
        "Q": "/q",
        "R": "/q/r",
        "Z": None,
        "LATER": "/opt",
        "SAME": "/q",
    }


def test_the_build_arguments_a_build_passes_replace_the_defaults_and_one_not_known_leaves_the_arg_unknown() -> None:
    """`--build-arg NAME=value` (also `--build-arg=`) sets NAME for the `ARG` before the first `FROM` and in the
    stage that declares it again, with or without a default; `NAME` alone (from the environment) is unknown."""
    text = (
        "ARG PATCH_DIR=docker/patches\nARG BASE=ubuntu:24.04\nFROM $BASE\nARG PATCH_DIR\nARG EXTRAS\nARG WHEELS=dist\n"
        "COPY $PATCH_DIR/a.patch $EXTRAS/e.txt $WHEELS/ /tmp/\n"
    )
    parsed = dockerfile.parse(source.decode("Dockerfile", text.encode()))
    passed = {"PATCH_DIR": "docker/rocm6", "EXTRAS": "docker/extras", "BASE": "rocm/pytorch:latest", "WHEELS": None}
    built = image(parsed, "Dockerfile", "", lambda path: False, passed)
    assert built.stages[0].image == "rocm/pytorch:latest"
    assert _sources(built) == [
        "$PATCH_DIR/a.patch -> docker/rocm6/a.patch",
        "$EXTRAS/e.txt -> docker/extras/e.txt",
        "$WHEELS/ -> None",
    ]
    anything = image(parsed, "Dockerfile", "", lambda path: False, None)  # arguments that cannot be read
    assert anything.stages[0].image == "$BASE"
    assert _sources(anything) == ["$PATCH_DIR/a.patch -> None", "$EXTRAS/e.txt -> None", "$WHEELS/ -> None"]


def test_docker_build_and_build_push_pass_their_build_arguments_or_ones_that_cannot_be_read() -> None:
    flow = _job("""\
      - uses: actions/checkout@v4
      - run: |
          docker build -f a/Dockerfile --build-arg A=1 --build-arg=B="x y" --build-arg C --build-arg A=2 .
          docker build -f b/Dockerfile --build-arg "D=$DIR" --build-arg E=${{ matrix.e }} --no-cache .
          docker build -f c/Dockerfile $EXTRA_ARGS .
          docker build -f d/Dockerfile --build-arg "$PAIR" .
          podman build -f e/Dockerfile --build-arg-file=args.conf .
      - uses: docker/build-push-action@v6
        with:
          file: f/Dockerfile
          build-args: |
            F=docker/patches
            G=${{ inputs.g }}
            H
            LIST=8.0,9.0
            QUOTED="x"
      - uses: docker/build-push-action@v6
        with: {file: g/Dockerfile, build-args: "${{ steps.args.outputs.list }}"}
      - uses: docker/build-push-action@v6
        with: {file: h/Dockerfile}
""")
    assert [(str(build.dockerfiles[0]), build.arguments) for build in flow.builds] == [
        ("a/Dockerfile", (("A", "2"), ("B", "x y"), ("C", None))),
        ("b/Dockerfile", (("D", None), ("E", None))),
        ("c/Dockerfile", None),
        ("d/Dockerfile", None),
        ("e/Dockerfile", None),
        ("f/Dockerfile", (("F", "docker/patches"), ("G", None), ("H", None), ("LIST", None), ("QUOTED", None))),
        ("g/Dockerfile", None),
        ("h/Dockerfile", ()),
    ]


def test_a_dockerfile_is_read_once_per_context_and_build_arguments_and_a_loose_build_argument_is_unknown(
    make_repo: MakeRepo,
) -> None:
    """Each pair of context and build arguments the builds of a Dockerfile give is one reading of it; a build
    whose Dockerfile cannot be told (`-f "$DOCKERFILE"`) may build any, so what it passes is unknown in all."""
    build = "      - run: docker build -f docker/Dockerfile {} .\n"
    root = make_repo(
        {
            ".github/workflows/image.yml": "on: push\njobs:\n  image:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n"
            + build.format("--build-arg PATCH_DIR=docker/rocm6")
            + build.format("--build-arg PATCH_DIR=docker/rocm7")
            + build.format("--build-arg PATCH_DIR=docker/rocm7")
            + build.format("")
            + '      - run: docker build -f "$DOCKERFILE" --build-arg WHEELS=dist .\n',
            "docker/Dockerfile": "FROM ubuntu:24.04\nARG PATCH_DIR=docker/patches\nARG WHEELS=wheels\n"
            "COPY $PATCH_DIR/a.patch $WHEELS/ /tmp/\n",
        }
    )
    images = _files(root).images("docker/Dockerfile")
    assert [(built.context, built.arguments, _sources(built)) for built in images] == [
        (
            "",
            {"PATCH_DIR": "docker/rocm6", "WHEELS": None},
            ["$PATCH_DIR/a.patch -> docker/rocm6/a.patch", "$WHEELS/ -> None"],
        ),
        (
            "",
            {"PATCH_DIR": "docker/rocm7", "WHEELS": None},
            ["$PATCH_DIR/a.patch -> docker/rocm7/a.patch", "$WHEELS/ -> None"],
        ),
        ("", {"WHEELS": None}, ["$PATCH_DIR/a.patch -> docker/patches/a.patch", "$WHEELS/ -> None"]),
    ]


def test_past_eight_sets_of_build_arguments_a_context_is_read_once_with_arguments_that_cannot_be_known(
    make_repo: MakeRepo,
) -> None:
    builds = "".join(
        f"      - run: docker build -f docker/Dockerfile --build-arg PATCH_DIR=p{index} {context}\n"
        for index in range(9)
        for context in (".", "docker")
    )
    root = make_repo(
        {
            ".github/workflows/image.yml": "on: push\njobs:\n  image:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n"
            + builds
            + "      - run: docker build -f docker/Dockerfile --build-arg PATCH_DIR=p0 tools\n",
            "docker/Dockerfile": "FROM ubuntu:24.04\nARG PATCH_DIR=docker/patches\nCOPY $PATCH_DIR/a.patch /tmp/\n",
        }
    )
    images = _files(root).images("docker/Dockerfile")
    assert [(built.context, built.arguments, _sources(built)) for built in images] == [
        ("tools", {"PATCH_DIR": "p0"}, ["$PATCH_DIR/a.patch -> p0/a.patch"]),
        ("", None, ["$PATCH_DIR/a.patch -> None"]),
        ("docker", None, ["$PATCH_DIR/a.patch -> None"]),
    ]


@pytest.mark.parametrize(
    ("steps", "reported"),
    [
        ("      - run: docker build -f docker/Dockerfile .\n", ["docker/Dockerfile:4:6: CC041"]),
        ("      - run: docker build -f docker/Dockerfile --build-arg PATCH_DIR=docker/rocm6 .\n", []),
        (
            "      - run: docker build -f docker/Dockerfile --build-arg PATCH_DIR=docker/rocm7 .\n",
            ["docker/Dockerfile:4:6: CC041"],
        ),
        ("      - run: docker build -f docker/Dockerfile --build-arg PATCH_DIR .\n", []),
        (  # one build finds the patch: a reading that does is enough, as for two contexts
            "      - run: docker build -f docker/Dockerfile --build-arg PATCH_DIR=docker/rocm6 .\n"
            "      - run: docker build -f docker/Dockerfile --build-arg PATCH_DIR=docker/rocm7 .\n",
            [],
        ),
        (
            "      - uses: docker/build-push-action@v6\n        with:\n          file: docker/Dockerfile\n"
            "          build-args: PATCH_DIR=docker/rocm7\n",
            ["docker/Dockerfile:4:6: CC041"],
        ),
        (
            "      - uses: docker/build-push-action@v6\n        with:\n          file: docker/Dockerfile\n"
            "          build-args: PATCH_DIR=${{ inputs.patches }}\n",
            [],
        ),
    ],
)
def test_a_copy_source_named_by_an_arg_is_judged_with_the_value_each_build_gives(
    make_repo: MakeRepo, steps: str, reported: list[str]
) -> None:
    root = make_repo(
        {
            ".github/workflows/image.yml": "on: push\njobs:\n  image:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n" + steps,
            "docker/Dockerfile": "ARG PATCH_DIR=docker/patches\nFROM ubuntu:24.04\nARG PATCH_DIR\n"
            "COPY ${PATCH_DIR}/amd.patch /tmp/amd.patch\n",
            "docker/rocm6/amd.patch": "diff\n",
        }
    )
    result = run_cli("check", root, "--select", "CC041", "--backends", "none", "--output-format", "concise")
    assert [line.split(" ")[0] + " " + line.split(" ")[1] for line in result.out.splitlines()[:-1]] == reported


def test_a_patch_applied_from_a_folder_an_arg_names_is_read_where_the_copy_put_it(
    make_repo: MakeRepo,
) -> None:
    """`RUN git apply /tmp/${PATCH}`: the `ARG`'s value names the file a `COPY` put there, or one that nothing
    put there while the repository has a file of that name."""
    root = make_repo(
        {
            "docker/Dockerfile": "FROM ubuntu:24.04\nARG PATCH=fix.patch\nARG OTHER=gone.patch\n"
            "COPY patches/fix.patch /tmp/\nRUN git apply /tmp/${PATCH} && git apply /tmp/${OTHER}\n",
            "patches/fix.patch": "diff\n",
            "patches/gone.patch": "diff\n",
        }
    )
    result = run_cli("check", root, "--select", "CC048", "--backends", "none", "--output-format", "concise")
    assert [line.split(" ")[:2] for line in result.out.splitlines()[:-1]] == [["docker/Dockerfile:5:42:", "CC048"]]


def test_a_here_document_of_a_run_is_the_script_only_of_the_shell_it_is_fed_to() -> None:
    """`cat > x <<EOF && sh`: the here-document is what `cat` writes; the `sh` after it reads the build's empty
    standard input, not the here-document."""
    text = (
        "FROM ubuntu:24.04\nRUN cat > /tmp/p.sh <<EOF && sh\ngit apply /tmp/x.patch\nEOF\n"
        "RUN bash <<EOF\ngit apply /tmp/y.patch\nEOF\n"
    )
    built = image(dockerfile.parse(source.decode("Dockerfile", text.encode())), "Dockerfile", "", lambda path: False)
    assert [str(read.reference.place) for read in built.stages[0].flow.reads] == ["/tmp/y.patch"]


def test_a_stage_reads_its_parent_and_another_stage_counting_only_the_writes_its_caller_counts() -> None:
    """A caller that ignores writes to unknown places (`RUN cp /etc/x $DEST`) sees, through a stage `FROM` another,
    a `--from=` copy or a stage's own place, what the other stage put there; one that counts them cannot know."""
    text = (
        "FROM ubuntu:24.04 AS build\nCOPY tools/run.sh /opt/run.sh\nRUN cp /etc/x $DEST\n"
        "FROM build\nCOPY --from=build /opt/run.sh /srv/run.sh\n"
    )
    built = image(dockerfile.parse(source.decode("Dockerfile", text.encode())), "Dockerfile", "", lambda path: False)
    flow = built.stages[1].flow
    places = [Place(ROOT, "opt/run.sh"), Place(ROOT, "srv/run.sh"), Place(STAGE + "build", "opt/run.sh")]
    assert [
        flow.origin(place, flow.end, ignore).repository_path
        for ignore in (frozenset({"unplaced"}), frozenset())
        for place in places
    ] == ["tools/run.sh", "tools/run.sh", "tools/run.sh", None, None, None]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (  # git takes the last name after a `/` or a `:`; a URL that leaves no name clones nowhere known
            "git clone h:o:r.git; git clone .git; git clone https://x/o/r.git",
            "clone r; clone None; clone r",
        ),
        (  # `gh repo clone` runs `git clone` of the repository's URL with its other arguments (`--` passes git's
            # options on, `-u` is gh's own remote name): the folder given, else the repository's name
            "gh repo clone cli; gh repo clone https://github.com/o/r.git; gh repo clone o/r -- --depth 1;"
            " gh repo clone o/r d -- --depth=1; gh repo clone git@github.com:o/r.git; gh repo clone -u up o/r;"
            " gh repo clone o/r --upstream-remote-name up",
            "clone cli; clone r; clone r; clone d; clone r; clone r; clone r",
        ),
    ],
)
def test_a_clone_lands_in_its_folder_operand_or_where_git_names_it_after_the_url(script: str, expected: str) -> None:
    assert "; ".join(_effects(script)) == expected


STALE_INSTALLS = """on: push
jobs:
  here:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: |
          git fetch origin "$PR"
          pip install -e . --no-deps --no-build-isolation --prefix=/opt
          git checkout -f FETCH_HEAD
  sub:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: |
          git clone https://github.com/NVIDIA/Megatron-LM megatron
          git -C megatron fetch origin "$MEGATRON_PR_NUMBER_FROM_CALLER"
          pip install -e megatron
          git -C megatron checkout FETCH_HEAD
  home:
    runs-on: ubuntu-latest
    steps:
      - run: |
          cd "$HOME"
          git fetch origin "$PR"
          pip install -e .
          git checkout FETCH_HEAD
"""


def test_an_install_between_a_fetch_and_its_checkout_names_the_tree_and_both_commands(make_repo: MakeRepo) -> None:
    """CC047 names the tree installed (the workspace itself, a folder in it, a folder elsewhere) and shows each
    command whole up to 60 characters (the fetch of `sub` has 60), cut to 57 and `...` beyond (the install of `here`
    has 61)."""
    root = make_repo({".github/workflows/ci.yml": STALE_INSTALLS})
    result = run_cli("check", root, "--select", "CC047", "--output-format", "json")
    found = [
        (d["line"], d["column"], d["message"], [(r["line"], r["column"], r["message"]) for r in d["related"]])
        for d in json.loads(result.out)["diagnostics"]
    ]
    stale = "it installs the tree as it was before the fetch; check the fetched ref out first"
    sub_fetch = "git -C megatron fetch origin $MEGATRON_PR_NUMBER_FROM_CALLER"
    assert found == [
        (
            9,
            26,
            "`pip install -e . --no-deps --no-build-isolation --prefix=...` installs the tree in the workspace after "
            f"`git fetch origin $PR` and before `git checkout -f FETCH_HEAD`: {stale}",
            [
                (8, 11, "`git fetch origin $PR` fetches the ref here"),
                (10, 11, "`git checkout -f FETCH_HEAD` checks it out only here"),
            ],
        ),
        (
            18,
            26,
            f"`pip install -e megatron` installs the tree in `megatron` after `{sub_fetch}` and before "
            f"`git -C megatron checkout FETCH_HEAD`: {stale}",
            [
                (17, 11, f"`{sub_fetch}` fetches the ref here"),
                (19, 11, "`git -C megatron checkout FETCH_HEAD` checks it out only here"),
            ],
        ),
        (
            26,
            26,
            f"`pip install -e .` installs the tree in `$HOME` after `git fetch origin $PR` and before "
            f"`git checkout FETCH_HEAD`: {stale}",
            [
                (25, 11, "`git fetch origin $PR` fetches the ref here"),
                (27, 11, "`git checkout FETCH_HEAD` checks it out only here"),
            ],
        ),
    ]


def test_a_fetch_spelt_with_quotes_is_still_a_fetch(make_repo: MakeRepo) -> None:
    """The shell reads `git fe""tch` and `pip inst'al'l` as `git fetch` and `pip install`, and so does CC047."""
    script = '          git fe""tch origin "$PR"\n          pip inst\'al\'l -e .\n          git checkout FETCH_HEAD\n'
    steps = f"      - uses: actions/checkout@v4\n      - run: |\n{script}"
    root = make_repo(
        {".github/workflows/ci.yml": f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"}
    )
    result = run_cli("check", root, "--select", "CC047", "--backends", "none", "--output-format", "concise")
    assert [header.split(" CC047 ")[0] for header in result.headers] == [".github/workflows/ci.yml:9:28:"]


FETCHED_REFS = (
    ("a", "", "origin/main"),
    ("b", "", "main"),
    ("c", " pull/1/head:pr-1", "pr-1"),
    ("d", " feature", "origin/feature"),
    ("e", " feature", "other"),
    ("f", " feature", "feature"),
    ("h", " +refs/heads/feature:refs/remotes/origin/feature", "origin/feature"),
    ("i", " +refs/heads/feature", "origin/feature"),
    ("j", " refs/heads/feature:refs/heads/local", "local"),
    ("k", " refs/tags/v1:refs/tags/v1", "v1"),
)


def test_an_install_in_another_trees_checkout_is_stale_when_the_later_checkout_names_what_was_fetched(
    make_repo: MakeRepo,
) -> None:
    """In a tree that is not this repository's checkout, a plain `git fetch origin` is checked out as `origin/X`
    (not as a local branch), a fetched ref as itself, as `origin/REF` or as the destination of its `SRC:DST`
    refspec, written whole or short (`refs/remotes/origin/x` is `origin/x`, a leading `+` only forces); a fetch in a
    folder not known is no fetch of any tree."""
    lines = "".join(
        f"          git clone https://example.com/{tree} /opt/{tree}\n"
        f"          git -C /opt/{tree} fetch origin{fetched}\n"
        f"          pip install -e /opt/{tree}\n"
        f"          git -C /opt/{tree} checkout {checked}\n"
        for tree, fetched, checked in FETCHED_REFS
    )
    lines += '          git -C "$SOMEWHERE" fetch origin feature\n          pip install -e /opt/g\n'
    lines += "          git -C /opt/g checkout FETCH_HEAD\n"
    workflow = f"on: push\njobs:\n  trees:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n{lines}"
    root = make_repo({".github/workflows/ci.yml": workflow})
    result = run_cli("check", root, "--select", "CC047", "--backends", "none", "--output-format", "concise")
    stale = "it installs the tree as it was before the fetch; check the fetched ref out first [stale-install]"
    fetch = "git -C /opt/{} fetch origin{}"
    assert result.headers == [
        f".github/workflows/ci.yml:{4 * index + 9}:26: CC047 `pip install -e /opt/{tree}` installs the tree in "
        f"`/opt/{tree}` after `{_shown(fetch.format(tree, fetched))}` and before "
        f"`git -C /opt/{tree} checkout {checked}`: {stale}"
        for index, (tree, fetched, checked) in enumerate(FETCHED_REFS)
        if tree in "acdfhijk"
    ]


def test_a_pull_after_the_install_is_a_fetch_of_its_own_not_the_checkout_of_the_earlier_one(
    make_repo: MakeRepo,
) -> None:
    lines = (
        "          git clone https://example.com/k /opt/k\n          git -C /opt/k fetch origin feature\n"
        "          pip install -e /opt/k\n          git -C /opt/k pull origin feature\n"
    )
    workflow = f"on: push\njobs:\n  trees:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n{lines}"
    root = make_repo({".github/workflows/ci.yml": workflow})
    result = run_cli("check", root, "--select", "CC047", "--backends", "none", "--output-format", "concise")
    assert (result.code, result.headers) == (0, [])


def _shown(command: str) -> str:
    """A command as CC047 shows it: whole up to 60 characters, else its first 57 and `...`."""
    return command if len(command) <= 60 else command[:57] + "..."


def test_a_checkout_of_no_ref_leaves_the_fetch_pending_and_a_write_to_an_unknown_place_leaves_the_checkout_own(
    make_repo: MakeRepo,
) -> None:
    """`git checkout -- setup.py` restores a file: the fetch is still not checked out at the install. In this
    repository's own checkout only `FETCH_HEAD` checks a fetch out, even after a copy to a place ci-checks cannot
    name (which might be anywhere, but is no reason to read the workspace as another tree)."""
    restored = (
        '          git fetch origin "$PR"\n          git checkout -- setup.py\n          pip install -e .\n'
        "          git checkout FETCH_HEAD\n"
    )
    own = (
        '          cp a.txt "$SOMEWHERE/x"\n          git fetch origin main\n          pip install -e .\n'
        "          git checkout origin/main\n"
    )
    jobs = "".join(
        f"  {name}:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: |\n{lines}"
        for name, lines in (("restored", restored), ("own", own))
    )
    root = make_repo({".github/workflows/ci.yml": f"on: push\njobs:\n{jobs}"})
    result = run_cli("check", root, "--select", "CC047", "--backends", "none", "--output-format", "concise")
    assert result.headers == [
        ".github/workflows/ci.yml:10:26: CC047 `pip install -e .` installs the tree in the workspace after "
        "`git fetch origin $PR` and before `git checkout FETCH_HEAD`: it installs the tree as it was before the "
        "fetch; check the fetched ref out first [stale-install]"
    ]


def test_a_path_outside_the_repository_is_reported_only_after_the_step_that_checks_the_repository_out(
    make_repo: MakeRepo,
) -> None:
    """Before this repository's checkout (or after another repository's) `../` leads where nothing is known."""
    steps = (
        "      - run: bash ../before.sh\n"
        "      - uses: actions/checkout@v4\n        with: {repository: other/tools}\n"
        "      - run: bash ../after-other.sh\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: bash ../after.sh\n"
    )
    job = f"  a:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"
    root = make_repo({".github/workflows/ci.yml": f"on: push\njobs:\n{job}"})
    result = run_cli("check", root, "--select", "CC041", "--backends", "none", "--output-format", "concise")
    assert result.headers == [
        ".github/workflows/ci.yml:11:19: CC041 `bash ../after.sh` names `../after.sh`, outside the repository; "
        "ci-checks does not read it [dangling-reference]"
    ]


def test_an_unknown_context_holds_unknown_content_and_a_from_value_is_one_stage_name() -> None:
    """Built from a context that cannot be known, a stage's context holds content ci-checks cannot know (not nothing);
    `--from=a=b` names the stage `a=b`, which no stage is."""
    text = (
        "FROM ubuntu:24.04 AS a\nCOPY tools/run.sh /opt/run.sh\nFROM ubuntu:24.04 AS b\n"
        "COPY --from=a=b /opt/run.sh /opt/x.sh\n"
    )
    parsed = dockerfile.parse(source.decode("Dockerfile", text.encode()))
    origins = []
    for context in ("", None):
        built = image(parsed, "Dockerfile", context, lambda path: False)
        assert [str(found.place) for found in built.sources] == ["tools/run.sh", "None"]
        origins += [stage.flow.origin(Place(CONTEXT, "tools/run.sh"), stage.flow.end) for stage in built.stages]
    assert [(origin.kind, origin.repository_path) for origin in origins] == [
        ("checkout", "tools/run.sh"),
        ("checkout", "tools/run.sh"),
        ("opaque", None),
        ("opaque", None),
    ]


UNPROVIDED_JOB = """on: push
jobs:
  t:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: git apply /tmp/fix.patch
      - run: git apply /tmp/unknown.patch
      - run: bash "$RUNNER_TEMP/setup.sh"
      - run: pip install -r /var/tmp/req.txt
      - run: bash /opt/setup.sh && git apply /opt/fix.patch && bash ./tmp/setup.sh && cat /tmp/fix.patch
      - run: cp patches/other.patch /tmp/ && git apply /tmp/other.patch
      - run: git apply /tmp/*.patch
      - run: git apply --exclude=aaaaaaaaaaaaaaaaaaaaaaaaa /tmp/fix.patch
      - run: git apply --exclude=aaaaaaaaaaaaaaaaaaaaaaaaaa /tmp/fix.patch
      - run: docker build -f docker/Dockerfile . && docker build -f docker/Dockerfile.base .
      - run: git apply /tmp/*/fix.patch && docker build -f /tmp/Dockerfile . && docker build -f docker/Dockerfile docker
"""
UNPROVIDED_IMAGE = """FROM rocm/pytorch:latest
RUN git apply /opt/fix.patch
RUN bash /opt/setup.sh
RUN git apply /tmp/other.patch
RUN git apply /srv/given.patch
RUN git apply /srv/late.patch
COPY patches/late.patch /srv/late.patch
RUN git apply fix.patch && git apply $RUNNER_TEMP/fix.patch && git apply $HOME/fix.patch
"""


def test_a_file_read_from_a_scratch_folder_that_nothing_put_there_is_named_by_the_repository_file_it_may_be(
    make_repo: MakeRepo,
) -> None:
    """CC048 judges patches, scripts and requirements read from /tmp, /var/tmp or $RUNNER_TEMP in a job, and patches
    anywhere outside the context in an image (not what another image puts there, but what this one copies only
    later), once however often the image is built; a name no repository file has, a glob, a path in the workspace
    or home, a Dockerfile, a file only read, or one a step copied, are passed over. A command is shown whole up to
    60 characters and cut to 57 and `...` beyond."""
    root = make_repo(
        {
            ".github/workflows/ci.yml": UNPROVIDED_JOB,
            "docker/Dockerfile": UNPROVIDED_IMAGE,
            "docker/Dockerfile.base": "FROM alpine\nCOPY patches/other.patch /srv/given.patch\n",
            "patches/fix.patch": "x\n",
            "patches/v2/fix.patch": "x\n",
            "patches/other.patch": "x\n",
            "patches/late.patch": "x\n",
            "patches/given.patch": "x\n",
            "scripts/setup.sh": "echo\n",
            "scripts/req.txt": "a\n",
        }
    )
    result = run_cli("check", root, "--select", "CC048")
    job = "no step of job 't' puts a file there"
    image = "no instruction of the image puts a file there"
    fix = "the repository's `patches/fix.patch` (and 1 more) has that name"
    copy, dropped = "copy it there before this command", "was the `COPY` of it dropped?"
    long = "git apply --exclude=aaaaaaaaaaaaaaaaaaaaaaaaa"
    assert result.headers == [
        f".github/workflows/ci.yml:7:24: CC048 `git apply /tmp/fix.patch` applies `/tmp/fix.patch`, but {job}; {fix}: "
        f"{copy}",
        f".github/workflows/ci.yml:9:19: CC048 `bash $RUNNER_TEMP/setup.sh` runs `$RUNNER_TEMP/setup.sh`, but {job}; "
        f"the repository's `scripts/setup.sh` has that name: {copy}",
        f".github/workflows/ci.yml:10:29: CC048 `pip install -r /var/tmp/req.txt` installs from `/var/tmp/req.txt`, "
        f"but {job}; the repository's `scripts/req.txt` has that name: {copy}",
        f".github/workflows/ci.yml:14:60: CC048 `{long} /tmp/fix.patch` applies `/tmp/fix.patch`, but {job}; {fix}: "
        f"{copy}",
        f".github/workflows/ci.yml:15:61: CC048 `{long}a /tmp/fix.p...` applies `/tmp/fix.patch`, but {job}; {fix}: "
        f"{copy}",
        f"docker/Dockerfile:2:15: CC048 `git apply /opt/fix.patch` applies `/opt/fix.patch`, but {image}; {fix}: "
        f"{dropped}",
        f"docker/Dockerfile:4:15: CC048 `git apply /tmp/other.patch` applies `/tmp/other.patch`, but {image}; the "
        f"repository's `patches/other.patch` has that name: {dropped}",
        f"docker/Dockerfile:6:15: CC048 `git apply /srv/late.patch` applies `/srv/late.patch`, but {image}; the "
        f"repository's `patches/late.patch` has that name: {dropped}",
        f"docker/Dockerfile:8:15: CC048 `git apply fix.patch` applies `/fix.patch`, but {image}; {fix}: {dropped}",
    ]
    (root / ".git").rmdir()  # a folder found by its .github alone may be a copy of the workflows only
    assert run_cli("check", root, "--select", "CC048").headers == []


def test_loops_and_case_arms_that_may_move_the_working_directory_or_assign_leave_it_unknown() -> None:
    """A loop's body may run no time, so what it moves or assigns is unknown after it (a `for` variable too); a
    `case` leaves what its arms agree on only when an unquoted `*` arm catches every subject (an `if` only with an
    `else`), and a command in its subject runs in a process of its own."""
    script = (
        "cd /opt; for f in a b; do cd /srv; done; mkdir 1; cd /opt; for f in a; do mkdir $f; done; mkdir $f/2\n"
        "while false; do D=/d; done; mkdir $D/3; for ((i=0;i<2;i++)); do cd /l; done; mkdir 4\n"
        "cd /opt; case $X in a) cd /a;; *) cd /a;; esac; mkdir 5; case $X in a) cd /b;; b) cd /b;; esac; mkdir 6\n"
        'cd /opt; case $X in a) cd /c;; "*") cd /c;; esac; mkdir 7\n'
        "cd /opt; case $(cd /e; mkdir 8) in x) ;; esac; mkdir 9\n"
        "case $X in a) E=/e;; *) E=/e;; esac; mkdir $E/10; case $X in a) G=/g;; *) G=/h;; esac; mkdir $G/11\n"
        "if true; then cd /i; else cd /i; fi; mkdir 12; if true; then cd /j; elif false; then cd /j; fi; mkdir 13\n"
    )
    assert _writes(script) == [
        ("create", None),
        ("create", None),
        ("create", None),
        ("create", None),
        ("create", None),
        ("create", "/a/5"),
        ("create", None),
        ("create", None),
        ("create", "/e/8"),
        ("create", "/opt/9"),
        ("create", "/e/10"),
        ("create", None),
        ("create", "/i/12"),
        ("create", None),
    ]


def test_a_redirection_of_a_group_opens_where_the_group_starts_and_a_negation_runs_its_command() -> None:
    """`{ cd /g; ...; } > x.log` creates x.log where the group starts, before the group runs; `! cd x` moves."""
    script = "! cd /n; mkdir 1; { cd /g; mkdir 2; } > 3.log; mkdir 4; cd /o; ( cd /p ) 2> 5.log; mkdir 6"
    assert _writes(script) == [
        ("create", "/n/1"),
        ("create", "/n/3.log"),
        ("create", "/g/2"),
        ("create", "/g/4"),
        ("create", "/o/5.log"),
        ("create", "/o/6"),
    ]


def test_a_prefix_assignment_is_for_the_command_not_for_its_own_words() -> None:
    """`D=/q bash $D/x.sh` reads the `$D` of the script: the shell expands the words before it assigns D for the
    command, and D is as it was after it."""
    flow = _flow("D=/d; D=/q bash $D/x.sh; D=/q mkdir $D/1; E=/e bash $E/y.sh; bash $D/z.sh")
    assert [str(read.reference.place) for read in flow.reads] == ["/d/x.sh", "/d/z.sh"]
    created = [
        event.effect for event in flow.writes if isinstance(event.effect, Write) and event.effect.kind == "create"
    ]
    assert [str(write.place) for write in created] == ["/d/1"]


def test_declarations_assign_only_names_and_a_function_called_where_the_walk_cannot_see_is_walked_once() -> None:
    """`declare -x E=/e` and `export -n F=/f` assign; `declare X` keeps X, and a word that is no name (`A-B=/x`, an
    array element) assigns nothing; a function only a `trap` calls is walked, in an unknown working directory,
    with the script's variables."""
    script = (
        "f() { mkdir $E/t /t/rel; mkdir rel2; }; trap f EXIT; cd /opt; declare -x E=/e; export -n F=/f\n"
        "X=/x; declare X; declare A-B=/ab; a[1]=/arr; mkdir $E/1 $F/2 $X/3 ${{ env.A-B }}/4 ${{ env.a[1] }}/5\n"
    )
    assert _writes(script) == [
        ("create", "/e/1"),
        ("create", "/f/2"),
        ("create", "/x/3"),
        ("create", None),
        ("create", None),
        ("create", "/e/t"),
        ("create", "/t/rel"),
        ("create", None),
    ]


def test_only_a_steps_github_output_lines_are_its_outputs() -> None:
    """A line written to `$GITHUB_ENV` is an environment variable of the later steps, not an output of the step."""
    flow = _job("""\
      - id: pick
        run: |
          echo "dockerfile=docker/Dockerfile.env" >> "$GITHUB_ENV"
          echo "dockerfile=docker/Dockerfile.out" >> "$GITHUB_OUTPUT"
      - uses: docker/build-push-action@v6
        with: {file: "${{ steps.pick.outputs.dockerfile }}", context: .}
""")
    assert flow.outputs == {"pick": {"dockerfile": ["docker/Dockerfile.out"]}}
    assert [[str(place) for place in build.dockerfiles] for build in flow.builds] == [["docker/Dockerfile.out"]]


def test_a_write_to_an_unknown_place_may_change_the_image_but_not_the_context_nor_another_stage() -> None:
    """`RUN cp x $DEST` may have put anything anywhere in the stage's file system, but a build's context and the
    file system of another stage are only read; a caller that ignores "unplaced" writes sees what was there."""
    text = (
        "FROM ubuntu:24.04 AS build\nCOPY tools/run.sh /opt/run.sh\nFROM ubuntu:24.04\n"
        "COPY tools/run.sh /srv/run.sh\nRUN cp /etc/x $DEST\n"
    )
    built = image(dockerfile.parse(source.decode("Dockerfile", text.encode())), "Dockerfile", "", lambda path: False)
    flow = built.stages[1].flow
    places = [Place(CONTEXT, "tools/run.sh"), Place(STAGE + "build", "opt/run.sh"), Place(ROOT, "srv/run.sh")]
    assert [(origin.kind, origin.repository_path) for origin in (flow.origin(p, flow.end) for p in places)] == [
        ("checkout", "tools/run.sh"),
        ("copy", "tools/run.sh"),
        ("copy", None),
    ]
    kept = flow.origin(Place(ROOT, "srv/run.sh"), flow.end, frozenset({"unplaced"}))
    assert (kept.kind, kept.repository_path) == ("copy", "tools/run.sh")


def test_conditions_run_where_their_statement_starts_and_a_for_variable_is_unknown_after_its_loop() -> None:
    """An `if` or `while` condition writes what it writes (a loop's body runs after it, with its variable unknown:
    it is not the script's); each stage of a pipeline moves only itself; a branch that
    pushes leaves the stack unknown; after `for f in ...` the script's earlier `f` is gone."""
    script = (
        "cd /opt; if mkdir /c/1; then :; fi; until mkdir /c/2; do sleep 1; done; cd /p | cat; mkdir 3\n"
        "f=/f; for f in a; do :; done; mkdir $f/4; cd /s; if x; then pushd /a; fi; popd; mkdir 5\n"
        "f=/f; for f in a; do mkdir $f/6; done; cd /opt; while cd /w; do mkdir 7; done\n"
    )
    assert _writes(script) == [
        ("create", "/c/1"),
        ("create", "/c/2"),
        ("create", "/opt/3"),
        ("create", None),
        ("create", None),
        ("create", None),
        ("create", "/w/7"),
    ]


def test_a_function_runs_at_each_call_but_not_inside_itself_and_may_stand_for_a_quiet_command() -> None:
    """Each call of a function walks its body once more; a call inside its own body is not followed; a function
    named like a command that does nothing to files (`echo`) runs its body."""
    reads = _flow("g() { bash g.sh; g; }\ng\nf() { bash f.sh; }\nf; f; f\necho() { bash e.sh; }\necho hi\n").reads
    assert [str(read.reference.place) for read in reads] == ["g.sh", "f.sh", "f.sh", "f.sh", "e.sh"]


def test_cd_reads_only_a_folder_it_can_name() -> None:
    """`cd /` and `cd /srv/*` name no folder a rule could find missing; `cd x` names x."""
    assert [str(read.reference.place) for read in _flow("cd /; cd /srv/*; cd /opt; cd x").reads] == ["/opt", "/opt/x"]


def test_a_here_document_fed_to_a_shell_is_found_after_its_command_and_options_are_read_as_bash_reads_them() -> None:
    """The same text written earlier to a file is not the fed script; `/bin/bash`, `+x` and long options such as
    `--norc` still read standard input, as after the value of an option (`-eo pipefail`, `--rcfile x`); `bash -c`
    runs its argument, not the here-document."""
    script = (
        "cat > a.sh <<'EOF'\ngit apply /tmp/a.patch\nEOF\n/bin/bash +x --norc <<'EOF'\ngit apply /tmp/a.patch\nEOF\n"
    )
    other = "bash -c 'cd /y' <<EOF\ngit apply /tmp/c.patch\nEOF\nbash -eo pipefail <<EOF\ngit apply /tmp/o.patch\nEOF\n"
    bundled = "sh --rcfile x +O extglob <<EOF\ngit apply r.patch\nEOF\nbash -eO extglob <<EOF\ngit apply O.patch\nEOF\n"
    first, *others = _flow(script + other + bundled).reads
    assert (str(first.reference.place), first.reference.span.column) == ("/tmp/a.patch", script.rindex("/tmp/") + 1)
    assert [str(read.reference.place) for read in others] == ["/y", "/tmp/o.patch", "r.patch", "O.patch"]


def test_a_value_holding_a_commands_output_is_unknown() -> None:
    """`D=/opt/$(uname -m)` or with backquotes: a write below `$D` may be anywhere, not only in /opt."""
    assert _writes('D=/opt/$(uname -m); mkdir -p $D/x; E="/opt/`uname`"; mkdir -p $E/y') == [
        ("create", None),
        ("create", None),
    ]


def test_a_read_resolves_to_the_repository_path_of_the_place_itself_and_never_above_the_workspace() -> None:
    """A copy of the whole workspace holds the repository's root; a place above the workspace is no part of a
    checkout of it; a copy into the copied file's own folder resolves through what was there before; a build
    context's own folder is the repository folder."""
    flow = Flow()
    flow.note(Write("checkout", W, this_repository=True), Span.point("x"), None, None)
    Walker(flow, None).script(parse_fragment("cp -r $GITHUB_WORKSPACE /opt/ws; cp build/a.sh build"), Scope(W))
    assert flow.origin(Place(ROOT, "opt/ws"), flow.end).repository_path == ""
    assert flow.origin(Place(WORKSPACE, "../x.sh"), flow.end).write is None
    assert flow.origin(Place(WORKSPACE, "build"), flow.end).repository_path == "build/a.sh"
    text = "FROM ubuntu:24.04\nCOPY . /src\n"
    built = image(dockerfile.parse(source.decode("Dockerfile", text.encode())), "docker/Dockerfile", "docker", bool)
    stage = built.stages[0].flow
    assert [stage.origin(place, stage.end).repository_path for place in (Place(CONTEXT), Place(ROOT, "src"))] == [
        "docker",
        "docker",
    ]


def test_a_stage_is_named_after_its_options_inherits_its_parents_directory_and_variables_and_an_arg_is_unknown() -> (
    None
):
    """`FROM --platform=... image as Name` names the stage (a `--from=` matches it in any case, or by index); a
    stage `FROM` another starts in its working directory with its variables, where one an `ENV` and an `ARG` set
    to different values is unknown; `ENV` takes quoted values and the old `NAME value` form; a `WORKDIR` that
    cannot be read creates nothing known; an SSH git URL, an index past the stages or a stage that is none names no
    source."""
    text = (
        'FROM --platform=linux/amd64 ubuntu:24.04 as Base\nWORKDIR /opt/w\nENV P="/opt/p q" V=/e\nARG V=/v\n'
        "FROM base\nRUN bash run.sh && bash $P/a.sh && bash $V/b.sh\nENV S /opt/s t\nWORKDIR $V\nRUN mkdir c\n"
        "COPY --from=BASE /opt/w /z\nCOPY --from=7 /x /n\nCOPY git@github.com:o/r.git /g\nRUN bash $S/d.sh\nFROM\n"
    )
    built = image(dockerfile.parse(source.decode("Dockerfile", text.encode())), "Dockerfile", "", lambda path: False)
    assert [(stage.name, stage.image) for stage in built.stages] == [
        ("Base", "ubuntu:24.04"),
        (None, "base"),
        (None, ""),
    ]
    flow = built.stages[1].flow
    assert [str(read.reference.place) for read in flow.reads] == ["/opt/w/run.sh", "/opt/p q/a.sh", "/opt/s t/d.sh"]
    assert [
        (event.span.line, event.effect.kind, str(event.effect.place))
        for event in flow.writes
        if isinstance(event.effect, Write) and event.effect.kind in ("create", "copy")
    ] == [(9, "create", "None"), (10, "copy", "/z"), (11, "copy", "/n"), (12, "copy", "/g")]
    assert [str(found.place) for found in built.sources] == ["stage:BASE/opt/w", "None", "None"]
    assert flow.origin(Place(STAGE + "base", "opt/w/x.sh"), flow.end).kind == "create"
    assert flow.origin(Place(STAGE + "nope", "x.sh"), flow.end).write is None


def _dangling(root: Path) -> list[str]:
    return run_cli("check", root, "--select", "CC041", "--backends", "none", "--output-format", "concise").headers


def test_a_local_action_or_file_that_leaves_the_checkout_is_named_and_not_followed_and_a_glob_is_not_judged(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """`./../x` leaves the repository only once it is checked out at the workspace root; before, nothing is known."""
    checked_out = (
        "      - uses: actions/checkout@v4\n      - uses: ./../elsewhere\n      - uses: ./link-out\n"
        "      - run: bash link-out/x.sh\n      - run: git apply patches/*.patch\n"
    )
    jobs = f"  a:\n    runs-on: ubuntu-latest\n    steps:\n{checked_out}"
    jobs += "  b:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./../elsewhere\n"
    root = make_repo({".github/workflows/ci.yml": f"on: push\njobs:\n{jobs}", "patches/README": ""})
    (tmp_path / "outside").mkdir()
    (root / "link-out").symlink_to(tmp_path / "outside")
    assert _dangling(root) == [
        ".github/workflows/ci.yml:7:15: CC041 `uses: ./../elsewhere` leads outside the repository; it is not followed "
        "[dangling-reference]",
        ".github/workflows/ci.yml:8:15: CC041 `uses: ./link-out` leads outside the repository; it is not followed "
        "[dangling-reference]",
        ".github/workflows/ci.yml:9:19: CC041 `bash link-out/x.sh` runs `link-out/x.sh`, a symbolic link leading "
        "outside the repository; it is not followed [dangling-reference]",
    ]


def test_a_path_inside_a_git_submodule_is_not_judged_however_gitmodules_writes_it(
    make_repo: MakeRepo,
) -> None:
    """A submodule's files are not in this repository's tree: `path = x/` and a folder ending in `X` are its."""
    gitmodules = (
        '[submodule "cutlass"]\n\tpath = third_party/cutlass/\n\turl = https://github.com/NVIDIA/cutlass\n'
        '[submodule "jax"]\n  path=third_party/JAX\n\turl = https://github.com/jax-ml/jax\n'
    )
    steps = (
        "      - uses: actions/checkout@v4\n        with: {submodules: true}\n"
        "      - run: bash third_party/cutlass/build.sh && git apply third_party/JAX/fix.patch\n"
        "      - uses: ./third_party/JAX/action\n      - run: bash third_party/missing/x.sh\n"
    )
    workflow = f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"
    root = make_repo({".github/workflows/ci.yml": workflow, ".gitmodules": gitmodules})
    assert _dangling(root) == [
        ".github/workflows/ci.yml:10:19: CC041 `bash third_party/missing/x.sh` runs `third_party/missing/x.sh`, which "
        "does not exist in the repository [dangling-reference]"
    ]


def test_build_push_file_is_judged_in_the_checkout_given_a_context_else_at_the_commit_unless_a_glob_or_elsewhere(
    make_repo: MakeRepo,
) -> None:
    """With no `context:`, docker/build-push-action builds the repository at the commit: no checkout needed."""
    build = "      - uses: docker/build-push-action@v6\n        with: {context: docker, file: docker/Dockerfile.gone}\n"
    jobs = f"  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n{build}"
    jobs += f"  no-checkout:\n    runs-on: ubuntu-latest\n    steps:\n{build}"
    jobs += "  git-context:\n    runs-on: ubuntu-latest\n    steps:\n"
    for file in ("docker/Dockerfile.gone", "docker/*.Dockerfile", "/opt/Dockerfile"):
        jobs += f"      - uses: docker/build-push-action@v6\n        with: {{file: {file}}}\n"
    root = make_repo({".github/workflows/ci.yml": f"on: push\njobs:\n{jobs}"})
    assert _dangling(root) == [
        f".github/workflows/ci.yml:{line}: CC041 `file:` of docker/build-push-action names `docker/Dockerfile.gone`, "
        "which does not exist in the repository [dangling-reference]"
        for line in ("8:39", "18:22")
    ]


def test_a_composite_actions_own_uses_and_its_action_path_files_are_judged_unless_it_made_them(
    make_repo: MakeRepo,
) -> None:
    steps = (
        "    - uses: $/.github/actions/nothere\n"
        "    - run: bash scripts/of-the-workspace.sh\n      shell: bash\n"
        "    - run: bash $GITHUB_ACTION_PATH/../../../../up.sh\n      shell: bash\n"
        "    - run: mkdir -p $GITHUB_ACTION_PATH/made && bash $GITHUB_ACTION_PATH/made/x.sh\n      shell: bash\n"
        "    - run: bash $GITHUB_ACTION_PATH/missing.sh\n      shell: bash\n"
    )
    root = make_repo({".github/actions/a/action.yml": f"name: a\nruns:\n  using: composite\n  steps:\n{steps}"})
    assert _dangling(root) == [
        ".github/actions/a/action.yml:5:13: CC041 `uses: $/.github/actions/nothere` names a folder that does not "
        "exist [dangling-reference]",
        ".github/actions/a/action.yml:8:17: CC041 `bash $GITHUB_ACTION_PATH/../../../../up.sh` names "
        "`$GITHUB_ACTION_PATH/../../../../up.sh`, outside the repository; ci-checks does not read it "
        "[dangling-reference]",
        ".github/actions/a/action.yml:12:17: CC041 `bash $GITHUB_ACTION_PATH/missing.sh` runs "
        "`.github/actions/a/missing.sh`, which does not exist in the repository [dangling-reference]",
    ]


def test_a_copy_source_named_twice_is_reported_at_each_copy_and_none_in_a_context_not_known(
    make_repo: MakeRepo,
) -> None:
    job = "  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: {}\n"
    root = make_repo(
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n" + job.format("docker build -f docker/Dockerfile docker"),
            "docker/Dockerfile": "FROM ubuntu:24.04\nCOPY a.txt /a\nCOPY a.txt /b\n",
            "docker/Dockerfile.other": "FROM ubuntu:24.04\nCOPY a.txt /a\n",
            ".github/workflows/other.yml": "on: push\njobs:\n"
            + job.format('docker build -f docker/Dockerfile.other "$CONTEXT"'),
        }
    )
    assert _dangling(root) == [
        f"docker/Dockerfile:{line}:6: CC041 `COPY` source `a.txt` does not exist in the build context (`docker`) "
        "[dangling-reference]"
        for line in (2, 3)
    ]


def test_only_a_git_command_that_puts_a_ref_in_the_tree_settles_a_fetch_before_an_install(
    make_repo: MakeRepo,
) -> None:
    """`git stash` changes the tree but checks no ref out: the fetch is still pending at the install. `git pull`
    merges what it fetches itself (and FETCH_HEAD is then its own): the install after it is of that tree. A git
    command whose tree is not known (`--git-dir`) is passed over, and the commands after it are followed."""
    scripts = {
        "stashed": 'git fetch origin "$PR"\ngit stash\npip install -e .\ngit checkout FETCH_HEAD\n',
        "pulled": 'git fetch origin "$PR"\ngit pull\npip install -e .\ngit checkout FETCH_HEAD\n',
        "mirror": 'git --git-dir=/srv/mirror.git fetch origin\ngit fetch origin "$PR"\npip install -e .\n'
        "git checkout FETCH_HEAD\n",
    }
    jobs = "".join(
        f"  {name}:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: |\n"
        + "".join(f"          {line}\n" for line in script.splitlines())
        for name, script in scripts.items()
    )
    root = make_repo({".github/workflows/ci.yml": f"on: push\njobs:\n{jobs}"})
    result = run_cli("check", root, "--select", "CC047", "--backends", "none", "--output-format", "concise")
    stale = "it installs the tree as it was before the fetch; check the fetched ref out first [stale-install]"
    assert result.headers == [
        ".github/workflows/ci.yml:10:26: CC047 `pip install -e .` installs the tree in the workspace after "
        f"`git fetch origin $PR` and before `git checkout FETCH_HEAD`: {stale}",
        ".github/workflows/ci.yml:28:26: CC047 `pip install -e .` installs the tree in the workspace after "
        f"`git fetch origin $PR` and before `git checkout FETCH_HEAD`: {stale}",
    ]


def test_a_glob_or_outside_copy_source_is_skipped_a_missing_one_offered_a_close_name_and_dot_is_the_context(
    make_repo: MakeRepo,
) -> None:
    """A missing source is offered a file of a close name in its own folder of the context. `COPY .` names the
    context itself: there in the repository root or a folder that exists, missing from a folder that does not."""
    steps = "".join(
        f"      - run: docker build -f docker/{name} {context}\n"
        for name, context in (("Dockerfile", "docker"), ("Dockerfile.nowhere", "nothere"))
    )
    job = f"  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n{steps}"
    root = make_repo(
        {
            ".github/workflows/ci.yml": f"on: push\njobs:\n{job}",
            "docker/Dockerfile": "FROM ubuntu:24.04\nCOPY *.whl /w/\nCOPY ../outside.txt /o\nCOPY . /src\n"
            "COPY gone.txt /g\nCOPY requirments.txt /r\n",
            "docker/requirements.txt": "",
            "docker/Dockerfile.nowhere": "FROM ubuntu:24.04\nCOPY . /src\n",
            "Dockerfile": "FROM ubuntu:24.04\nCOPY . /src\n",  # built by no job: from the root or its folder
        }
    )
    assert _dangling(root) == [
        ".github/workflows/ci.yml:8:56: CC041 `docker build -f docker/Dockerfile.nowhere nothere` builds from "
        "`nothere`, which does not exist in the repository [dangling-reference]",
        "docker/Dockerfile:5:6: CC041 `COPY` source `gone.txt` does not exist in the build context (`docker`) "
        "[dangling-reference]",
        "docker/Dockerfile:6:6: CC041 `COPY` source `requirments.txt` does not exist in the build context "
        "(`docker`) (did you mean `docker/requirements.txt`?) [dangling-reference]",
        "docker/Dockerfile.nowhere:2:6: CC041 `COPY` source `.` does not exist in the build context (`nothere`) "
        "[dangling-reference]",
    ]


def test_a_symbolic_link_leading_outside_is_a_warning_not_an_error(make_repo: MakeRepo, tmp_path: Path) -> None:
    steps = "      - uses: actions/checkout@v4\n      - run: bash link-out/x.sh\n"
    root = make_repo(
        {".github/workflows/ci.yml": f"on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"}
    )
    (tmp_path / "outside").mkdir()
    (root / "link-out").symlink_to(tmp_path / "outside")
    result = run_cli("check", root, "--select", "CC041", "--backends", "none", "--output-format", "json")
    assert [(found["code"], found["severity"]) for found in json.loads(result.out)["diagnostics"]] == [
        ("CC041", "warning")
    ]


def test_commands_are_shown_on_one_line_and_cut_after_60_characters_and_an_unknown_action_hides_no_file(
    make_repo: MakeRepo,
) -> None:
    """An action ci-checks does not know is taken to write the paths it is given (its `with:` values), so a
    script it is not given is still the repository's; its `file:` input is the action's own, not judged here."""
    sixty, sixty_one = "bash scripts/" + "a" * 44 + ".sh", "bash scripts/" + "b" * 45 + ".sh"
    steps = (
        "      - uses: actions/checkout@v4\n      - uses: some/action@v1\n        with: {file: nothere.txt}\n"
        f"      - run: {sixty}\n      - run: {sixty_one}\n"
        "      - run: |\n          bash \\\n            scripts/gone.sh\n"
    )
    root = make_repo(
        {".github/workflows/ci.yml": f"on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"}
    )
    assert _dangling(root) == [
        f".github/workflows/ci.yml:9:19: CC041 `{sixty}` runs `{sixty[5:]}`, which does not exist in the repository "
        "[dangling-reference]",
        f".github/workflows/ci.yml:10:19: CC041 `{sixty_one[:57]}...` runs `{sixty_one[5:]}`, which does not exist "
        "in the repository [dangling-reference]",
        ".github/workflows/ci.yml:13:13: CC041 `bash scripts/gone.sh` runs `scripts/gone.sh`, which does not exist "
        "in the repository [dangling-reference]",
    ]


def test_every_job_is_judged_after_a_reusable_workflow_call_but_not_a_submodules_files_nor_a_folder_entered(
    make_repo: MakeRepo,
) -> None:
    """A submodule's files are not in this repository's tree; the rule judges files read, not a folder `cd` enters."""
    jobs = (
        "  call:\n    uses: $/.github/workflows/gone.yml\n"
        "  b:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: bash scripts/gone.sh\n      - run: bash third_party/sub/build.sh\n      - run: cd nothere\n"
    )
    root = make_repo(
        {
            ".github/workflows/ci.yml": f"on: push\njobs:\n{jobs}",
            ".gitmodules": '[submodule "sub"]\n\tpath = third_party/sub\n\turl = https://example.com/sub.git\n',
        }
    )
    assert _dangling(root) == [
        ".github/workflows/ci.yml:4:11: CC041 `uses: $/.github/workflows/gone.yml` calls `.github/workflows/gone.yml`, "
        "which does not exist in the repository [dangling-reference]",
        ".github/workflows/ci.yml:9:19: CC041 `bash scripts/gone.sh` runs `scripts/gone.sh`, which does not exist in "
        "the repository [dangling-reference]",
    ]


def _arms(script: str) -> tuple[dict[str, tuple[tuple[int, int], ...]], dict[int, int]]:
    """The arms each `touch NAME` of a script lies in, by NAME, and the ways through each construct."""
    flow = _flow(script)
    arms = {
        effect.place.path: event.arms
        for event in flow.events
        if isinstance(effect := event.effect, Write) and effect.place is not None
    }
    return arms, flow.ways


def test_each_write_names_the_arms_of_the_branches_it_lies_in_and_each_construct_its_ways() -> None:
    """`elif` is an `if` in the `else`; a `case` without `*` may take no arm; a loop's body may not run; a function
    takes the arms of its call, and one never seen called lies in an arm of its own."""
    script = (
        "touch a\n"
        "if x; then touch b; elif y; then touch c; else touch d; fi\n"
        "case $m in p) touch e ;; q) touch f ;; esac; case $m in *) touch g ;; esac\n"
        "for i in 1 2; do touch h; done; while z; do touch i; done\n"
        "f() { touch j; }\nif w; then f; fi\n"
        "g() { touch /k; }\n"
    )
    arms, ways = _arms(script)
    assert arms == {
        "a": (),
        "b": ((0, 0),),
        "c": ((0, 1), (1, 0)),
        "d": ((0, 1), (1, 1)),
        "e": ((2, 0),),
        "f": ((2, 1),),
        "g": ((3, 0),),
        "h": ((4, 0),),
        "i": ((5, 0),),
        "j": ((6, 0),),
        "opt/k"[4:]: ((7, 0),),
    }
    assert ways == {0: 2, 1: 2, 2: 3, 3: 1, 4: 2, 5: 2, 6: 2, 7: 2}


def test_a_command_before_and_is_one_arm_with_what_runs_when_it_succeeds_and_one_after_or_may_run() -> None:
    """`a && b && c`: b runs only when a succeeded, c only when b did; after `||`, or after `&&` once a `||` came
    before (`(a || b) && c` runs c after a as well as after b), a command only may run."""
    arms, ways = _arms("touch a && touch b && touch c; touch d || touch e && touch f; touch g && touch h || touch i")
    assert arms == {
        "a": ((0, 0),),
        "b": ((0, 0), (1, 0)),
        "c": ((0, 0), (1, 0)),
        "d": (),
        "e": ((2, 0), (3, 0)),
        "f": ((4, 0),),
        "g": ((5, 0),),
        "h": ((5, 0),),
        "i": ((6, 0),),
    }
    assert set(ways.values()) == {2}


def test_a_script_in_a_commands_arguments_runs_in_a_process_of_its_own_in_the_arms_of_the_command() -> None:
    """`bash -c "..."` is read as bash passes it (`\\"` is `"`) and each of its words spans its own characters;
    its `cd` stays in it, and its commands lie in the arms of the command that runs it."""
    script = 'if a; then bash -lc "cd /opt/x && touch \\"q r\\""; fi; touch s'
    flow = _flow(script)
    writes = [(str(event.effect.place), event.arms) for event in flow.writes if isinstance(event.effect, Write)]
    assert writes == [("/opt/x/q r", ((0, 0), (1, 0))), ("s", ())]
    touch = flow.writes[0].command
    assert touch is not None
    quoted = touch.words[1]
    start = script.index('\\"q r') + 1  # a fragment counts columns from its start; the word starts at its `\`
    assert (quoted.span.column, quoted.span.end_column) == (start + 1, start + len('\\"q r\\"'))


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            "bash -c 'touch /a'; sh -ec 'touch /b'; bash -o pipefail -xc 'touch /c'; sudo -u u bash -c 'touch /d'",
            "/a /b /c /d",
        ),
        ("env A=1 bash -lc 'touch /e'; su -c 'touch /f' builder; su builder --command='touch /g'", "/e /f /g"),
        ("su - builder -c 'touch h'; su builder -c 'touch i'", "None i"),
        ("bash x.sh 'touch /j'; bash -c; bash -- -c 'touch /k'; bash +c 'touch /l'; sh -o c 'touch /m'", ""),
        ("bash -c -- 'touch /n'; bash -c -e 'touch /o'", "/n /o"),
        ("bash -c \"touch /r $(touch /s)\"; bash -c 'touch /t $(touch /u)'", "/s /u /t None"),
        ('docker exec c touch "$(touch /v)" /w', "/v None container:c/w"),
        ('bash -c $\'touch /m\'; bash -c "touch $(echo "/n")"; bash -c "touch \\$\'/o\'"', "/o"),
        ('bash -c \'bash -c "bash -c \\"bash -c \\\\\\"touch /p\\\\\\"\\""\'; bash -c \'touch q\'', "/p q"),
    ],
)
def test_the_scripts_commands_run_from_their_arguments(script: str, expected: str) -> None:
    """A shell's `-c` (alone or among other flags, before or after `--`) makes its first operand the script; `su -c`
    and `--command=` too (`su -` starts in the user's home). Options' values, `+c` and a script file (`--` then
    `-c` is one) are no script; nor is a word holding what this shell's `$( )` prints (walked once, here, as is
    one in a `docker exec` command), or one whose quoting is not read back (`$'...'`, quotes inside `$( )`), though
    a `$'...'` inside one is read."""
    flow = _flow(script)
    shown = [
        str(event.effect.place)
        for event in flow.writes
        if isinstance(event.effect, Write) and event.effect.kind == "create"
    ]
    assert " ".join(shown) == expected


def test_docker_exec_runs_its_command_in_the_file_system_of_the_container_it_names() -> None:
    """Absolute paths there are the container's, the runner's folders name nothing known, it starts in `-w` (else
    the image's unknown WORKDIR); a container whose name cannot be known is one of its own, an expression's value
    one per job; `docker exec` with no command runs nothing."""
    script = (
        "docker exec -w /srv c touch a /b $HOME/h; docker exec c sh -c 'cd /opt/x && touch y $(pwd)/p'\n"
        "touch /opt/x/z\n"
        "docker exec $(docker ps -q) touch /u; docker exec -it --user root ${{ job.container.id }} touch /e\n"
        "docker exec -e X=1 c; docker container exec c touch /f rel; docker exec --workdir=/w c touch g\n"
    )
    c = "container:c"
    assert [event.effect.place for event in _flow(script).writes if isinstance(event.effect, Write)] == [
        Place(c, "srv/a"),
        Place(c, "b"),
        None,
        Place(c, "opt/x/y"),
        Place(c, "opt/x/p"),
        Place(ROOT, "opt/x/z"),
        Place("container:?1", "u"),
        Place("container:${{ job.container.id }}", "e"),
        Place(c, "f"),
        None,
        Place(c, "w/g"),
    ]


def test_an_install_is_stale_on_one_path_through_the_branches_but_not_across_exclusive_arms(
    make_repo: MakeRepo,
) -> None:
    """A checkout in a loop's body or in an arm the install is not in leaves the fetch pending for it; one in an
    arm exclusive to the install's (`elif`, another `case` arm) is not after it on its path; a checkout in both arms
    of an `if` with an `else` is on every path."""
    jobs = {
        "loop": "git fetch origin pr; for i in 1; do git checkout FETCH_HEAD; done; pip install -e .;"
        " git checkout FETCH_HEAD",
        "elif": "git fetch origin pr; if a; then git checkout FETCH_HEAD; elif b; then pip install -e .; else"
        " git checkout FETCH_HEAD; fi",
        "case": "git fetch origin pr; case $M in a) pip install -e . ;; *) git checkout FETCH_HEAD ;; esac",
        "both": "git fetch origin pr; if a; then git checkout FETCH_HEAD; else git reset --hard FETCH_HEAD; fi;"
        " pip install -e .; git checkout FETCH_HEAD",
        "one": "git fetch origin pr; if a; then git checkout FETCH_HEAD; fi; pip install -e .; git checkout FETCH_HEAD",
        "function": "build() { pip install -e .; }; git fetch origin pr; if a; then build; fi; git checkout FETCH_HEAD",
    }
    steps = "".join(
        f"  {name}:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cd /opt/m; {script}\n"
        for name, script in jobs.items()
    )
    root = make_repo({".github/workflows/ci.yml": f"on: push\njobs:\n{steps}"})
    result = run_cli("check", root, "--select", "CC047", "--backends", "none", "--output-format", "concise")
    assert [header.split(": CC047 `")[0] for header in result.headers] == [
        ".github/workflows/ci.yml:6:107",  # loop
        ".github/workflows/ci.yml:22:101",  # one
        ".github/workflows/ci.yml:26:50",  # function
    ]


def test_a_path_context_is_at_most_64_arms_deep() -> None:
    """A chain of a hundred `&&` nests no deeper than 64 arms: past that a command is in the context before it."""
    arms, _ = _arms(" && ".join(f"touch {index}" for index in range(100)))
    assert [len(arms[str(index)]) for index in (0, 62, 63, 64, 99)] == [1, 63, 64, 64, 64]


def test_a_cd_a_groups_redirection_and_a_pipelines_output_lie_in_the_arms_they_are_written_in() -> None:
    flow = _flow('if a; then cd /opt/x; { echo x; } > /tmp/o; echo "a=b" | tee -a "$GITHUB_OUTPUT"; fi')
    assert [read.arms for read in flow.reads] == [((0, 0),)]
    assert [(type(event.effect).__name__, event.arms) for event in flow.events] == [
        ("Write", ((0, 0),)),
        ("Output", ((0, 0),)),
    ]


def test_a_write_to_a_glob_covers_every_place_its_pattern_may_match_and_the_places_inside_them() -> None:
    """A cache restored to `./*` restores each top-level file and folder: `scripts` and what it holds. A place no
    match of the pattern holds is not covered; a folder is there when the pattern may match something inside it."""
    flow = _job("""\
      - uses: actions/cache/restore@v4
        with: {path: "scripts/*.sh", key: k}
      - uses: actions/cache@v4
        with:
          key: k
          path: |
            */build
            ${{ github.workspace }}/third_party/**
      - uses: actions/download-artifact@v4
        with: {path: "./*", pattern: "ws-*", merge-multiple: true}
""")
    restored, builds, everything = flow.starts[1], flow.starts[2], flow.end

    def kind(path: str, before: int, folder: bool = False) -> str | None:
        return flow.origin(Place(WORKSPACE, path), before, folder=folder).kind

    assert [kind("scripts/x.sh", restored), kind("scripts/x.py", restored), kind("tools/x.sh", restored)] == [
        "download",
        None,
        None,
    ]
    assert [kind("scripts", restored), kind("scripts/sub/x.sh", restored), kind("x.sh", restored)] == [
        "download",  # the glob's own folder holds what it matched
        None,
        None,
    ]
    assert [kind("csrc/build/x.o", builds), kind("csrc", builds), kind("csrc", builds, folder=True)] == [
        "download",
        None,
        "download",  # `*/build` may have made `csrc`
    ]
    assert [kind("third_party/a/b/c.h", builds), kind("csrc/x.sh", builds), kind("python/x.py", everything)] == [
        "download",
        None,
        "download",
    ]
    assert kind("python/x.py", everything - 1) is None  # not before the restore
    assert flow.origin(Place(WORKSPACE, "python/x.py"), everything, frozenset({"download"})).write is None


def test_a_later_write_wins_over_a_glob_and_a_glob_write_holds_no_file_of_the_repository() -> None:
    flow = _job("""\
      - uses: actions/cache/restore@v4
        with: {path: "./*", key: k}
      - uses: actions/checkout@v4
      - uses: actions/download-artifact@v4
        with: {path: "build/[ab]*"}
""")
    after_checkout, end = flow.starts[2], flow.end
    checked = flow.origin(Place(WORKSPACE, "scripts/x.sh"), after_checkout)
    assert (checked.kind, checked.repository_path) == ("checkout", "scripts/x.sh")
    restored = flow.origin(Place(WORKSPACE, "build/a.whl"), end)
    assert (restored.kind, restored.repository_path) == ("download", None)
    assert flow.origin(Place(WORKSPACE, "build/c.whl"), end).kind == "checkout"
    glob_read = flow.origin(Place(WORKSPACE, "build/*.whl", glob=True), end)
    assert glob_read.kind == "download"  # which files a glob read shares with the pattern cannot be told


def test_a_glob_the_dialect_refuses_may_have_written_anything_under_its_folder() -> None:
    flow = _flow("cp a.txt ../out/*/\n")
    assert flow.origin(Place(WORKSPACE, "../out/x/a.txt"), flow.end).kind == "copy"


def test_git_init_makes_a_folder_that_a_fetch_and_checkout_fill_as_a_clone_and_a_worktree_is_no_checkout() -> None:
    """`git init DIR && cd DIR && git fetch URL REF && git checkout FETCH_HEAD` puts another repository there; a
    worktree of this repository holds it at another ref (a branch, `HEAD~1`), which may lack or hold any file."""
    flow = _job("""\
      - run: git init vllm && cd vllm && git fetch https://github.com/o/vllm v1 && git checkout FETCH_HEAD
      - uses: actions/checkout@v4
      - run: git worktree add ../base origin/main && git worktree add wt HEAD~1
""")
    entered = flow.reads[0]
    made = flow.origin(entered.reference.place, entered.seq, folder=True)
    filled = flow.origin(Place(WORKSPACE, "vllm/tools/x.sh"), flow.starts[1])
    assert (str(entered.reference.place), made.kind) == ("vllm", "clone")
    assert (filled.kind, filled.repository_path) == ("git", None)
    for path in ("wt/scripts/x.sh", "../base/scripts/x.sh"):
        worktree = flow.origin(Place(WORKSPACE, path), flow.end)
        assert (worktree.kind, worktree.repository_path) == ("clone", None)
    assert flow.origin(Place(WORKSPACE, "scripts/x.sh"), flow.end).repository_path == "scripts/x.sh"


def test_docker_run_reads_each_host_path_it_mounts_at_its_own_characters() -> None:
    """`-v`/`--volume` host parts (`volume`) and `--mount type=bind` sources (`bind-mount`), in each spelling, up
    to the image; a volume's name, another `--mount` type, a podman run or a run without an image mount nothing."""
    script = (
        'docker run --rm -v ./data:/data:ro --volume="$(pwd)/x:/x" -v hf:/root/.cache'
        " --mount type=bind,source=${{ github.workspace }}/m,target=/m,readonly --mount=type=bind,src=./n,dst=/n"
        " --mount type=volume,src=vol,dst=/v --volume /opt/z:/z img -v ./after:/a\n"
        "podman run -v ./p:/p img\ndocker run -v ./noimage:/x\ndocker create -e A=1 -v ./c:/c img\n"
    )
    flow = _flow(script)
    assert [
        (read.reference.kind, str(read.reference.place), script[read.reference.word.start : read.reference.word.end])
        for read in flow.reads
        if read.reference.word is not None
    ] == [
        ("volume", "data", "./data"),
        ("volume", "x", "$(pwd)/x"),
        ("bind-mount", "m", "${{ github.workspace }}/m"),
        ("bind-mount", "n", "./n"),
        ("volume", "/opt/z", "/opt/z"),
        ("volume", "c", "./c"),
    ]
    first = script.splitlines()[0]
    words = parse_fragment(first).statements[0]
    assert isinstance(words, Command)
    mounts = docker_run_mounts(words.words[2:])
    assert [(mount.kind, mount.word.value, mount.read_only) for mount in mounts] == [
        ("volume", "./data", True),
        ("volume", "$(pwd)/x", False),
        ("volume", "hf", False),
        ("bind-mount", "${{ github.workspace }}/m", True),
        ("bind-mount", "./n", False),
        ("volume", "/opt/z", False),
    ]
