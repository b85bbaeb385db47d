"""The exception kinds tracecols raises; the CLI turns each into one stderr line and exit code 2."""

from __future__ import annotations

import os
from typing import Any


class TraceError(Exception):
    """Base of every error tracecols reports to a user."""

    kind: str = "error"

    def __init__(self, path: str | os.PathLike[str], message: object, offset: int | None = None) -> None:
        self.path = str(path)
        self.offset = offset
        self.message = " ".join(str(message).split())
        super().__init__(self.line())

    # a worker process hands its error back to the driver pickled
    def __reduce__(self) -> tuple[type[TraceError], tuple[Any, ...]]:
        return (type(self), (self.path, self.message, self.offset))

    def line(self) -> str:
        """`PATH: KIND: MESSAGE`, the one line the CLI prints."""
        where = self.path if self.offset is None else f"{self.path} (near byte {self.offset})"
        return f"{where}: {self.kind}: {self.message}"


class NotATrace(TraceError):
    """The file is valid data of another kind (rocprof, Execution Trace, …)."""

    kind = "not a PyTorch profiler trace"


class Empty(TraceError):
    """A well-formed trace with no events in it: nothing to analyse."""

    kind = "empty trace"


class Malformed(TraceError):
    """The file looked like a trace but its bytes are not valid JSON / gzip."""

    kind = "malformed trace"


class Unsupported(TraceError):
    """Valid input that tracecols does not handle."""

    kind = "unsupported"


class SourceIOError(TraceError):
    """The input could not be opened or read."""

    kind = "cannot read"


class OutputError(TraceError):
    """An output cannot be written where it was asked for (a file where a directory is
    wanted, no permission, one of the command's own inputs)."""

    kind = "cannot write"


class QueryError(TraceError):
    """A SQL query failed."""

    kind = "query failed"
