"""What a job does to its files: one model of workspaces, working directories and Docker build contexts.

Rules that ask "is this file there when this command reads it?" share this
model instead of guessing each on its own. It is built once per repository
(`repository.RepositoryFiles`, reached through
`RepositoryContext.files`) from layers that each know one thing:

- `places`: a place on a runner's or an image's file system, and how a
  shell word names one (variables, the working directory, the workspace);
- `ci_checks.model.references`: what a command reads (`bash x.sh`,
  `git apply p.patch`, `pip install -e .`, `docker build -f F C`);
- `effects`: what a command writes (`git clone`, `curl -o`, `mkdir`, `cp`,
  `tar -x`, redirections) and what it does to a git tree (`git fetch`,
  `checkout`, `reset`);
- `flow`: a job's, action's or Dockerfile stage's reads and writes in order,
  following `cd`, subshells, branches and functions, and answering what put
  a place there before a given command (`Flow.origin`);
- `jobs`: the flow of a job's steps (checkouts, downloads, caches, image
  builds, other actions);
- `docker`: a Dockerfile's stages built from a context (`COPY`/`ADD`,
  `WORKDIR`, `RUN`);
- `python`: the paths a Python file names by expressions that evaluate to a
  literal path or to a glob anchored in a real folder.

`docs/model.md` draws how they fit together.
"""
