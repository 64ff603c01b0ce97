"""Modules a project under test would pass to `ci-checks checkpoint --import`: patches of the libraries
that saving goes through, imported in every process that saves before Megatron-Core's strategies."""
