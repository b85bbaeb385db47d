-- _tracelens_thread_names: helper — the names TraceLens gives an op row's host process and thread.
-- Answers: what the process_name, process_label and thread_name columns of
-- tracelens_ops_unique_args and tracelens_unified_perf_summary say, written once for both.
-- depends: events
-- Names come from the metadata events process_name (args.name), process_labels (args.labels)
-- and thread_name (args.name); where one is written twice for a process or thread the later
-- one (in file order) wins. Join process names on (trace_id, pid), thread names on
-- (trace_id, pid, tid).
-- Columns (one row per (trace, pid, tid, metadata name)):
--   trace_id  INTEGER  trace
--   pid, tid  BIGINT   host process and thread of the metadata event
--   name      VARCHAR  process_name, process_labels or thread_name
--   v         VARCHAR  the name or label it gives
CREATE OR REPLACE VIEW _tracelens_thread_names AS
SELECT trace_id, pid, tid, name, arg_max(json_extract_string(args, '$.' || key), uid) AS v
FROM (SELECT *, CASE name WHEN 'process_labels' THEN 'labels' ELSE 'name' END AS key FROM events
      WHERE ph = 'M' AND name IN ('process_name', 'process_labels', 'thread_name'))
GROUP BY ALL;
