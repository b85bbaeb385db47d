"""Layer 5: many traces — discovery, rank detection, parallel ingest, the Parquet lake."""
