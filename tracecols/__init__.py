"""tracecols: a columnar analytics engine for PyTorch profiler traces.

In a few lines:

    import tracecols as tc
    t = tc.open("trace.json.gz")
    t.sql("select cat, count(*) from events group by 1")   # -> polars DataFrame
    t.table("events")                                      # -> Arrow table
    t.save("out/")                                         # -> Parquet + _tracecols.json
    tc.Lake("lake/").sql("select rank, count(*) from kernels group by 1")  # every rank of a job
"""

from typing import TYPE_CHECKING

from .errors import TraceError
from .version import SCHEMA_VERSION, __version__

__all__ = ["open", "Trace", "Lake", "TraceError", "__version__", "SCHEMA_VERSION"]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the same names, imported on first use
    from .lake import Lake
    from .trace import Trace, open
else:

    def __getattr__(name: str) -> object:
        # imported on first use: `import tracecols` stays light for worker processes and the CLI
        if name in ("open", "Trace"):
            from . import trace

            return getattr(trace, name)
        if name == "Lake":
            from .lake import Lake

            return Lake
        raise AttributeError(f"module 'tracecols' has no attribute {name!r}")
