-- op_perf_summary: op_perf grouped per (op name, shapes, dtype), like TraceLens's GEMM / CONV / SDPA tables.
-- Answers: for each distinct GEMM / convolution / attention / elementwise call signature, how
-- many times it ran, its FLOPs and bytes, and how fast it ran against the device's peak.
-- depends: op_perf
-- One row per (trace_id, device, name, category, shapes, dtype, innermost, flops, bytes): calls
-- whose other inputs' types differ (a copy_ from int32 into int64, say) cost other bytes and get
-- their own row. Sorted by total GPU time.
-- Columns:
--   trace_id INTEGER; device BIGINT; name VARCHAR; category VARCHAR; shapes VARCHAR; dtype VARCHAR;
--   precision VARCHAR; innermost BOOLEAN (see op_perf)
--   gemm_m, gemm_n, gemm_k, gemm_b BIGINT  GEMM sizes (null for other ops)
--   causal                BOOLEAN  attention: causal
--   count                 BIGINT   op instances
--   flops                 DOUBLE   FLOPs of one instance
--   bytes                 DOUBLE   bytes of one instance
--   arithmetic_intensity  DOUBLE   flops per byte
--   gpu_sum_ns BIGINT ns; gpu_mean_ns, gpu_median_ns, gpu_std_ns DOUBLE ns; gpu_min_ns, gpu_max_ns BIGINT ns
--                                  busy time per instance (see op_perf)
--   achieved_tflops_per_s_mean, achieved_tflops_per_s_median DOUBLE  1e12 FLOP/s over the instances
--   achieved_tb_per_s_mean DOUBLE  1e12 bytes/s
--   device_model VARCHAR; peak_tflops_per_s, peak_tb_per_s DOUBLE
--   flops_pct_of_peak     DOUBLE   % (0-100): total flops / total GPU time, against the peak
--   bandwidth_pct_of_peak DOUBLE   % (0-100): total bytes / total GPU time, against the peak
--   roofline_bound        VARCHAR  compute or memory (see op_perf)
--   above_peak            BOOLEAN  some instance ran above the device's peak (op_perf.above_peak: a model or
--                                  data problem, not a measurement); null without a peak
CREATE OR REPLACE VIEW op_perf_summary AS
SELECT trace_id, device, name, category, shapes, dtype, any_value(precision) AS precision, innermost,
       any_value(gemm_m) AS gemm_m, any_value(gemm_n) AS gemm_n, any_value(gemm_k) AS gemm_k,
       any_value(gemm_b) AS gemm_b, any_value(causal) AS causal,
       count(*) AS count, flops, bytes,
       any_value(arithmetic_intensity) AS arithmetic_intensity,
       sum(gpu_ns)::BIGINT AS gpu_sum_ns, avg(gpu_ns) AS gpu_mean_ns,
       quantile_cont(gpu_ns, 0.5) AS gpu_median_ns, stddev_samp(gpu_ns) AS gpu_std_ns,
       min(gpu_ns) AS gpu_min_ns, max(gpu_ns) AS gpu_max_ns,
       avg(achieved_tflops_per_s) AS achieved_tflops_per_s_mean,
       quantile_cont(achieved_tflops_per_s, 0.5) AS achieved_tflops_per_s_median,
       avg(achieved_tb_per_s) AS achieved_tb_per_s_mean,
       any_value(device_model) AS device_model,
       any_value(peak_tflops_per_s) AS peak_tflops_per_s, any_value(peak_tb_per_s) AS peak_tb_per_s,
       100.0 * sum(flops) / nullif(sum(gpu_ns), 0) / 1e3 / any_value(peak_tflops_per_s) AS flops_pct_of_peak,
       100.0 * sum(bytes) / nullif(sum(gpu_ns), 0) / 1e3 / any_value(peak_tb_per_s) AS bandwidth_pct_of_peak,
       any_value(roofline_bound) AS roofline_bound,
       bool_or(above_peak) AS above_peak
FROM op_perf
GROUP BY trace_id, device, name, category, shapes, dtype, innermost, flops, bytes
ORDER BY trace_id, gpu_sum_ns DESC, name, shapes, dtype, category, device, innermost, flops, bytes;
