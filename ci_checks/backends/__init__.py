"""The external linters (actionlint, shellcheck, zizmor) run as backends: found, run under a timeout and cached,
their findings placed on ci-checks' spans, given its codes and merged with its own where both report one fact."""
