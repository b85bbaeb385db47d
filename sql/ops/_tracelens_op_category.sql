-- _tracelens_op_category: helper — TraceLens's op category of every op name in the trace.
-- Answers: which of TraceLens's categories (GEMM, CONV_fwd, SDPA_fwd, elementwise, …) an op
-- name falls into, so the TraceLens compatibility views can label rows the way it does.
-- depends: slices, _tracelens_gpu_events
-- uses: tracelens
-- tracelens_ops_summary's Categories column and the kernel summary's parent category read it.
-- Rules, first match wins:
-- 1. the names TraceLens knows (its reference outputs show them): triton… → triton,
--    record_param_comms… → record_param_comms, GEMM, CONV_fwd/bwd, NORM_fwd/bwd, SDPA_fwd/bwd,
--    InferenceAttention (KV-cache writes and paged attention of vLLM / SGLang), RMSNorm
--    (aiter's), RoPE_fwd (sgl_kernel's), reduce and elementwise lists;
-- 2. otherwise by the name's first GPU event (earliest start among the events its instances
--    launched directly, TraceLens's link and launcher rule, _tracelens_gpu_events): an ATen
--    kernel (name starts with `void at::native`) containing `elementwise` → elementwise,
--    `reduce` → reduce, `multi_tensor_apply` → multi_tensor_apply;
-- 3. else other.
-- TraceLens applies rule 2 per op instance; here it is decided once per name (instances of a
-- name that start with different kinds of kernel would be split by TraceLens). Rule 2 is the
-- macro _tc_tl_kernel_category(kernel name), which also labels the synthetic ops of
-- _tracelens_unified_ops.
-- Names: every cpu_op name, every launch call that is its own launcher, and SGLang profiler
-- op names without their numeric id suffix (as TraceLens shows them).
-- Columns:
--   name      VARCHAR  op name
--   category  VARCHAR  triton, record_param_comms, GEMM, CONV_fwd, CONV_bwd, NORM_fwd, NORM_bwd,
--                      SDPA_fwd, SDPA_bwd, InferenceAttention, RMSNorm, RoPE_fwd, reduce,
--                      elementwise, multi_tensor_apply or other
CREATE OR REPLACE VIEW _tracelens_op_category AS
WITH names AS (
    SELECT name FROM slices WHERE cat = 'cpu_op'
    UNION
    SELECT s.name FROM slices s
    JOIN (SELECT DISTINCT trace_id, launcher_uid FROM _tracelens_gpu_events) g
      ON g.trace_id = s.trace_id AND g.launcher_uid = s.uid
    UNION
    SELECT _tc_tl_name(name) FROM slices
    WHERE cat = 'cpu_op' AND name LIKE 'sglang\_profiler::%' ESCAPE '\'
),
first_kernel AS (  -- per launcher name, its earliest directly launched GPU event
    SELECT s.name, arg_min(g.name, (g.ts_ns, g.trace_id, g.uid)) AS kname
    FROM _tracelens_gpu_events g JOIN slices s ON s.trace_id = g.trace_id AND s.uid = g.launcher_uid
    GROUP BY s.name
),
by_name AS (
    SELECT name, CASE
        WHEN name LIKE 'triton%' THEN 'triton'
        WHEN name LIKE 'record\_param\_comms%' ESCAPE '\' THEN 'record_param_comms'
        WHEN name IN ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm', 'aten::matmul',
                      'aten::_scaled_mm', 'aten::_int_mm', 'aten::addbmm', 'aten::_addmm_activation',
                      'aiter::gemm_a16w16', 'vllm::rocm_unquantized_gemm') THEN 'GEMM'
        WHEN regexp_matches(name, '^aten::(cudnn_|miopen_|mkldnn_|_)?convolution(_transpose)?_backward') THEN 'CONV_bwd'
        WHEN regexp_matches(name, '^aten::(cudnn_|miopen_|mkldnn_|_)?(convolution|conv[123]d|conv_transpose[123]d)')
             THEN 'CONV_fwd'
        WHEN regexp_matches(name, '^aten::(native_|miopen_|cudnn_|_fused_|_native_)?(batch|layer|group|instance|rms)_norm(_with_update)?_backward')
             THEN 'NORM_bwd'
        WHEN regexp_matches(name, '^aten::(native_|miopen_|cudnn_|_fused_|_native_)?(batch|layer|group|instance|rms)_norm')
             THEN 'NORM_fwd'
        WHEN regexp_matches(name, '^aten::_scaled_dot_product_\w*attention\w*_backward') THEN 'SDPA_bwd'
        WHEN regexp_matches(name, '^aten::_scaled_dot_product_\w*attention') THEN 'SDPA_fwd'
        WHEN name IN ('vllm::unified_attention_with_output', '_C_cache_ops::reshape_and_cache_flash',
                      'sglang::store_cache', 'sglang_profiler::attention_paged_attention_ragged')
             THEN 'InferenceAttention'
        WHEN name IN ('aiter::rms_norm', 'aiter::rmsnorm', 'aiter::add_rmsnorm', 'aiter::rmsnorm2d_fwd_with_add_ck')
             THEN 'RMSNorm'
        WHEN name = 'sgl_kernel::rotary_embedding' THEN 'RoPE_fwd'
        WHEN name IN ('aten::sum', 'aten::mean', 'aten::all', 'aten::any', 'aten::argmax', 'aten::argmin',
                      'aten::max', 'aten::min', 'aten::amax', 'aten::amin', 'aten::linalg_vector_norm', 'aten::linalg_norm',
                      'aten::norm', 'aten::prod', 'aten::var', 'aten::std', 'aten::var_mean',
                      'aten::std_mean', 'aten::logsumexp', 'aten::cumsum') THEN 'reduce'
        WHEN name IN ('aten::add', 'aten::add_', 'aten::sub', 'aten::sub_', 'aten::mul', 'aten::mul_',
                      'aten::div', 'aten::div_', 'aten::copy_', 'aten::fill_', 'aten::zero_', 'aten::neg',
                      'aten::exp', 'aten::log', 'aten::pow', 'aten::sqrt', 'aten::rsqrt', 'aten::sin',
                      'aten::cos', 'aten::tanh', 'aten::sigmoid', 'aten::silu', 'aten::gelu', 'aten::relu',
                      'aten::relu_', 'aten::elu', 'aten::eq', 'aten::ne', 'aten::gt', 'aten::ge', 'aten::lt',
                      'aten::le', 'aten::where', 'aten::masked_fill_', 'aten::normal_',
                      'aten::mse_loss', 'aten::mse_loss_backward', 'aten::upsample_nearest1d',
                      'aten::clamp', 'aten::clamp_', 'aten::abs', 'aten::threshold_backward',
                      'aten::gelu_backward', 'aten::silu_backward', 'aten::sigmoid_backward',
                      'aten::tanh_backward', 'aten::addcmul_', 'aten::addcdiv_', 'aten::lerp_',
                      'sgl_kernel::silu_and_mul') THEN 'elementwise'
        END AS category
    FROM names
)
SELECT b.name, coalesce(b.category, _tc_tl_kernel_category(f.kname), 'other') AS category
FROM by_name b LEFT JOIN first_kernel f ON f.name = b.name
ORDER BY b.name;  -- one row a name: the same order however the query's threads ran
