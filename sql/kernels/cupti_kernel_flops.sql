-- cupti_kernel_flops: floating-point work per kernel counted by the hardware (CUPTI range
-- profiler's SASS instruction counters), and the op that launched it.
-- Answers: how many FLOPs did each kernel really execute, at what precision, and which op
-- launched it — a measured count to set beside the perf models' estimates.
-- depends: cupti_counters
-- FLOPs from the per-thread instruction counters smsp__sass_thread_inst_executed_op_<op>_pred_on.sum:
-- a fused multiply-add counts 2, an add or a multiply 1, per precision (h = fp16, f = fp32,
-- d = fp64). Kernels without these counters are left out. Tensor-core work is not in these
-- counters (it has counters of its own), so matmuls on tensor cores count low.
-- Columns:
--   trace_id     INTEGER  trace
--   rank         INTEGER  rank (null when unknown)
--   uid          BIGINT   the range event (one kernel)
--   kernel_name  VARCHAR  kernel name as written
--   op_name      VARCHAR  innermost cpu_op that launched it (null when not paired)
--   top_op_name  VARCHAR  outermost cpu_op around the launch (null when not paired)
--   dur_ns       BIGINT   ns, duration of the range (the profiler's replay)
--   flops_fp16   DOUBLE   FLOPs in half precision: 2*hfma + hadd + hmul
--   flops_fp32   DOUBLE   FLOPs in single precision: 2*ffma + fadd + fmul
--   flops_fp64   DOUBLE   FLOPs in double precision: 2*dfma + dadd + dmul
--   flops        DOUBLE   their sum
CREATE OR REPLACE VIEW cupti_kernel_flops AS
WITH sass AS (
    SELECT trace_id, rank, uid, kernel_name, op_name, top_op_name, dur_ns,
           regexp_extract(counter, '^smsp__sass_thread_inst_executed_op_([hfd])(fma|add|mul)_pred_on\.sum$', 1) AS prec,
           regexp_extract(counter, '^smsp__sass_thread_inst_executed_op_([hfd])(fma|add|mul)_pred_on\.sum$', 2) AS op,
           value
    FROM cupti_counters
    WHERE regexp_matches(counter, '^smsp__sass_thread_inst_executed_op_[hfd](fma|add|mul)_pred_on\.sum$')
), weighted AS (
    SELECT *, value * CASE op WHEN 'fma' THEN 2 ELSE 1 END AS flops FROM sass
)
SELECT trace_id, rank, uid, any_value(kernel_name) AS kernel_name, any_value(op_name) AS op_name,
       any_value(top_op_name) AS top_op_name, any_value(dur_ns) AS dur_ns,
       sum(flops) FILTER (WHERE prec = 'h') AS flops_fp16,
       sum(flops) FILTER (WHERE prec = 'f') AS flops_fp32,
       sum(flops) FILTER (WHERE prec = 'd') AS flops_fp64,
       sum(flops) AS flops
FROM weighted
GROUP BY trace_id, rank, uid
ORDER BY trace_id, uid;
