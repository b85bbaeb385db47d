-- top_ops: the GPU busy time of a trace, split over the ops that launched it, with the rest as its own row.
-- Answers: which ops (per module) own the device's busy time, as shares that add up to it.
-- depends: op_summary, gpu_timeline
-- An op's time is op_summary.direct_busy_ns (the kernels it launched itself; graph-replayed
-- kernels count under their captured ops, or under a `graph replay @ …` pseudo op without
-- capture traces, docs/graphs.md). The last row of a trace, `(no op)`, is the busy time
-- no op accounts for: device work with no cpu_op above its launch call, or not linked to
-- a launch at all. Shares add up to 100 % unless ops overlap in time on different streams.
-- op_rank numbers a trace's ops in the order of the rows; the rest_ columns of the op ranked N
-- total the ops ranked below it, so that "the top N ops and one row for the others" is the
-- rows with op_rank <= N and the rest_ columns of row N (rest_count is 0 on the last op).
-- Columns (per trace: ops by GPU time, descending, then the `(no op)` row):
--   trace_id        INTEGER  trace
--   name            VARCHAR  op name, or '(no op)'
--   parent_module   VARCHAR  module the instances ran in (null: none, and for '(no op)')
--   count           BIGINT   instances (null for '(no op)')
--   gpu_ns          BIGINT   ns, GPU busy time of the kernels the instances launched directly
--   share_pct       DOUBLE   % (0–100) of the trace's GPU busy time (every device together)
--   cpu_self_ns     BIGINT   ns, self CPU time of the instances (null for '(no op)')
--   op_rank         BIGINT   the op's place in the trace, 1 = most GPU time (null for '(no op)')
--   rest_count      BIGINT   instances of the ops ranked below this one (null for '(no op)')
--   rest_gpu_ns     BIGINT   ns, GPU time of the ops ranked below this one (null for '(no op)')
--   rest_share_pct  DOUBLE   % (0–100) of the trace's GPU busy time that rest_gpu_ns is (null for '(no op)')
--   rest_cpu_self_ns  BIGINT  ns, self CPU time of the ops ranked below this one (null for '(no op)')
CREATE OR REPLACE VIEW top_ops AS
WITH busy AS (
    SELECT trace_id, busy_ns FROM gpu_timeline WHERE device IS NULL
),
ops AS (
    SELECT o.trace_id, o.name, o.parent_module, o.count, o.direct_busy_ns AS gpu_ns, o.cpu_self_ns
    FROM op_summary o WHERE o.direct_busy_ns > 0
),
rest AS (
    SELECT b.trace_id, '(no op)' AS name, NULL::VARCHAR AS parent_module, NULL::BIGINT AS count,
           greatest(b.busy_ns - coalesce(sum(o.gpu_ns), 0), 0)::BIGINT AS gpu_ns, NULL::BIGINT AS cpu_self_ns
    FROM busy b LEFT JOIN ops o ON o.trace_id = b.trace_id
    GROUP BY b.trace_id, b.busy_ns
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY gpu_ns DESC, name, parent_module) AS op_rank
    FROM ops
),
below AS (  -- the totals of every op ranked after this one: a window from the next row to the last
    SELECT *,
           coalesce(sum(count) OVER w, 0)::BIGINT AS rest_count,
           coalesce(sum(gpu_ns) OVER w, 0)::BIGINT AS rest_gpu_ns,
           -- 0 below the last op; null where the ops below have no CPU time at all
           CASE WHEN count(*) OVER w = 0 THEN 0 ELSE sum(cpu_self_ns) OVER w END::BIGINT AS rest_cpu_self_ns
    FROM ranked
    WINDOW w AS (PARTITION BY trace_id ORDER BY op_rank ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
)
SELECT u.trace_id, u.name, u.parent_module, u.count, u.gpu_ns,
       100.0 * u.gpu_ns / nullif(b.busy_ns, 0) AS share_pct, u.cpu_self_ns,
       u.op_rank, u.rest_count, u.rest_gpu_ns, 100.0 * u.rest_gpu_ns / nullif(b.busy_ns, 0) AS rest_share_pct,
       u.rest_cpu_self_ns
FROM (SELECT *, 0 AS last FROM below
      UNION ALL
      SELECT *, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, 1 FROM rest) u
JOIN busy b ON b.trace_id = u.trace_id
ORDER BY u.trace_id, u.last, u.gpu_ns DESC, u.name, u.parent_module;
