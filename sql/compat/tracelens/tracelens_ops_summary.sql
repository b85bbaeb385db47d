-- tracelens_ops_summary: TraceLens's "kernel launchers" summary (ops_summary.csv), same columns and meaning.
-- Answers, for people coming from TraceLens: which launcher ops own the GPU time, in their units.
-- depends: slices, _tracelens_gpu_events, _tracelens_op_category
-- Rules (docs/tree.md, "TraceLens compatibility"): GPU events are kernels, memcpy and memset
-- linked to a launch call as TraceLens links them (_tracelens_gpu_events: a complete ac2g flow
-- pair); communication kernels (name contains nccl, rccl or
-- cross_device_reduce) are left out. The launcher of a GPU event is kernels.launcher_uid:
-- from the launch call's parent upwards, python_function frames and cpu_ops named
-- `execute` are passed over; the first other cpu_op is the launcher, and when the walk
-- meets any other kind of slice (or the root) the launch call itself is.
-- SGLang profiler op names lose their numeric id suffix (as TraceLens shows them).
-- Times are busy times (union lengths) per launcher instance, summed over instances.
-- Graph-replayed kernels count under the ops grafted from the capture traces (docs/graphs.md).
-- Rows are per (name, is_recompute, parent_module), as TraceLens's reports group them with
-- detect_recompute and by parent module; a trace
-- without nn.Module frames has parent_module null and one row per name (sum rows by name to
-- compare with a name-only summary).
-- Columns (one row per launcher name, parent module and trace, sorted by direct time, descending):
--   trace_id                       INTEGER  trace (TraceLens has one trace per file)
--   name                           VARCHAR  launcher name
--   is_recompute                   BOOLEAN  instances re-run in backward by activation checkpointing (slices.is_recompute)
--   parent_module                  VARCHAR  nearest `nn.Module: X` Python frame above the launcher, its `_N` instance suffix cut (null: none)
--   total_direct_kernel_time_sum   DOUBLE   µs, sum over instances of the busy time of the GPU events each launched
--   total_subtree_kernel_time_sum  DOUBLE   µs, sum over instances of the busy time of every GPU event launched beneath it
--   total_subtree_kernel_time_count BIGINT  number of instances with GPU events beneath them (every instance here)
--   total_direct_kernel_time_ms    DOUBLE   ms, the direct sum / 1000
--   total_subtree_kernel_time_ms   DOUBLE   ms, the subtree sum / 1000
--   Count                          BIGINT   number of launcher instances
--   Categories                     VARCHAR  the op categories of the name, as a list text: ['GEMM'], ['elementwise'] …
--   call_stack_first               VARCHAR  the first instance (pre-order) and its nn.Module frames outward, as a list text
--   "Percentage (%)"               DOUBLE   % (0–100), direct ms / total direct ms of the trace
--   "Cumulative Percentage (%)"    DOUBLE   % (0–100), running sum of the previous column in row order
CREATE OR REPLACE VIEW tracelens_ops_summary AS
WITH gk AS (  -- the GPU events TraceLens counts
    SELECT k.trace_id, k.ts_ns, k.end_ns, k.launcher_uid, k.op_path
    FROM _tracelens_gpu_events k
    WHERE k.launcher_uid IS NOT NULL
      AND NOT (k.name ILIKE '%nccl%' OR k.name ILIKE '%rccl%' OR k.name ILIKE '%cross_device_reduce%')
),
launchers AS (
    SELECT s.trace_id, s.uid, s.cat, s.pre, s.is_recompute, regexp_replace(m.name, '_\d+$', '') AS parent_module,
           -- SGLang's profiler ops carry a numeric id (sglang_profiler::attention_…_100): cut
           regexp_replace(s.name, '^(sglang_profiler::.*)_\d+$', '\1') AS name
    FROM slices s JOIN (SELECT DISTINCT trace_id, launcher_uid FROM gk) g
      ON g.trace_id = s.trace_id AND g.launcher_uid = s.uid
    LEFT JOIN slices m ON m.trace_id = s.trace_id AND m.uid = s.module_uid
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
g AS (  -- what each event adds to the union of its launcher's (sql/core/_macros.sql)
    SELECT trace_id, luid, kind,
           _tc_covered(ts_ns, end_ns, max(end_ns) OVER (PARTITION BY trace_id, luid, kind ORDER BY ts_ns, end_ns
                                                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS c
    FROM iv
),
busy AS (
    SELECT trace_id, luid,
           coalesce(sum(c) FILTER (WHERE kind = 'direct'), 0) AS direct_ns,
           coalesce(sum(c) FILTER (WHERE kind = 'subtree'), 0) AS subtree_ns
    FROM g GROUP BY ALL
),
per_name AS (
    SELECT l.trace_id, l.name, l.is_recompute, l.parent_module,
           sum(b.direct_ns) / 1000.0 AS total_direct_kernel_time_sum,
           sum(b.subtree_ns) / 1000.0 AS total_subtree_kernel_time_sum,
           count(*) FILTER (WHERE b.subtree_ns > 0 OR b.direct_ns > 0) AS total_subtree_kernel_time_count,
           count(*) AS "Count", arg_min(l.uid, l.pre) AS first_uid
    FROM launchers l JOIN busy b ON b.trace_id = l.trace_id AND b.luid = l.uid
    GROUP BY ALL
),
stack AS (  -- the first instance, then each nn.Module frame above it, outward
    SELECT trace_id, first_uid, '[' || string_agg('''' || frame || '''', ', ' ORDER BY lvl) || ']' AS call_stack_first
    FROM (
        WITH RECURSIVE up(trace_id, first_uid, lvl, frame, next_uid) AS (
            SELECT p.trace_id, p.first_uid, 0, p.name, s.module_uid
            FROM per_name p JOIN slices s ON s.trace_id = p.trace_id AND s.uid = p.first_uid
            UNION ALL
            SELECT up.trace_id, up.first_uid, up.lvl + 1, s.name, s.module_uid
            FROM up JOIN slices s ON s.trace_id = up.trace_id AND s.uid = up.next_uid
        )
        SELECT * FROM up)
    GROUP BY ALL
),
cat AS (  -- launch calls that launch for themselves are not in the category list: 'other'
    SELECT p.*, coalesce(c.category, 'other') AS op_category, st.call_stack_first
    FROM per_name p LEFT JOIN _tracelens_op_category c ON c.name = p.name
    LEFT JOIN stack st ON st.trace_id = p.trace_id AND st.first_uid = p.first_uid
)
SELECT trace_id, name, is_recompute, parent_module,
       total_direct_kernel_time_sum, total_subtree_kernel_time_sum, total_subtree_kernel_time_count,
       total_direct_kernel_time_sum / 1000.0 AS total_direct_kernel_time_ms,
       total_subtree_kernel_time_sum / 1000.0 AS total_subtree_kernel_time_ms,
       "Count",
       '[''' || op_category || ''']' AS "Categories", call_stack_first,
       100.0 * total_direct_kernel_time_sum
           / nullif(sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id), 0) AS "Percentage (%)",
       100.0 * sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id
                   ORDER BY total_direct_kernel_time_sum DESC, name, is_recompute, parent_module ROWS UNBOUNDED PRECEDING)
           / nullif(sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id), 0) AS "Cumulative Percentage (%)"
FROM cat
ORDER BY trace_id, total_direct_kernel_time_sum DESC, name, is_recompute, parent_module;
