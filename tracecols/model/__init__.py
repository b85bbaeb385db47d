"""Layer 2: pure Arrow/polars transforms that add structure to the raw events. No SQL, no I/O."""
