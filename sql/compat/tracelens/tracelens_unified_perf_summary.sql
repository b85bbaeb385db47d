-- tracelens_unified_perf_summary: TraceLens's unified_perf_summary.csv — one row per op and
-- call arguments, with its GPU time, host duration and roofline numbers.
-- Answers, for people coming from TraceLens: which op calls (at the level TraceLens models
-- them: aten::layer_norm rather than native_layer_norm, the SDPA op rather than its flash
-- kernel op) own the GPU time, and how many FLOPs and bytes they do at what rate.
-- depends: _tracelens_unified_ops, _tracelens_op_category, _tracelens_thread_names, _tracelens_arg_text, op_perf
-- uses: tracelens
-- Instances: _tracelens_unified_ops (TraceLens's walk down the op tree; its Kernel Time is the
-- busy time of the GPU events beneath the op, its duration the op's host duration). Rows
-- group as tracelens_ops_unique_args does: name, op category, host process and thread, and
-- the four argument lists as TraceLens prints them (a synthetic op has its op's lists, one
-- of a launch call none).
-- Roofline columns: FLOPs and bytes of the instance from op_perf (one place for every perf
-- formula; docs/analyses.md says for which op classes they equal TraceLens's and how the
-- others differ); null where op_perf models no such op, and for synthetic ops. The static
-- ones (GFLOPS, Data Moved, FLOPS/Byte, Compute Spec) are the group's first instance's, as
-- TraceLens takes them; TB/s and TFLOPS/s are per instance (bytes or FLOPs over its Kernel
-- Time) and then summarised.
-- Not reproduced: kernel_details_summary / trunc_kernel_details (kernel_stats and
-- tracelens_kernel_summary give kernels), perf_params (op_perf has the GEMM sizes), and the
-- inference reports' entry_point and call_stack_full.
-- Columns (one row per group, sorted by "Kernel Time (µs)_sum", descending, then ex_UID and name:
-- the synthetic ops of one op share its uid):
--   trace_id                          INTEGER  trace
--   name                              VARCHAR  op name ('<op>-><kernel> (Synthetic Op)' for a synthetic op)
--   "op category"                     VARCHAR  TraceLens's category (_tracelens_op_category; a synthetic op by its kernel)
--   process_name, process_label, thread_name VARCHAR  host process's and thread's names (_tracelens_thread_names;
--                                              'Unknown' where the trace names none, as TraceLens prints it)
--   "Input Dims", "Input type", "Input Strides", "Concrete Inputs" VARCHAR  argument lists as Python tuple text
--   ex_UID                            BIGINT   uid of the group's first instance in pre-order (tracecols's uid)
--   operation_count                   BIGINT   instances in the group
--   total_duration_us                 DOUBLE   µs, summed host duration of the instances
--   mean_duration_us                  DOUBLE   µs, mean host duration
--   std_duration_us                   DOUBLE   µs, sample standard deviation (null for one instance)
--   GFLOPS                            DOUBLE   1e9 FLOPs of one instance (op_perf.flops)
--   "Data Moved (MB)"                 DOUBLE   MiB (2^20 bytes, TraceLens's unit) of one instance (op_perf.bytes)
--   "FLOPS/Byte"                      DOUBLE   FLOPs per byte
--   "Compute Spec"                    VARCHAR  which peak applies: matrix_<precision> (GEMM, convolution,
--                                              attention) or vector_<precision> (elementwise, norm); null otherwise
--   "TB/s_mean", "TB/s_std"           DOUBLE   1e12 bytes/s over the instances (std: sample)
--   "TFLOPS/s_mean", "TFLOPS/s_std"   DOUBLE   1e12 FLOPs/s over the instances
--   "Kernel Time (µs)_mean", "Kernel Time (µs)_std", "Kernel Time (µs)_sum" DOUBLE  µs, GPU busy time per instance
--   duration_us_median, duration_us_min, duration_us_max DOUBLE  µs, host duration
--   "TB/s_median", "TB/s_min", "TB/s_max" DOUBLE  1e12 bytes/s
--   "TFLOPS/s_median", "TFLOPS/s_min", "TFLOPS/s_max" DOUBLE  1e12 FLOPs/s
--   "Kernel Time (µs)_median", "Kernel Time (µs)_min", "Kernel Time (µs)_max" DOUBLE  µs
--   has_perf_model                    BOOLEAN  TraceLens has a perf model for the name (_tracelens_unified_ops)
--   "Percentage (%)"                  DOUBLE   % (0–100), Kernel Time sum / the trace's total
--   "Cumulative Percentage (%)"       DOUBLE   % (0–100), running sum of the previous column in row order
CREATE OR REPLACE VIEW tracelens_unified_perf_summary AS
WITH inst AS (
    SELECT u.trace_id, u.uid, u.name, u.pid, u.tid, u.pre, u.has_perf_model, u.dur_ns, u.kernel_ns,
           coalesce(CASE WHEN u.kernel_name IS NULL THEN c.category ELSE _tc_tl_kernel_category(u.kernel_name) END,
                    'other') AS op_category,
           a.dims, a.types, a.strides, a.concrete,
           p.flops, p.bytes,
           CASE WHEN p.precision IS NULL THEN NULL
                WHEN p.category IN ('gemm', 'conv_fwd', 'conv_bwd', 'sdpa_fwd', 'sdpa_bwd') THEN 'matrix_' || p.precision
                WHEN p.category IN ('elementwise', 'norm') THEN 'vector_' || p.precision END AS spec,
           p.bytes / nullif(u.kernel_ns, 0) / 1e3 AS tbps, p.flops / nullif(u.kernel_ns, 0) / 1e3 AS tflops
    FROM _tracelens_unified_ops u
    LEFT JOIN _tracelens_arg_text a ON a.trace_id = u.trace_id AND a.uid = u.uid
    LEFT JOIN _tracelens_op_category c ON c.name = u.name
    LEFT JOIN op_perf p ON p.trace_id = u.trace_id AND p.uid = u.uid AND u.kernel_name IS NULL
),
grp AS (
    SELECT trace_id, name, op_category, pid, tid, dims, types, strides, concrete,
           arg_min(uid, pre) AS ex_uid, count(*) AS n, any_value(has_perf_model) AS has_perf_model,
           -- sums of integer ns: the same in any order, so ties in the sort below are exact
           sum(dur_ns) / 1e3 AS dsum, avg(dur_ns) / 1e3 AS dmean, stddev_samp(dur_ns) / 1e3 AS dstd,
           quantile_cont(dur_ns, 0.5) / 1e3 AS dmed, min(dur_ns) / 1e3 AS dmin, max(dur_ns) / 1e3 AS dmax,
           arg_min(flops, pre) AS flops, arg_min(bytes, pre) AS bytes, arg_min(spec, pre) AS spec,
           avg(tbps) AS tb_mean, stddev_samp(tbps) AS tb_std, quantile_cont(tbps, 0.5) AS tb_med,
           min(tbps) AS tb_min, max(tbps) AS tb_max,
           avg(tflops) AS tf_mean, stddev_samp(tflops) AS tf_std, quantile_cont(tflops, 0.5) AS tf_med,
           min(tflops) AS tf_min, max(tflops) AS tf_max,
           avg(kernel_ns) / 1e3 AS kt_mean, stddev_samp(kernel_ns) / 1e3 AS kt_std, sum(kernel_ns) / 1e3 AS kt_sum,
           quantile_cont(kernel_ns, 0.5) / 1e3 AS kt_med, min(kernel_ns) / 1e3 AS kt_min, max(kernel_ns) / 1e3 AS kt_max
    FROM inst GROUP BY trace_id, name, op_category, pid, tid, dims, types, strides, concrete
)
SELECT g.trace_id, g.name, g.op_category AS "op category",
       coalesce(pn.v, 'Unknown') AS process_name, coalesce(pl.v, 'Unknown') AS process_label,
       coalesce(tn.v, 'Unknown') AS thread_name,
       g.dims AS "Input Dims", g.types AS "Input type", g.strides AS "Input Strides", g.concrete AS "Concrete Inputs",
       g.ex_uid AS "ex_UID", g.n AS operation_count,
       g.dsum AS total_duration_us, g.dmean AS mean_duration_us, g.dstd AS std_duration_us,
       g.flops / 1e9 AS "GFLOPS", g.bytes / 1048576.0 AS "Data Moved (MB)", g.flops / nullif(g.bytes, 0) AS "FLOPS/Byte",
       g.spec AS "Compute Spec",
       g.tb_mean AS "TB/s_mean", g.tb_std AS "TB/s_std", g.tf_mean AS "TFLOPS/s_mean", g.tf_std AS "TFLOPS/s_std",
       g.kt_mean AS "Kernel Time (µs)_mean", g.kt_std AS "Kernel Time (µs)_std", g.kt_sum AS "Kernel Time (µs)_sum",
       g.dmed AS duration_us_median, g.dmin AS duration_us_min, g.dmax AS duration_us_max,
       g.tb_med AS "TB/s_median", g.tb_min AS "TB/s_min", g.tb_max AS "TB/s_max",
       g.tf_med AS "TFLOPS/s_median", g.tf_min AS "TFLOPS/s_min", g.tf_max AS "TFLOPS/s_max",
       g.kt_med AS "Kernel Time (µs)_median", g.kt_min AS "Kernel Time (µs)_min", g.kt_max AS "Kernel Time (µs)_max",
       g.has_perf_model,
       100.0 * g.kt_sum / nullif(sum(g.kt_sum) OVER (PARTITION BY g.trace_id), 0) AS "Percentage (%)",
       100.0 * sum(g.kt_sum) OVER (PARTITION BY g.trace_id ORDER BY g.kt_sum DESC, g.ex_uid, g.name ROWS UNBOUNDED PRECEDING)
           / nullif(sum(g.kt_sum) OVER (PARTITION BY g.trace_id), 0) AS "Cumulative Percentage (%)"
FROM grp g
LEFT JOIN _tracelens_thread_names pn ON pn.trace_id = g.trace_id AND pn.pid = g.pid AND pn.name = 'process_name'
LEFT JOIN _tracelens_thread_names pl ON pl.trace_id = g.trace_id AND pl.pid = g.pid AND pl.name = 'process_labels'
LEFT JOIN _tracelens_thread_names tn ON tn.trace_id = g.trace_id AND tn.pid = g.pid AND tn.tid = g.tid AND tn.name = 'thread_name'
ORDER BY g.trace_id, g.kt_sum DESC, g.ex_uid, g.name;
