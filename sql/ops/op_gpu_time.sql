-- op_gpu_time: GPU time of every CPU op instance (cpu_op slice), direct and over its subtree.
-- Answers: how much device time did this call of aten::xyz cause — the kernels it launched
-- itself, and the kernels launched anywhere beneath it (nested ops, runtime calls) — and
-- where in the Python source was it called from.
-- depends: slices, kernels
-- uses: intervals
-- Busy time = length of the union of the device intervals (overlaps counted once, all
-- devices and streams together). Subtree membership: a kernel was launched beneath op o
-- iff o is in the kernel's op_path (its op_uid and every cpu_op above it), an equality
-- join on unnest(op_path) (a range join on the pre-order numbers is far slower in DuckDB).
-- Columns:
--   trace_id            INTEGER  trace the op belongs to
--   rank                INTEGER  rank of that trace (null when unknown)
--   uid                 BIGINT   the op's uid (position in traceEvents)
--   name                VARCHAR  op name (aten::mm, …)
--   pid, tid            BIGINT   host process and thread
--   ts_ns               BIGINT   ns, op start
--   dur_ns              BIGINT   ns, op wall time on the host
--   self_ns             BIGINT   ns, host time not covered by child slices (self CPU time)
--   depth               INTEGER  depth in the host tree (0 = root)
--   parent_uid          BIGINT   parent slice
--   direct_kernels      BIGINT   device events whose op_uid is this op (launched directly by it)
--   direct_kernel_sum_ns BIGINT  ns, sum of those events' durations
--   direct_busy_ns      BIGINT   ns, union length of those events
--   subtree_kernels     BIGINT   device events launched anywhere in the op's subtree
--   subtree_kernel_sum_ns BIGINT ns, sum of their durations
--   subtree_busy_ns     BIGINT   ns, union length of those events
--   source              VARCHAR  nearest enclosing python_function frame as `file.py(line)` (null if none)
--   source_frame        VARCHAR  that frame's full name
--   is_recompute        BOOLEAN  re-run in backward by activation checkpointing (slices.is_recompute)
--   parent_module       VARCHAR  nearest `nn.Module: X` Python frame above the op, its `_N` instance suffix cut (null: none)
CREATE OR REPLACE VIEW op_gpu_time AS
WITH ops AS (
    SELECT * FROM slices WHERE cat = 'cpu_op'
),
frames AS (  -- what py_uid and module_uid point at: Python frames only
    SELECT trace_id, uid, name FROM slices WHERE cat = 'python_function'
),
lk AS (  -- every linked device event that has a cpu_op above its launch
    SELECT k.trace_id, k.uid AS kuid, k.ts_ns, k.end_ns, k.dur_ns, k.op_uid, k.op_path
    FROM kernels k WHERE k.op_uid IS NOT NULL
),
iv AS (  -- each kernel under its direct op, and under every op on its op_path
    SELECT 'direct' AS kind, trace_id, op_uid AS ouid, ts_ns, end_ns, dur_ns FROM lk
    UNION ALL
    SELECT 'subtree', trace_id, unnest(op_path), ts_ns, end_ns, dur_ns FROM lk
),
g AS (  -- what each kernel adds to the union of its op's kernels (sql/macros/intervals.sql)
    SELECT kind, trace_id, ouid, dur_ns,
           _tc_union_add(ts_ns, end_ns, kind, trace_id, ouid) AS c
    FROM iv
),
per AS (
    SELECT kind, trace_id, ouid, count(*)::BIGINT AS kernels, sum(dur_ns)::BIGINT AS kernel_sum_ns,
           sum(c)::BIGINT AS busy_ns
    FROM g GROUP BY ALL
),
direct AS (
    SELECT trace_id, ouid, kernels AS direct_kernels, kernel_sum_ns AS direct_kernel_sum_ns,
           busy_ns AS direct_busy_ns
    FROM per WHERE kind = 'direct'
),
sub AS (
    SELECT trace_id, ouid, kernels AS subtree_kernels, kernel_sum_ns AS subtree_kernel_sum_ns,
           busy_ns AS subtree_busy_ns
    FROM per WHERE kind = 'subtree'
)
SELECT o.trace_id, o.rank, o.uid, o.name, o.pid, o.tid, o.ts_ns, o.dur_ns, o.self_ns, o.depth, o.parent_uid,
       coalesce(d.direct_kernels, 0) AS direct_kernels,
       coalesce(d.direct_kernel_sum_ns, 0) AS direct_kernel_sum_ns,
       coalesce(d.direct_busy_ns, 0) AS direct_busy_ns,
       coalesce(s.subtree_kernels, 0) AS subtree_kernels,
       coalesce(s.subtree_kernel_sum_ns, 0) AS subtree_kernel_sum_ns,
       coalesce(s.subtree_busy_ns, 0) AS subtree_busy_ns,
       nullif(regexp_extract(py.name, '([^/\\ ]+\.py\(\d+\))', 1), '') AS source,
       py.name AS source_frame, o.is_recompute,
       regexp_replace(m.name, '_\d+$', '') AS parent_module
FROM ops o
LEFT JOIN direct d ON d.trace_id = o.trace_id AND d.ouid = o.uid
LEFT JOIN sub s ON s.trace_id = o.trace_id AND s.ouid = o.uid
LEFT JOIN frames py ON py.trace_id = o.trace_id AND py.uid = o.py_uid
LEFT JOIN frames m ON m.trace_id = o.trace_id AND m.uid = o.module_uid;
