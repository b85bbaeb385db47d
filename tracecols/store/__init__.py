"""Layer 4: Parquet output (atomic), lake layout, DuckDB-file export, trace JSON writers."""
