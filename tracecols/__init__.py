"""tracecols: a columnar analytics engine for PyTorch profiler traces.

    import tracecols as tc
    t = tc.open("trace.json.gz")
    t.sql("select cat, count(*) from events group by 1")   # -> polars DataFrame
    t.table("events")                                      # -> Arrow table
    t.save("out/")                                         # -> Parquet + _tracecols.json
    tc.Lake("lake/").sql("select rank, count(*) from kernels group by 1")  # every rank of a job
"""
from .errors import TraceError
from .fleet.lake import Lake
from .trace import Trace, open
from .version import SCHEMA_VERSION, __version__

__all__ = ["open", "Trace", "Lake", "TraceError", "__version__", "SCHEMA_VERSION"]
