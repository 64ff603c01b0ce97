"""Which lines of a file changed: Myers' O(ND) difference of two lists of lines, with a bound on its work.

The lines both versions share at their start and end are set aside first, as
git does; what remains is compared by Myers' greedy algorithm (E. Myers, "An
O(ND) Difference Algorithm and Its Variations", 1986), whose time grows with
the size of the difference, not with the square of the file: a file of 2,000
identical comment lines with one line changed is compared in a few
milliseconds. Bounds keep a pull request from making it slow: at most
`MAX_EDITS` lines added or removed, at most `MAX_STEPS` steps of the search
for one file, and, across the files of one run, what is left of a `Budget`.
Past any of them, every line between the first and the last difference counts
as changed, which reports more, never less.
"""

from __future__ import annotations

from array import array

MAX_EDITS = 2000
"""The most lines added plus removed that are told apart one by one."""
MAX_STEPS = 1_000_000
"""The most steps (diagonals tried and lines compared) one comparison may take."""
RUN_STEPS = 4_000_000
"""The most steps the comparisons of one run may take together."""


class Budget:
    """The steps left to the comparisons of one run."""

    def __init__(self, steps: int = RUN_STEPS) -> None:
        self.steps = steps


def changed_lines(before: str, after: str, budget: Budget | None = None) -> set[int]:
    """The 1-based lines of `after` that differ from `before`; a removed line counts as a change of the line that
    now stands where it was. The comparison takes its steps from `budget`, when one is given."""
    old, new = before.splitlines(), after.splitlines()
    start = 0
    while start < len(old) and start < len(new) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    if start == end_old and start == end_new:
        return set()
    interned: dict[str, int] = {}
    a = [interned.setdefault(line, len(interned)) for line in old[start:end_old]]
    b = [interned.setdefault(line, len(interned)) for line in new[start:end_new]]
    budget = budget or Budget()
    places = _edited_places(a, b, budget)
    if places is None:
        return set(range(start + 1, max(end_new, start + 1) + 1))
    return {start + place + 1 for place in places}


def _edited_places(a: list[int], b: list[int], budget: Budget) -> list[int] | None:
    """Where the shortest edit script from `a` to `b` inserts a line or deletes one, as indexes into `b`
    (the line inserted, or the one that stands where the deleted line stood); None past the bounds."""
    most = min(MAX_STEPS, budget.steps)
    n, m = len(a), len(b)
    limit = min(n + m, MAX_EDITS)
    offset = limit + 1
    frontier = array("l", [0]) * (2 * limit + 3)
    trace: list[array[int]] = []
    steps = 0
    for d in range(limit + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and frontier[offset + k - 1] < frontier[offset + k + 1]):
                x = frontier[offset + k + 1]
            else:
                x = frontier[offset + k - 1] + 1
            y = x - k
            snake = x
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            steps += 1 + x - snake
            frontier[offset + k] = x
            if x >= n and y >= m:
                budget.steps -= steps
                trace.append(frontier[offset - d : offset + d + 1])
                return _backtrack(trace, n, m)
        trace.append(frontier[offset - d : offset + d + 1])
        if steps > most:
            break
    budget.steps -= steps
    return None


def _backtrack(trace: list[array[int]], n: int, m: int) -> list[int]:
    """The places of the edits on the path the search found, from the frontier it kept after each round (round
    d holds diagonals k = -d .. d at index k + d)."""
    places: list[int] = []
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        previous = trace[d - 1]
        k = x - y
        down = k == -d or (k != d and previous[k - 1 + d - 1] < previous[k + 1 + d - 1])
        previous_k = k + 1 if down else k - 1
        previous_x = previous[previous_k + d - 1]
        previous_y = previous_x - previous_k
        while x > previous_x and y > previous_y:
            x -= 1
            y -= 1
        places.append(y - 1 if down else y)
        x, y = previous_x, previous_y
    return places
