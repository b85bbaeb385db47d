-- top_op_names: top_ops added up by op name over modules and traces: the GPU busy time each op owns.
-- Answers: over all traces together (every rank of a lake), which ops own the devices' busy time,
-- whatever module they ran in?
-- depends: top_ops, gpu_time_totals
-- One row per name of top_ops (its `(no op)` row included: the busy time no op accounts for);
-- the shares are of the busy time of all traces together (gpu_time_totals.busy_ns) and add up to
-- 100 % unless ops overlap in time on different streams.
-- Columns (by GPU time, descending, then name; `(no op)` last):
--   name          VARCHAR  op name, or '(no op)'
--   count         BIGINT   instances over every module and trace (null for '(no op)')
--   gpu_ns        BIGINT   ns, GPU busy time of the kernels the instances launched directly
--   cpu_self_ns   BIGINT   ns, self CPU time of the instances (null for '(no op)')
--   share_pct     DOUBLE   % (0-100) of the GPU busy time of all traces together
CREATE OR REPLACE VIEW top_op_names AS
WITH n AS (
    SELECT name, sum(count)::BIGINT AS count, sum(gpu_ns)::BIGINT AS gpu_ns, sum(cpu_self_ns)::BIGINT AS cpu_self_ns
    FROM top_ops GROUP BY name
)
SELECT name, count, gpu_ns, cpu_self_ns, 100 * gpu_ns::DOUBLE / nullif(g.busy_ns, 0)::DOUBLE AS share_pct
FROM n CROSS JOIN gpu_time_totals g
ORDER BY name = '(no op)', gpu_ns DESC, name;
