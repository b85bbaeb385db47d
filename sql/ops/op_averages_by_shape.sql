-- op_averages_by_shape: op_averages per (name, input shapes, input types), like torch's
-- key_averages(group_by_input_shape=True).
-- Answers: which call shapes of an op cost the time.
-- depends: _op_time
-- Same definitions as op_averages (nested calls of one name count each, an only child of its
-- name's parent folds into it and counts under the parent's shapes; % of the trace's
-- total self time). Shapes are `Input Dims` as text (events without them: null), and rows
-- are split by `Input type` too (torch keys by shapes only; two dtypes of one shape are two rows here).
-- Columns (one row per trace, name and shapes, sorted by device total, then CPU total, descending):
--   trace_id               INTEGER  trace
--   name                   VARCHAR  event name
--   cat                    VARCHAR  cpu_op, user_annotation, cuda_runtime or cuda_driver
--   input_shapes           VARCHAR  Input Dims as text, e.g. [[2, 3], [3, 4]] (null: none recorded)
--   input_types            VARCHAR  Input type as JSON text, e.g. ["float","float"] (null: none recorded)
--   calls                  BIGINT   number of events
--   self_cpu_ns            BIGINT   ns, sum of self CPU time
--   cpu_total_ns           BIGINT   ns, sum of wall time
--   cpu_avg_ns             DOUBLE   ns, cpu_total_ns / calls
--   self_device_ns         BIGINT   ns, sum of durations of the device events the events launched
--   device_total_ns        BIGINT   ns, sum of durations of the device events launched in their subtrees
--   device_avg_ns          DOUBLE   ns, device_total_ns / calls
--   self_cpu_pct           DOUBLE   % (0–100) of the trace's total self CPU time
--   cpu_total_pct          DOUBLE   % (can exceed 100), cpu_total_ns / the trace's total self CPU time
--   self_device_pct        DOUBLE   % (0–100) of the trace's total self device time (null without device time)
CREATE OR REPLACE VIEW op_averages_by_shape AS
SELECT trace_id, name, cat, input_shapes, input_types, count(*) FILTER (WHERE NOT folded)::BIGINT AS calls,
       sum(self_ns)::BIGINT AS self_cpu_ns, sum(dur_ns) FILTER (WHERE NOT folded)::BIGINT AS cpu_total_ns,
       sum(dur_ns) FILTER (WHERE NOT folded) / count(*) FILTER (WHERE NOT folded) AS cpu_avg_ns,
       sum(self_device_ns)::BIGINT AS self_device_ns, sum(device_ns) FILTER (WHERE NOT folded)::BIGINT AS device_total_ns,
       sum(device_ns) FILTER (WHERE NOT folded) / count(*) FILTER (WHERE NOT folded) AS device_avg_ns,
       100.0 * sum(self_ns) / nullif(sum(sum(self_ns)) OVER (PARTITION BY trace_id), 0) AS self_cpu_pct,
       100.0 * sum(dur_ns) FILTER (WHERE NOT folded) / nullif(sum(sum(self_ns)) OVER (PARTITION BY trace_id), 0) AS cpu_total_pct,
       100.0 * sum(self_device_ns) / nullif(sum(sum(self_device_ns)) OVER (PARTITION BY trace_id), 0)
           AS self_device_pct
FROM _op_time
GROUP BY trace_id, name, cat, input_shapes, input_types
ORDER BY trace_id, device_total_ns DESC, cpu_total_ns DESC, name, cat, input_shapes, input_types;
