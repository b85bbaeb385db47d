-- op_summary: CPU ops grouped by name and module — how often they ran, their host time and the GPU time they caused.
-- Answers: which operators cost the most GPU (or CPU) time over the whole trace.
-- depends: op_gpu_time
-- Columns:
--   trace_id              INTEGER  trace
--   name                  VARCHAR  op name
--   parent_module         VARCHAR  the module the instances ran in (op_gpu_time.parent_module; null: none)
--   count                 BIGINT   number of instances
--   cpu_total_ns          BIGINT   ns, sum of host wall time of the instances
--   cpu_self_ns           BIGINT   ns, sum of self CPU time
--   direct_kernels        BIGINT   device events launched directly by the instances
--   direct_kernel_sum_ns  BIGINT   ns, sum of those events' durations
--   direct_busy_ns        BIGINT   ns, sum over instances of the direct busy time
--   subtree_busy_ns       BIGINT   ns, sum over instances of the subtree busy time (nested ops count in each ancestor)
--   direct_busy_pct       DOUBLE   % (0–100) of the trace's total direct busy time
--   mean_direct_busy_ns   DOUBLE   ns, direct busy time per instance
CREATE OR REPLACE VIEW op_summary AS
SELECT trace_id, name, parent_module, count(*) AS count,
       sum(dur_ns)::BIGINT AS cpu_total_ns, sum(self_ns)::BIGINT AS cpu_self_ns,
       sum(direct_kernels)::BIGINT AS direct_kernels,
       sum(direct_kernel_sum_ns)::BIGINT AS direct_kernel_sum_ns,
       sum(direct_busy_ns)::BIGINT AS direct_busy_ns,
       sum(subtree_busy_ns)::BIGINT AS subtree_busy_ns,
       100.0 * sum(direct_busy_ns) / nullif(sum(sum(direct_busy_ns)) OVER (PARTITION BY trace_id), 0) AS direct_busy_pct,
       avg(direct_busy_ns) AS mean_direct_busy_ns
FROM op_gpu_time
GROUP BY trace_id, name, parent_module
ORDER BY trace_id, direct_busy_ns DESC, name, parent_module;
