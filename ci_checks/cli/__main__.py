"""`python -m ci_checks.cli`: the `ci-checks` command."""

from ci_checks.cli.main import entry

entry()
