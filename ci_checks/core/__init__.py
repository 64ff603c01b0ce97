"""The bottom layer, which every other one uses: files as read (`source`), positions and findings (`diagnostics`),
the repository's listing, globs, where configuration is read from, the external linters by name, and text and
files ci-checks writes safely. Nothing here knows YAML, shells or rules."""
