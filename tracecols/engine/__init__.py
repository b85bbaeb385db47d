"""Layer 3: one DuckDB connection per Trace/Lake; tables registered zero-copy, sql/*.sql loaded as views."""
