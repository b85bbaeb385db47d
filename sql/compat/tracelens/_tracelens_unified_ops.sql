-- _tracelens_unified_ops: helper — the op instances of TraceLens's unified perf table, each
-- with its GPU busy time and host duration.
-- Answers: at which ops TraceLens's walk down the host tree stops, so that
-- tracelens_unified_perf_summary has the rows of its unified_perf_summary.csv.
-- depends: slices, graph_nodes, _tracelens_gpu_events
-- uses: intervals, tracelens
-- The walk (TraceLens 171dd74, as its reference outputs show it): GPU events are those TraceLens
-- links (_tracelens_gpu_events); an op "has GPU work" when one is launched in its subtree.
-- From the top of the tree, python frames, annotations and other slices are passed through;
-- a cpu_op with GPU work
--   1. is taken whole when TraceLens has a perf model for its name (macro
--      _tc_tl_has_perf_model: the names of TraceLens's op-to-model table — GEMM, convolution,
--      SDPA, norms, the elementwise and reduce ops it models, the vLLM / SGLang / aiter ops of
--      its inference reports — and Inductor kernels whose name lists the fused ops; checked
--      against every op of its reference outputs): so aten::layer_norm over native_layer_norm,
--      the SDPA op over its flash kernel op, aiter::gemm_a16w16 over aten::mm;
--   2. else, when it launches GPU work itself (a launcher, kernels.launcher_uid) and no cpu_op
--      beneath it has GPU work, is taken whole, unless one of its GPU events is an NCCL kernel
--      (name contains nccl): those ops are left out;
--   3. else, when it launches GPU work itself and cpu_ops beneath it do too, each GPU event it
--      launches itself becomes a synthetic op '<op>-><kernel> (Synthetic Op)' (the op's
--      arguments and duration), and the walk goes on beneath it;
--   4. else the walk goes on beneath it.
-- A launch call with no op above it that stops the walk (a launch from Python) gives one
-- synthetic op per GPU event it launched, '<launch call>-><kernel> (Synthetic Op)'.
-- Vectorised: the walk stops, for each GPU event, at the outermost op on its op_path that is
-- rule 1 or 2; an event whose path holds none belongs to a synthetic op of its launcher.
-- Not reproduced: TraceLens also stops at a backward op that is the only one under an autograd
-- node whose forward op has a perf model (no reference output has one), and its inference
-- reports' pseudo ops (vllm::moe_forward's kernels as pseudo_op::moe_triton_unfused_up, …:
-- here they are moe_forward's synthetic ops).
-- Times: kernel_ns = busy time (union) of the op's GPU events, durations as written; a
-- synthetic op's = its GPU event's duration. dur_ns = the slice's duration; an op grafted from
-- a graph capture (graph_nodes) has none of its own and takes its graph launch's, as TraceLens
-- gives the replayed ops.
-- Columns (one row per instance):
--   trace_id        INTEGER  trace
--   uid             BIGINT   the op (for a synthetic op: the op or launch call that launched its GPU event)
--   name            VARCHAR  op name (SGLang profiler ops without their numeric id suffix), or the synthetic op's name
--   kernel_name     VARCHAR  a synthetic op's GPU event name (null for an op)
--   has_perf_model  BOOLEAN  rule 1 applies (false for a synthetic op)
--   pid, tid        BIGINT   host process and thread of the slice at uid
--   pre             BIGINT   pre-order number of the slice at uid
--   dur_ns          BIGINT   ns, host duration
--   kernel_ns       BIGINT   ns, GPU busy time
CREATE OR REPLACE VIEW _tracelens_unified_ops AS
WITH g AS (
    SELECT trace_id, uid, name, ts_ns, end_ns, dur_ns, launch_uid, launcher_uid, coalesce(op_path, []) AS op_path
    FROM _tracelens_gpu_events WHERE launch_uid IS NOT NULL
),
on_path AS MATERIALIZED (  -- (GPU event, cpu_op above its launch, level: 1 = nearest)
    SELECT trace_id, uid, unnest(op_path) AS ouid, generate_subscripts(op_path, 1) AS lvl FROM g
),
info AS MATERIALIZED (  -- one scan of slices for every slice needed below: the ops on the
                        -- paths, the launch calls, the graph launches of grafted ops
    SELECT s.trace_id, s.uid, _tc_tl_name(s.name) AS name, s.pid, s.tid, s.pre, s.dur_ns
    FROM slices s
    SEMI JOIN (SELECT trace_id, ouid AS uid FROM on_path UNION SELECT trace_id, launcher_uid FROM g
               UNION SELECT trace_id, graph_launch_uid FROM graph_nodes) n
      ON n.trace_id = s.trace_id AND n.uid = s.uid
),
flags AS (  -- per op with GPU work: rule 1, launcher, and cpu_ops with GPU work beneath it
    SELECT o.trace_id, o.ouid, _tc_tl_has_perf_model(i.name) AS pm, l.launcher_uid IS NOT NULL AS leaf, o.inner_work
    FROM (SELECT trace_id, ouid, bool_or(lvl > 1) AS inner_work FROM on_path GROUP BY ALL) o
    JOIN info i ON i.trace_id = o.trace_id AND i.uid = o.ouid
    LEFT JOIN (SELECT DISTINCT trace_id, launcher_uid FROM g) l ON l.trace_id = o.trace_id AND l.launcher_uid = o.ouid
),
stop AS (  -- per GPU event, the outermost op on its path where the walk stops (rules 1, 2)
    SELECT p.trace_id, p.uid, arg_max(p.ouid, p.lvl) AS owner
    FROM on_path p JOIN flags f ON f.trace_id = p.trace_id AND f.ouid = p.ouid
    WHERE f.pm OR (f.leaf AND NOT f.inner_work)
    GROUP BY ALL
),
own AS MATERIALIZED (
    SELECT g.*, st.owner FROM g LEFT JOIN stop st ON st.trace_id = g.trace_id AND st.uid = g.uid
),
busy AS (  -- per op taken whole: the busy time of its GPU events (sql/macros/intervals.sql)
    SELECT trace_id, owner AS uid, sum(c)::BIGINT AS kernel_ns, bool_or(name ILIKE '%nccl%') AS nccl
    FROM (SELECT trace_id, owner, name,
                 _tc_union_add(ts_ns, end_ns, trace_id, owner) AS c
          FROM own WHERE owner IS NOT NULL)
    GROUP BY ALL
),
inst AS (  -- the ops taken whole, and the GPU events of synthetic ops
    SELECT trace_id, uid, NULL::VARCHAR AS kernel_name, kernel_ns, nccl FROM busy
    UNION ALL
    SELECT trace_id, launcher_uid, name, dur_ns, false FROM own WHERE owner IS NULL
)
SELECT i.trace_id, i.uid,
       CASE WHEN i.kernel_name IS NULL THEN s.name ELSE s.name || '->' || i.kernel_name || ' (Synthetic Op)' END AS name,
       i.kernel_name, i.kernel_name IS NULL AND _tc_tl_has_perf_model(s.name) AS has_perf_model,
       s.pid, s.tid, s.pre, coalesce(gl.dur_ns, s.dur_ns) AS dur_ns, i.kernel_ns
FROM inst i
JOIN info s ON s.trace_id = i.trace_id AND s.uid = i.uid
LEFT JOIN graph_nodes gn ON gn.trace_id = i.trace_id AND gn.uid = i.uid
LEFT JOIN info gl ON gl.trace_id = gn.trace_id AND gl.uid = gn.graph_launch_uid
WHERE i.kernel_name IS NOT NULL OR _tc_tl_has_perf_model(s.name) OR NOT i.nccl;
