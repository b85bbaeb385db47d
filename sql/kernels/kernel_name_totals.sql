-- kernel_name_totals: kernel_stats added up by kernel name over devices, streams and traces.
-- Answers: over all traces together (every rank of a lake), which kernels took the most device
-- time, how often they ran and how long one launch lasted?
-- depends: kernel_stats
-- Every device event counts (kernels, memcpy, memset), as in kernel_stats; one row per name.
-- Columns (by total duration, descending, then name):
--   name       VARCHAR  kernel name
--   count      BIGINT   events of that name
--   sum_ns     BIGINT   ns, total duration
--   mean_ns    DOUBLE   ns, mean duration
--   min_ns     BIGINT   ns, shortest
--   max_ns     BIGINT   ns, longest
--   share_pct  DOUBLE   % (0-100) of the summed duration of all device events of all traces
CREATE OR REPLACE VIEW kernel_name_totals AS
WITH n AS (
    SELECT name, sum(count)::BIGINT AS count, sum(sum_ns)::BIGINT AS sum_ns, min(min_ns) AS min_ns, max(max_ns) AS max_ns
    FROM kernel_stats GROUP BY name
)
SELECT name, count, sum_ns, sum_ns::DOUBLE / count::DOUBLE AS mean_ns, min_ns, max_ns,
       100 * sum_ns::DOUBLE / nullif(sum(sum_ns) OVER (), 0)::DOUBLE AS share_pct
FROM n
ORDER BY sum_ns DESC, name;
