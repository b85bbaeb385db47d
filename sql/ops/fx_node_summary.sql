-- fx_node_summary: host and device time per FX node of each compiled graph file.
-- Answers: which FX nodes of a torch.compile'd graph cost the most GPU time?
-- depends: fx_marks, slices, kernels
-- One row per (trace, fx_file, fx_node) that has events inside it (fx_file or fx_node may be
-- null: a node marker outside any file marker, or ops in a file marker outside any node marker).
-- Columns:
--   trace_id        INTEGER
--   fx_file         VARCHAR  compiled graph file (from `## path.py ##`)
--   fx_node         BIGINT   FX node number (from `## N ##`)
--   cpu_ops         BIGINT   cpu_op slices inside
--   cpu_op_self_ns  BIGINT   ns, sum of those ops' self time
--   kernels         BIGINT   device events launched from inside
--   kernel_sum_ns   BIGINT   ns, sum of their durations
--   first_ts_ns     BIGINT   ns, earliest start of a slice inside
CREATE OR REPLACE VIEW fx_node_summary AS
WITH s AS (
    SELECT m.trace_id, m.fx_file, m.fx_node,
           count(*) FILTER (WHERE sl.cat = 'cpu_op') AS cpu_ops,
           coalesce(sum(sl.self_ns) FILTER (WHERE sl.cat = 'cpu_op'), 0)::BIGINT AS cpu_op_self_ns,
           min(sl.ts_ns) AS first_ts_ns
    FROM fx_marks m JOIN slices sl ON sl.trace_id = m.trace_id AND sl.uid = m.uid
    WHERE m.kind = 'slice'
    GROUP BY ALL
),
k AS (
    SELECT m.trace_id, m.fx_file, m.fx_node, count(*) AS kernels, sum(k.dur_ns)::BIGINT AS kernel_sum_ns
    FROM fx_marks m JOIN kernels k ON k.trace_id = m.trace_id AND k.uid = m.uid
    WHERE m.kind = 'kernel'
    GROUP BY ALL
)
SELECT s.trace_id, s.fx_file, s.fx_node, s.cpu_ops, s.cpu_op_self_ns,
       coalesce(k.kernels, 0) AS kernels, coalesce(k.kernel_sum_ns, 0)::BIGINT AS kernel_sum_ns, s.first_ts_ns
FROM s LEFT JOIN k ON k.trace_id = s.trace_id AND k.fx_file IS NOT DISTINCT FROM s.fx_file
                   AND k.fx_node IS NOT DISTINCT FROM s.fx_node
ORDER BY kernel_sum_ns DESC, s.trace_id, s.fx_file, s.fx_node;
