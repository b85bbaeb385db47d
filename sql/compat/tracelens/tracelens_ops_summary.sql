-- tracelens_ops_summary: TraceLens's "kernel launchers" summary (ops_summary.csv), same columns and meaning.
-- Answers, for people coming from TraceLens: which launcher ops own the GPU time, in their units.
-- depends: slices, _tracelens_launcher_time, _tracelens_op_category
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
WITH launchers AS (  -- each launcher instance and its two busy times (_tracelens_launcher_time)
    SELECT t.trace_id, t.uid, t.pre, t.name, t.direct_ns, t.subtree_ns, s.is_recompute,
           regexp_replace(m.name, '_\d+$', '') AS parent_module
    FROM _tracelens_launcher_time t
    JOIN slices s ON s.trace_id = t.trace_id AND s.uid = t.uid
    LEFT JOIN slices m ON m.trace_id = s.trace_id AND m.uid = s.module_uid
),
per_name AS (
    SELECT trace_id, name, is_recompute, parent_module,
           sum(direct_ns) / 1000.0 AS total_direct_kernel_time_sum,
           sum(subtree_ns) / 1000.0 AS total_subtree_kernel_time_sum,
           count(*) FILTER (WHERE subtree_ns > 0 OR direct_ns > 0) AS total_subtree_kernel_time_count,
           count(*) AS "Count", arg_min(uid, pre) AS first_uid
    FROM launchers
    GROUP BY ALL
),
stack AS (  -- the first instance, then each nn.Module frame above it, outward
    SELECT trace_id, first_uid, '[' || string_agg('''' || frame || '''', ', ' ORDER BY lvl) || ']' AS call_stack_first
    FROM (
        WITH RECURSIVE mods AS MATERIALIZED (  -- the slices some slice names as its module: the
                                               -- walk's steps (not all slices, hashed once a step)
            SELECT s.trace_id, s.uid, s.name, s.module_uid FROM slices s
            SEMI JOIN (SELECT DISTINCT trace_id, module_uid FROM slices WHERE module_uid IS NOT NULL) m
              ON m.trace_id = s.trace_id AND m.module_uid = s.uid
        ),
        up(trace_id, first_uid, lvl, frame, next_uid) AS (
            SELECT p.trace_id, p.first_uid, 0, p.name, s.module_uid
            FROM per_name p JOIN slices s ON s.trace_id = p.trace_id AND s.uid = p.first_uid
            UNION ALL
            SELECT up.trace_id, up.first_uid, up.lvl + 1, s.name, s.module_uid
            FROM up JOIN mods s ON s.trace_id = up.trace_id AND s.uid = up.next_uid
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
