__version__ = "0.1.0"
# Bumped whenever a table or column of the public data model changes: 2 kernels.dur_raw_ns,
# kernels.clipped; 3 critical_path_edges; 4 slices.stack_id, slices.annotation_uid; 5 traces.run,
# traces.run_seq, a lake's step_stats table.
SCHEMA_VERSION = 5
