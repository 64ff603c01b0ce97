"""The engine: what every front-end calls to check (the command line, the language server, the pytest plugin and
the query API).

- `Options`: what a check is asked to do;
- `Session`: one check of paths and in-memory documents, grouped by repository (kept runs reused, several
  repositories side by side in worker processes, baselines, `--new-since` and fixes), returning an `Outcome`;
- `runs.plan`: what to run from the options and a repository's configuration;
- `live.Workbench`: one repository kept loaded between checks of documents an editor changes.

Importing the engine imports nothing that checks: the rules, the model and the configuration's parser are imported
when a repository is checked and no kept run is reused.
"""

from ci_checks.engine.interrupts import Terminated, unwinding
from ci_checks.engine.options import Options, parse_backends
from ci_checks.engine.outcome import Failure, Outcome, UsageError
from ci_checks.engine.session import Session

__all__ = ["Failure", "Options", "Outcome", "Session", "Terminated", "UsageError", "parse_backends", "unwinding"]
