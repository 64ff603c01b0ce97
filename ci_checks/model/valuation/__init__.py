"""The values a job runs with: each leg of a job (event, call, matrix combination) and what its expressions,
variables and conditions are there.

Built once per repository (`RepositoryContext.valuation`) and queried by the
rules: `legs` (`Valuation.legs`, `Leg.possible`, `Valuation.runs`) says how
each job runs and what its expressions give; `shell` what a script's
variables hold at each command; `runners` which machine each leg asks for;
`matrix` how GitHub expands a matrix. Nothing is guessed: what cannot be
known is UNKNOWN (an expression) or None (a shell value), and every set of
values is bounded.
"""

from ci_checks.model.valuation.legs import Binding, Entry, Leg, Legs, Valuation

__all__ = ["Binding", "Entry", "Leg", "Legs", "Valuation"]
