"""The `ci-checks` command (`main`): options in, one engine run, the formats asked for, an exit code out."""
