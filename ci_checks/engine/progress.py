"""A self-erasing status line on a terminal's standard error while a repository's check lasts more than a moment."""

from __future__ import annotations

import time
from typing import TextIO

from ci_checks.core.escaping import one_line


class Progress:
    DELAY_S = 0.5
    EVERY_S = 0.1

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.shown = 0.0

    def __enter__(self) -> Progress:
        return self

    def say(self, doing: str) -> None:
        now = time.monotonic()
        if self.stream is None or now - self.started < self.DELAY_S or now - self.shown < self.EVERY_S:
            return
        self.shown = now
        self.stream.write(f"\r\x1b[2Kci-checks: {one_line(doing[:100])}")
        self.stream.flush()

    def __exit__(self, *exception: object) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
