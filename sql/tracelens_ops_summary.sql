-- tracelens_ops_summary: TraceLens's "kernel launchers" summary (ops_summary.csv), same columns and meaning.
-- Answers, for people coming from TraceLens: which launcher ops own the GPU time, in their units.
-- depends: slices, kernels, _tracelens_op_category
-- Rules (docs/tree.md, "TraceLens compatibility"): GPU events are kernels, memcpy and memset
-- linked to a launch call; communication kernels (name contains nccl, rccl or
-- cross_device_reduce) are left out. The launcher of a GPU event is kernels.launcher_uid:
-- from the launch call's parent upwards, python_function frames and cpu_ops named
-- `execute` are passed over; the first other cpu_op is the launcher, and when the walk
-- meets any other kind of slice (or the root) the launch call itself is.
-- Times are busy times (union lengths) per launcher instance, summed over instances.
-- Columns (one row per launcher name and trace, sorted by direct time, descending):
--   trace_id                       INTEGER  trace (TraceLens has one trace per file)
--   name                           VARCHAR  launcher name
--   total_direct_kernel_time_sum   DOUBLE   µs, sum over instances of the busy time of the GPU events each launched
--   total_subtree_kernel_time_sum  DOUBLE   µs, sum over instances of the busy time of every GPU event launched beneath it
--   total_direct_kernel_time_ms    DOUBLE   ms, the same / 1000
--   total_subtree_kernel_time_ms   DOUBLE   ms, the same / 1000
--   Count                          BIGINT   number of launcher instances
--   Categories                     VARCHAR  the op categories of the name, as a list text: ['GEMM'], ['elementwise'] …
--   "Percentage (%)"               DOUBLE   % (0–100), direct ms / total direct ms of the trace
--   "Cumulative Percentage (%)"    DOUBLE   % (0–100), running sum of the previous column in row order
CREATE OR REPLACE VIEW tracelens_ops_summary AS
WITH gk AS (  -- the GPU events TraceLens counts
    SELECT k.trace_id, k.ts_ns, k.end_ns, k.launcher_uid, k.op_path
    FROM kernels k
    WHERE k.launcher_uid IS NOT NULL
      AND NOT (k.name ILIKE '%nccl%' OR k.name ILIKE '%rccl%' OR k.name ILIKE '%cross_device_reduce%')
),
launchers AS (
    SELECT DISTINCT s.trace_id, s.uid, s.name, s.cat
    FROM slices s JOIN (SELECT DISTINCT trace_id, launcher_uid FROM gk) g
      ON g.trace_id = s.trace_id AND g.launcher_uid = s.uid
),
iv AS (
    SELECT trace_id, launcher_uid AS luid, 'direct' AS kind, ts_ns, end_ns FROM gk
    UNION ALL
    SELECT l.trace_id, l.uid, 'subtree', gk.ts_ns, gk.end_ns
    FROM launchers l JOIN (  -- beneath a cpu_op launcher: it is in the event's op_path;
                             -- a launch call that is its own launcher has only its own events
        SELECT trace_id, unnest(op_path) AS luid, ts_ns, end_ns FROM gk
        UNION ALL
        SELECT trace_id, launcher_uid, ts_ns, end_ns FROM gk
        WHERE NOT list_contains(coalesce(op_path, []), launcher_uid)
    ) gk ON gk.trace_id = l.trace_id AND gk.luid = l.uid
),
g AS (
    SELECT *, max(end_ns) OVER (PARTITION BY trace_id, luid, kind ORDER BY ts_ns, end_ns
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM iv
),
isl AS (
    SELECT *, sum(CASE WHEN prev_end IS NULL OR ts_ns > prev_end THEN 1 ELSE 0 END)
                  OVER (PARTITION BY trace_id, luid, kind ORDER BY ts_ns, end_ns ROWS UNBOUNDED PRECEDING) AS k
    FROM g
),
busy AS (
    SELECT trace_id, luid,
           sum(CASE WHEN kind = 'direct' THEN e - b ELSE 0 END) AS direct_ns,
           sum(CASE WHEN kind = 'subtree' THEN e - b ELSE 0 END) AS subtree_ns
    FROM (SELECT trace_id, luid, kind, k, min(ts_ns) AS b, max(end_ns) AS e FROM isl GROUP BY ALL)
    GROUP BY ALL
),
per_name AS (
    SELECT l.trace_id, l.name,
           sum(b.direct_ns) / 1000.0 AS total_direct_kernel_time_sum,
           sum(b.subtree_ns) / 1000.0 AS total_subtree_kernel_time_sum,
           count(*) AS "Count"
    FROM launchers l JOIN busy b ON b.trace_id = l.trace_id AND b.luid = l.uid
    GROUP BY ALL
),
cat AS (  -- launch calls that launch for themselves are not in the category list: 'other'
    SELECT p.*, coalesce(c.category, 'other') AS op_category
    FROM per_name p LEFT JOIN _tracelens_op_category c ON c.name = p.name
)
SELECT trace_id, name,
       total_direct_kernel_time_sum, total_subtree_kernel_time_sum,
       total_direct_kernel_time_sum / 1000.0 AS total_direct_kernel_time_ms,
       total_subtree_kernel_time_sum / 1000.0 AS total_subtree_kernel_time_ms,
       "Count",
       '[''' || op_category || ''']' AS "Categories",
       100.0 * total_direct_kernel_time_sum
           / nullif(sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id), 0) AS "Percentage (%)",
       100.0 * sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id
                   ORDER BY total_direct_kernel_time_sum DESC, name ROWS UNBOUNDED PRECEDING)
           / nullif(sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id), 0) AS "Cumulative Percentage (%)"
FROM cat
ORDER BY trace_id, total_direct_kernel_time_sum DESC, name;
