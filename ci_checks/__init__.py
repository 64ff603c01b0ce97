"""ci-checks: structural checks for GitHub Actions workflows and their shell scripts."""

__version__ = "0.1.0"
