-- op_perf: FLOPs, bytes moved and achieved throughput of every modelled CPU op instance.
-- Answers: how close to the device's peak did each GEMM / convolution / attention call run,
-- is it compute- or memory-bound, and how many bytes do elementwise and norm ops move?
-- depends: slices, events, kernels, _device_models, device_specs, _tracelens_op_category
-- uses: intervals, shapes
-- FLOPs and bytes come from the op's `Input Dims`, `Input type` and `Concrete Inputs`
-- (docs/analyses.md gives every formula):
--   GEMM (mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm, _int_mm, _addmm_activation):
--     flops = 2·B·M·N·K (+ B·M·N when a bias is added); bytes = (B·M·K + B·K·N + B·M·N)·size + bias bytes
--   convolution (aten::convolution, conv1d/2d/3d, conv_transpose1d/2d/3d, convolution_backward):
--     fwd flops = 2·N·(output pixels)·numel(weight) (transposed: input pixels); bias not counted;
--     backward = 2 × fwd (grad input + grad weight); bytes = input + weight + output
--   attention (scaled_dot_product_attention and its flash / efficient / cudnn forms, fwd and bwd):
--     fwd flops = 2·B·H·Nq·Nkv·(d_qk + d_v), × 0.5 when causal; bwd = 2.5 × fwd;
--     fwd bytes = q + k + v + out; bwd bytes = 2·(q + k + v) + 2·out
--   elementwise and norms (TraceLens's elementwise / NORM categories): bytes only =
--     every tensor input + one output the size of the largest input; but aten::copy_(dst, src),
--     which reads its source and writes its destination: bytes = src + dst
--   else the profiler's `flops` arg (with_flops=True), or Inductor's kernel_flop / kernel_num_gb.
-- Time: the busy time (union) of every device event launched in the op's subtree. Peaks:
-- device_specs row of the device's model (_device_models: the listed name of the op's device,
-- or the trace's only device type when the device is not listed) and the op's dtype.
-- How: the ops and their argument lists are read once; each model's steps (gemm_in … bytes_in) add
-- columns to that one stream, null outside their model, and `shaped` says whether the op's model
-- applied to its shapes. (A branch per model scanned the lists once per model: at 4 GB of trace
-- 20 s against 14 s, and spilling at 1 GB.)
-- Columns (one row per op instance with a model):
--   trace_id, rank INTEGER; device BIGINT (device of the op's kernels; null without kernels)
--   uid BIGINT; name VARCHAR; pid, tid BIGINT; ts_ns BIGINT ns
--   category        VARCHAR  gemm, conv_fwd, conv_bwd, sdpa_fwd, sdpa_bwd, elementwise, norm, profiler, inductor
--   flops_source    VARCHAR  shape, with_flops or inductor
--   innermost       BOOLEAN  no modelled op beneath it (false for e.g. aten::linear over aten::addmm)
--   shapes          VARCHAR  Input Dims as text
--   dtype           VARCHAR  Input type of the first tensor input (c10::BFloat16, float, …)
--   precision       VARCHAR  fp64, fp32, fp16, bf16, fp8, int8 (null if other)
--   gemm_m, gemm_n, gemm_k, gemm_b BIGINT  GEMM sizes (B = batch; null for other ops)
--   causal          BOOLEAN  attention: causal mask
--   flops           DOUBLE   floating-point operations (null for bytes-only ops)
--   bytes           DOUBLE   bytes read and written (null when unknown)
--   arithmetic_intensity DOUBLE flops per byte
--   kernels         BIGINT   device events in the op's subtree
--   gpu_ns          BIGINT   ns, their busy time
--   achieved_tflops_per_s DOUBLE  flops / gpu time, in 1e12 per s
--   achieved_tb_per_s     DOUBLE  bytes / gpu time, in 1e12 bytes per s
--   device_model          VARCHAR  matched device_specs model (null when the device is unknown)
--   device_model_source   VARCHAR  where the device's name came from: 'listed' (deviceProperties has the
--                                  device) or 'assumed: only device type in the trace'; null without a model
--   peak_tflops_per_s, peak_tb_per_s DOUBLE  datasheet dense peaks for that model and precision
--   flops_pct_of_peak, bandwidth_pct_of_peak DOUBLE % (0-100)
--   roofline_bound        VARCHAR  'compute' when arithmetic_intensity >= peak_tflops/peak_tb (the ridge), else 'memory'
--   roofline_pct          DOUBLE   % (0-100) of the roofline at this intensity: achieved / min(peak flops, intensity × peak bandwidth)
--   above_peak            BOOLEAN  true when the achieved FLOP/s or bytes/s exceeds the device's peak: no
--                                  device can, so the op's model or its data is wrong (a formula that
--                                  overcounts, kernels missing from its time); its % columns are then
--                                  not a measurement. Null without a peak
CREATE OR REPLACE VIEW op_perf AS
WITH op_models AS (  -- each cpu_op name's model (null: none), decided once per name
    SELECT n.name,
           CASE WHEN n.name IN ('aten::mm', 'aten::addmm', 'aten::addmm_', 'aten::_addmm_activation',
                                'aten::bmm', 'aten::baddbmm', 'aten::baddbmm_', 'aten::matmul',
                                'aten::linear', 'aten::_scaled_mm', 'aten::_int_mm') THEN 'gemm'
                WHEN n.name IN ('aten::convolution', 'aten::conv1d', 'aten::conv2d', 'aten::conv3d',
                                'aten::conv_transpose1d', 'aten::conv_transpose2d',
                                'aten::conv_transpose3d') THEN 'conv'
                WHEN n.name = 'aten::convolution_backward' THEN 'conv_bwd'
                WHEN n.name IN ('aten::scaled_dot_product_attention',
                                'aten::_scaled_dot_product_flash_attention',
                                'aten::_scaled_dot_product_flash_attention_for_cpu',
                                'aten::_scaled_dot_product_efficient_attention',
                                'aten::_scaled_dot_product_cudnn_attention',
                                'aten::_flash_attention_forward', 'aten::_efficient_attention_forward',
                                'aten::_scaled_dot_product_flash_attention_backward',
                                'aten::_scaled_dot_product_flash_attention_for_cpu_backward',
                                'aten::_scaled_dot_product_efficient_attention_backward',
                                'aten::_scaled_dot_product_cudnn_attention_backward',
                                'aten::_flash_attention_backward',
                                'aten::_efficient_attention_backward') THEN 'sdpa'
                WHEN c.category IN ('elementwise', 'NORM_fwd', 'NORM_bwd') THEN 'bytes' END AS model,
           c.category AS tl_cat
    FROM (SELECT DISTINCT name FROM slices WHERE cat = 'cpu_op') n
    LEFT JOIN _tracelens_op_category c ON c.name = n.name
),
ops AS (  -- the ops with a model and their shapes, or a flops argument, read once: every model
          -- below is columns of one pass over them, not a branch that scans them again
    SELECT s.trace_id, s.rank, s.uid, s.name, s.pid, s.tid, s.ts_ns, s.pre, s.subtree_end,
           e.input_dims AS d, e.input_types AS ty, e.concrete_inputs AS ci,
           e.flops AS prof_flops, e.kernel_flop, e.kernel_num_gb, m.model, m.tl_cat
    FROM slices s
    JOIN events e ON e.trace_id = s.trace_id AND e.uid = s.uid
    LEFT JOIN op_models m ON m.name = s.name
    WHERE s.cat = 'cpu_op'
      AND (e.input_dims IS NOT NULL OR e.flops IS NOT NULL OR e.kernel_flop IS NOT NULL OR e.kernel_num_gb IS NOT NULL)
      AND (m.model IS NOT NULL OR e.flops IS NOT NULL OR e.kernel_flop IS NOT NULL OR e.kernel_num_gb IS NOT NULL)
),
gemm_in AS (  -- GEMM: A, B operands, bias, and the element sizes (null for other ops)
    SELECT *,
        CASE WHEN model = 'gemm' THEN CASE WHEN bias_first THEN d[2] ELSE d[1] END END AS a,
        CASE WHEN model = 'gemm' THEN CASE WHEN bias_first THEN d[3] ELSE d[2] END END AS bm,
        CASE WHEN model = 'gemm' THEN
            CASE WHEN bias_first THEN d[1]
                 WHEN name = 'aten::linear' AND len(d) >= 3 AND len(d[3]) > 0 THEN d[3]
                 WHEN name = 'aten::_scaled_mm' AND len(d) >= 5 AND len(d[5]) > 0 THEN d[5] END END AS bias,
        CASE WHEN model = 'gemm' THEN CASE WHEN bias_first THEN ty[2] ELSE ty[1] END END AS ta
    FROM (SELECT *, name IN ('aten::addmm', 'aten::addmm_', 'aten::_addmm_activation', 'aten::baddbmm',
                             'aten::baddbmm_') AS bias_first  -- (bias, A, B) rather than (A, B, …)
          FROM ops)
),
gemm AS (
    SELECT *, CASE WHEN gb IS NULL THEN NULL
                   WHEN name IN ('aten::baddbmm', 'aten::baddbmm_') THEN gb * gm * gn
                   WHEN bias IS NOT NULL THEN gm * gn END AS bias_flops
    FROM (
        SELECT *,
            CASE WHEN gemm_ok THEN
                CASE WHEN name = 'aten::linear' THEN _tc_numel(a[:-2]) WHEN len(a) >= 2 THEN a[-2] ELSE 1 END END AS gm,
            CASE WHEN gemm_ok THEN a[-1] END AS gk,
            CASE WHEN gemm_ok THEN
                CASE WHEN name = 'aten::linear' THEN bm[1] WHEN len(bm) >= 2 THEN bm[-1] ELSE 1 END END AS gn,
            CASE WHEN gemm_ok THEN
                CASE WHEN name IN ('aten::bmm', 'aten::baddbmm', 'aten::baddbmm_') THEN a[1]
                     WHEN name = 'aten::matmul' THEN greatest(_tc_numel(a[:-3]), _tc_numel(bm[:-3]))
                     ELSE 1 END END AS gb
        FROM (SELECT *, coalesce(len(a) >= 1 AND len(bm) >= 1, false) AS gemm_ok FROM gemm_in)
    )
),
conv_in AS (  -- convolution: input, weight, and the arguments that set the output size
    SELECT *,
        CASE WHEN model = 'conv' THEN d[1] END AS x, CASE WHEN model = 'conv' THEN d[2] END AS w,
        CASE WHEN model = 'conv' AND (name IN ('aten::convolution', 'aten::conv1d', 'aten::conv2d', 'aten::conv3d')
                                      OR name LIKE 'aten::conv_transpose%') THEN _tc_ints(ci[4]) END AS st,
        CASE WHEN model = 'conv' AND (name IN ('aten::convolution', 'aten::conv1d', 'aten::conv2d', 'aten::conv3d')
                                      OR name LIKE 'aten::conv_transpose%') THEN _tc_ints(ci[5]) END AS pd,
        CASE WHEN model IS DISTINCT FROM 'conv' THEN NULL
             WHEN name IN ('aten::convolution') THEN _tc_ints(ci[6])
             WHEN name IN ('aten::conv1d', 'aten::conv2d', 'aten::conv3d') THEN _tc_ints(ci[6])
             WHEN name LIKE 'aten::conv_transpose%' THEN _tc_ints(ci[8]) END AS dl,
        CASE WHEN name = 'aten::convolution' THEN _tc_true(ci[7])
             WHEN name LIKE 'aten::conv_transpose%' THEN true
             WHEN name = 'aten::convolution_backward' THEN _tc_true(ci[8])
             ELSE false END AS transposed,
        CASE WHEN model IS DISTINCT FROM 'conv' THEN NULL
             WHEN name = 'aten::convolution' THEN _tc_ints(ci[8])
             WHEN name LIKE 'aten::conv_transpose%' THEN _tc_ints(ci[6]) END AS opd,
        CASE WHEN model IS DISTINCT FROM 'conv' THEN NULL
             WHEN name = 'aten::convolution' THEN TRY_CAST(ci[9] AS BIGINT)
             WHEN name IN ('aten::conv1d', 'aten::conv2d', 'aten::conv3d') THEN TRY_CAST(ci[7] AS BIGINT)
             WHEN name LIKE 'aten::conv_transpose%' THEN TRY_CAST(ci[7] AS BIGINT) END AS groups
    FROM gemm
),
conv_out AS (  -- output spatial sizes
    SELECT *, CASE WHEN NOT conv_ok THEN NULL
                   WHEN transposed THEN
                list_transform(range(1, len(x) - 1), lambda i:
                    (x[i + 2] - 1) * _tc_at(st, i) - 2 * _tc_at(pd, i) + _tc_at(dl, i) * (w[i + 2] - 1)
                    + coalesce(_tc_at(opd, i), 0) + 1)
              ELSE
                list_transform(range(1, len(x) - 1), lambda i:
                    (x[i + 2] + 2 * _tc_at(pd, i) - _tc_at(dl, i) * (w[i + 2] - 1) - 1) // _tc_at(st, i) + 1)
              END AS osp
    FROM (SELECT *, coalesce(len(x) >= 3 AND len(w) = len(x), false) AS conv_ok FROM conv_in)
),
sdpa_in AS (  -- attention: direction, layout, causal flag
    SELECT *,
        name LIKE '%backward' AS bwd,
        name IN ('aten::_flash_attention_forward', 'aten::_efficient_attention_forward',
                 'aten::_flash_attention_backward', 'aten::_efficient_attention_backward') AS bnhd,
        CASE WHEN name LIKE '%backward' THEN 1 ELSE 0 END AS o,
        CASE WHEN model = 'sdpa' THEN CASE name
            WHEN 'aten::scaled_dot_product_attention' THEN _tc_true(ci[6])
            WHEN 'aten::_scaled_dot_product_flash_attention' THEN _tc_true(ci[5])
            WHEN 'aten::_scaled_dot_product_flash_attention_for_cpu' THEN _tc_true(ci[5])
            WHEN 'aten::_scaled_dot_product_efficient_attention' THEN _tc_true(ci[7])
            WHEN 'aten::_scaled_dot_product_cudnn_attention' THEN _tc_true(ci[7])
            WHEN 'aten::_flash_attention_forward' THEN _tc_true(ci[9])
            WHEN 'aten::_efficient_attention_forward' THEN coalesce(ci[10], '0') NOT IN ('0', '')
            WHEN 'aten::_scaled_dot_product_flash_attention_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_scaled_dot_product_flash_attention_for_cpu_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_scaled_dot_product_efficient_attention_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_scaled_dot_product_cudnn_attention_backward' THEN _tc_true(ci[15])
            WHEN 'aten::_flash_attention_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_efficient_attention_backward' THEN coalesce(ci[15], '0') NOT IN ('0', '')
        END END AS causal
    FROM conv_out
),
sdpa_dims AS (  -- q, k, v as [B, H, N, d]
    SELECT *, CASE WHEN bnhd THEN [q0[1], q0[3], q0[2], q0[4]] ELSE q0 END AS q,
              CASE WHEN bnhd THEN [k0[1], k0[3], k0[2], k0[4]] ELSE k0 END AS k,
              CASE WHEN bnhd THEN [v0[1], v0[3], v0[2], v0[4]] ELSE v0 END AS v
    FROM (SELECT *, CASE WHEN model = 'sdpa' THEN d[o + 1] END AS q0, CASE WHEN model = 'sdpa' THEN d[o + 2] END AS k0,
                    CASE WHEN model = 'sdpa' THEN d[o + 3] END AS v0 FROM sdpa_in)
),
bytes_in AS (  -- elementwise and norms: each input's bytes, and the first dtype with a size
    SELECT *,
        CASE WHEN model = 'bytes' AND len(d) = len(ty) THEN
            list_transform(range(1, len(d) + 1), lambda i: _tc_numel(d[i]) * _tc_dtype_bytes(ty[i])) END AS tb,
        CASE WHEN model = 'bytes' AND len(d) = len(ty) THEN
            list_filter(ty, lambda t: _tc_dtype_bytes(t) IS NOT NULL)[1] END AS bytes_dtype
    FROM sdpa_dims
),
shaped AS (  -- shaped: the op's model applies to its Input Dims (else only a flops argument can give it numbers)
    SELECT *, CASE model WHEN 'gemm' THEN gemm_ok
                         WHEN 'conv' THEN conv_ok
                         WHEN 'conv_bwd' THEN coalesce(len(d) >= 3 AND len(d[1]) >= 3, false)
                         WHEN 'sdpa' THEN coalesce(len(q0) = 4 AND len(k0) = 4 AND len(v0) = 4, false)
                         WHEN 'bytes' THEN coalesce(len(d) = len(ty), false)
                         ELSE false END AS shaped
    FROM bytes_in
),
mo AS MATERIALIZED (  -- one row per modelled op
    SELECT trace_id, uid, name, pid, tid, ts_ns, rank, pre, subtree_end, CAST(d AS VARCHAR) AS shapes,
        CASE WHEN NOT shaped THEN CASE WHEN prof_flops IS NOT NULL THEN 'profiler' ELSE 'inductor' END
             WHEN model = 'gemm' THEN 'gemm'
             WHEN model = 'conv' THEN 'conv_fwd'
             WHEN model = 'conv_bwd' THEN 'conv_bwd'
             WHEN model = 'sdpa' THEN CASE WHEN bwd THEN 'sdpa_bwd' ELSE 'sdpa_fwd' END
             ELSE CASE WHEN tl_cat = 'elementwise' THEN 'elementwise' ELSE 'norm' END END AS category,
        CASE WHEN NOT shaped THEN ty[1]
             WHEN model = 'gemm' THEN ta
             WHEN model IN ('conv', 'conv_bwd') THEN ty[1]
             WHEN model = 'sdpa' THEN ty[o + 1]
             ELSE bytes_dtype END AS dtype,
        CASE WHEN shaped THEN gm END AS gm, CASE WHEN shaped THEN gn END AS gn,
        CASE WHEN shaped THEN gk END AS gk, CASE WHEN shaped THEN gb END AS gb,
        CASE WHEN shaped AND model = 'sdpa' THEN causal END AS causal,
        CASE WHEN NOT shaped THEN coalesce(prof_flops, kernel_flop)::DOUBLE
             WHEN model = 'gemm' THEN 2.0 * gb * gm * gn * gk + coalesce(bias_flops, 0)
             WHEN model = 'conv' THEN
                2.0 * x[1] * (CASE WHEN transposed THEN _tc_numel(x[3:]) ELSE _tc_numel(osp) END) * _tc_numel(w)
             WHEN model = 'conv_bwd' THEN  -- grad_output d[1] = [N, Cout, out...], input d[2], weight d[3]:
                                           -- grad input + grad weight
                2.0 * 2.0 * d[2][1] * (CASE WHEN _tc_true(ci[8]) THEN _tc_numel(d[2][3:]) ELSE _tc_numel(d[1][3:]) END)
                    * _tc_numel(d[3])
             WHEN model = 'sdpa' THEN
                2.0 * q[1] * q[2] * q[3] * k[3] * (q[4] + v[4]) * (CASE WHEN causal THEN 0.5 ELSE 1 END)
                    * (CASE WHEN bwd THEN 2.5 ELSE 1 END)
             END AS flops,
        CASE WHEN NOT shaped THEN CASE WHEN kernel_num_gb IS NOT NULL THEN kernel_num_gb::DOUBLE * 1e9 END
             WHEN model = 'gemm' THEN
                (gb * gm * gk) * _tc_dtype_bytes(ta)
                + (gb * gk * gn) * _tc_dtype_bytes(coalesce(ty[CASE WHEN len(d) >= 3 AND bias IS NOT NULL
                                                                   AND name != 'aten::linear' THEN 3 ELSE 2 END], ta))
                + (gb * gm * gn) * CASE WHEN _tc_dtype_bytes(ta) = 1 THEN 2 ELSE _tc_dtype_bytes(ta) END
                + CASE WHEN bias IS NULL THEN 0 ELSE _tc_numel(bias) * _tc_dtype_bytes(ta) END
             WHEN model = 'conv' THEN
                (_tc_numel(x) + _tc_numel(w)
                 + x[1] * (CASE WHEN transposed THEN w[2] * coalesce(groups, 1) ELSE w[1] END) * _tc_numel(osp)
                )::DOUBLE * _tc_dtype_bytes(ty[1])
             WHEN model = 'conv_bwd' THEN
                (2 * _tc_numel(d[1]) + 2 * _tc_numel(d[2]) + 2 * _tc_numel(d[3]))::DOUBLE * _tc_dtype_bytes(ty[1])
             WHEN model = 'sdpa' THEN
                (CASE WHEN bwd THEN 2 ELSE 1 END) * (_tc_numel(q) + _tc_numel(k) + _tc_numel(v)
                    + (CASE WHEN bwd THEN 2 ELSE 1 END) * q[1] * q[2] * q[3] * v[4])::DOUBLE
                    * _tc_dtype_bytes(ty[o + 1])
             WHEN name = 'aten::copy_' THEN list_sum(tb[1:2])::DOUBLE
             ELSE (list_sum(tb) + list_max(tb))::DOUBLE END AS bytes,
        CASE WHEN shaped THEN 'shape' WHEN prof_flops IS NOT NULL THEN 'with_flops' ELSE 'inductor' END AS flops_source
    FROM shaped
    WHERE shaped OR prof_flops IS NOT NULL OR kernel_flop IS NOT NULL OR kernel_num_gb IS NOT NULL
),
nested AS (  -- modelled ops with another modelled op beneath them: in pre-order, the next
             -- modelled op after one lies inside its subtree exactly when it has such a descendant
    SELECT trace_id, uid FROM (
        SELECT trace_id, uid, subtree_end, lead(pre) OVER (PARTITION BY trace_id ORDER BY pre) AS next_pre
        FROM (SELECT DISTINCT trace_id, uid, pre, subtree_end FROM mo))
    WHERE next_pre <= subtree_end
),
sub AS (  -- device events launched in each modelled op's subtree (the op is on the kernel's op_path)
    SELECT k.trace_id, p.uid, k.device, k.ts_ns, k.end_ns
    FROM (SELECT trace_id, device, ts_ns, end_ns, unnest(op_path) AS ouid FROM kernels) k
    JOIN (SELECT DISTINCT trace_id, uid FROM mo) p ON p.trace_id = k.trace_id AND p.uid = k.ouid
),
busy AS (
    SELECT trace_id, uid, min(device) AS device, count(*) AS kernels, sum(c)::BIGINT AS gpu_ns
    FROM (SELECT *, _tc_union_add(ts_ns, end_ns, trace_id, uid) AS c
          FROM sub)
    GROUP BY trace_id, uid
),
r AS (
    SELECT mo.trace_id, mo.rank, b.device, mo.uid, mo.name, mo.pid, mo.tid, mo.ts_ns, mo.category,
           mo.flops_source, n.uid IS NULL AS innermost,
           mo.shapes, mo.dtype, _tc_precision(mo.dtype) AS precision,
           mo.gm AS gemm_m, mo.gn AS gemm_n, mo.gk AS gemm_k, mo.gb AS gemm_b, mo.causal,
           mo.flops, mo.bytes, mo.flops / nullif(mo.bytes, 0) AS arithmetic_intensity,
           coalesce(b.kernels, 0) AS kernels, coalesce(b.gpu_ns, 0) AS gpu_ns,
           mo.flops / nullif(b.gpu_ns, 0) / 1e3 AS achieved_tflops_per_s,
           mo.bytes / nullif(b.gpu_ns, 0) / 1e3 AS achieved_tb_per_s,
           dev.model AS device_model, CASE WHEN dev.model IS NOT NULL THEN dev.name_source END AS device_model_source,
           sp.dense_tflops_per_s AS peak_tflops_per_s, sp.mem_tb_per_s AS peak_tb_per_s
    FROM mo
    LEFT JOIN nested n ON n.trace_id = mo.trace_id AND n.uid = mo.uid
    LEFT JOIN busy b ON b.trace_id = mo.trace_id AND b.uid = mo.uid
    LEFT JOIN _device_models dev ON dev.trace_id = mo.trace_id AND dev.device = b.device
    LEFT JOIN device_specs sp ON sp.model = dev.model AND sp.dtype = _tc_precision(mo.dtype)
)
SELECT *,
       100.0 * achieved_tflops_per_s / peak_tflops_per_s AS flops_pct_of_peak,
       100.0 * achieved_tb_per_s / peak_tb_per_s AS bandwidth_pct_of_peak,
       CASE WHEN arithmetic_intensity IS NULL OR peak_tflops_per_s IS NULL THEN NULL
            WHEN arithmetic_intensity >= peak_tflops_per_s / peak_tb_per_s THEN 'compute' ELSE 'memory' END
           AS roofline_bound,
       100.0 * achieved_tflops_per_s / least(peak_tflops_per_s, arithmetic_intensity * peak_tb_per_s) AS roofline_pct,
       CASE WHEN peak_tflops_per_s IS NOT NULL OR peak_tb_per_s IS NOT NULL THEN
           coalesce(achieved_tflops_per_s > peak_tflops_per_s, false) OR coalesce(achieved_tb_per_s > peak_tb_per_s, false)
       END AS above_peak
FROM r;
