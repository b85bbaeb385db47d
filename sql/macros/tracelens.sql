-- tracelens: TraceLens's naming and classification rules, as macros.
-- _tc_tl_name(name): an op name as TraceLens shows it, for every tracelens_* view: SGLang
-- profiler ops lose their numeric id suffix (sglang_profiler::attention_paged_attention_ragged_100).
-- _tc_tl_kernel_category(kernel name): rule 2 of _tracelens_op_category, the category of an op
--   by the first GPU event it launched (elementwise, reduce, multi_tensor_apply; null otherwise).
-- _tc_tl_has_perf_model(op name): rule 1 of _tracelens_unified_ops, whether TraceLens has a
--   performance model for the op (its walk down the host tree stops there).
CREATE OR REPLACE MACRO _tc_tl_name(n) AS regexp_replace(n, '^(sglang_profiler::.*)_\d+$', '\1');
CREATE OR REPLACE MACRO _tc_tl_kernel_category(k) AS CASE
    WHEN k NOT LIKE 'void at::native%' THEN NULL
    WHEN k LIKE '%elementwise%' THEN 'elementwise'
    WHEN k LIKE '%reduce%' THEN 'reduce'
    WHEN k LIKE '%multi\_tensor\_apply%' ESCAPE '\' THEN 'multi_tensor_apply'
    END;
CREATE OR REPLACE MACRO _tc_tl_has_perf_model(n) AS
    n IN ('aten::mm', 'aten::addmm', 'aten::_scaled_mm', 'aten::bmm', 'aten::baddbmm',
          'aten::_scaled_dot_product_cudnn_attention', 'aten::_scaled_dot_product_efficient_attention',
          'aten::_scaled_dot_product_flash_attention', 'aten::convolution', 'aten::convolution_backward',
          'flash_attn::_flash_attn_forward', 'flash_attn::_flash_attn_backward',
          'flash_attn::_flash_attn_varlen_forward', 'flash_attn::_flash_attn_varlen_backward',
          'aten::copy', 'aten::copy_', 'aten::clamp_min', 'aten::clamp_min_', 'aten::clamp_max',
          'aten::clamp_max_', 'aten::sigmoid', 'aten::rsqrt', 'aten::silu', 'aten::neg', 'aten::pow',
          'aten::div', 'aten::div_', 'aten::mul', 'aten::mul_', 'aten::add', 'aten::add_',
          'aten::sigmoid_backward', 'aten::threshold_backward', 'aten::upsample_nearest1d',
          'aten::sum', 'aten::mean', 'aten::max', 'aten::min', 'aten::norm', 'aten::linalg_norm',
          'aten::std', 'aten::var', 'aten::logsumexp', 'aten::cumsum', 'aten::cumprod', 'aten::amin', 'aten::amax',
          'aiter::gemm_a16w16', 'aiter::rms_norm', 'aiter::rmsnorm', 'aiter::add_rmsnorm',
          'aiter::rmsnorm2d_fwd_with_add_ck', 'vllm::rocm_unquantized_gemm', 'vllm::unified_attention_with_output',
          'sgl_kernel::silu_and_mul', 'sgl_kernel::rotary_embedding', 'sglang::store_cache',
          'sglang_profiler::attention_paged_attention_ragged')
    OR n IN ('aten::_fused_rms_norm', 'aten::_fused_rms_norm_backward')
    OR regexp_matches(n, '^aten::(native_|miopen_|cudnn_)?((batch|layer|group|instance)_norm(_backward)?|rms_norm_backward)$')
    OR regexp_matches(n, '^triton_(poi|red|per)_fused_.*[A-Za-z]');
