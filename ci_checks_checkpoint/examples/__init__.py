"""Project code the harness is proved against, shipped so that a runner needs only the package: the GPU script's
`seed` step gives `rocm_workaround:main` to `--setup`, and its run must fail."""
