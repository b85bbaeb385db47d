-- rank_kernel_diff: per kernel, how each rank's GPU time differs from the typical rank's.
-- Answers: which kernels does a rank run more (or less, or not at all) than the other ranks?
-- depends: kernels, traces
-- For every kernel name that ran on any rank, one row per (kernel, rank) — a rank that never
-- ran it has calls = 0 and total_ns = 0. The typical rank is the median over all ranks.
-- Ranks are the traces of the lake (one per rank); rows sort by the largest absolute diff.
-- Columns:
--   name              VARCHAR  kernel name
--   kernel_class      VARCHAR  kernels.kernel_class
--   rank, trace_id    INTEGER  the rank and its trace
--   calls             BIGINT   times the kernel ran on this rank
--   total_ns          BIGINT   ns, sum of its durations on this rank
--   median_calls      DOUBLE   median of calls over ranks
--   median_total_ns   DOUBLE   ns, median of total_ns over ranks
--   diff_ns           DOUBLE   ns, total_ns - median_total_ns
--   diff_pct          DOUBLE   % of median_total_ns (null when the median is 0)
--   ranks_running     BIGINT   ranks on which the kernel ran at all
CREATE OR REPLACE VIEW rank_kernel_diff AS
WITH per AS (
    SELECT name, any_value(kernel_class) AS kernel_class, trace_id,
           count(*) AS calls, sum(dur_ns)::BIGINT AS total_ns
    FROM kernels GROUP BY name, trace_id
),
names AS (SELECT name, any_value(kernel_class) AS kernel_class, count(*) AS ranks_running FROM per GROUP BY name),
grid AS (
    SELECT n.name, n.kernel_class, n.ranks_running, t.trace_id, t.rank,
           coalesce(p.calls, 0) AS calls, coalesce(p.total_ns, 0)::BIGINT AS total_ns
    FROM names n CROSS JOIN traces t
    LEFT JOIN per p ON p.name = n.name AND p.trace_id = t.trace_id
),
m AS (
    SELECT *, (median(calls) OVER (PARTITION BY name))::DOUBLE AS median_calls,
           (median(total_ns) OVER (PARTITION BY name))::DOUBLE AS median_total_ns
    FROM grid
)
SELECT name, kernel_class, rank, trace_id, calls, total_ns, median_calls, median_total_ns,
       total_ns - median_total_ns AS diff_ns,
       100.0 * (total_ns - median_total_ns) / nullif(median_total_ns, 0) AS diff_pct,
       ranks_running
FROM m
ORDER BY abs(total_ns - median_total_ns) DESC, name, rank;
