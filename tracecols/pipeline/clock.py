"""The seconds each stage of an ingest takes (read, tree, links, parquet, views …), for `timings`."""

import time


class Clock:
    def __init__(self, into: dict | None):
        self.into = into
        self.t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.add(stage, now - self.t)
        self.t = now

    def add(self, stage: str, seconds: float) -> None:
        """Count `seconds` to `stage` (a stage that ran beside the others: its own wall time)."""
        if self.into is not None:
            self.into[stage] = self.into.get(stage, 0.0) + seconds
