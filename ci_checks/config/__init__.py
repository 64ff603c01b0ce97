"""A repository's configuration of ci-checks: reading and validating it (`load`, `schema`), the findings a run
keeps (`selection`: rules, linters' codes and profiles, per-file ignores) and the starter file `ci-checks init`
writes (`starter`)."""
