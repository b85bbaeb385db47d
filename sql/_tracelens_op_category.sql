-- _tracelens_op_category: helper — TraceLens's op category of every cpu_op name in the trace.
-- Answers: which of TraceLens's categories (GEMM, CONV_fwd, SDPA_fwd, elementwise, …) an op
-- name falls into, so the TraceLens compatibility views can label rows the way it does.
-- depends: slices
-- tracelens_ops_summary's Categories column and the kernel summary's parent category read it.
-- Columns:
--   name      VARCHAR  cpu_op name
--   category  VARCHAR  triton, GEMM, CONV_fwd, CONV_bwd, NORM_fwd, NORM_bwd, SDPA_fwd, SDPA_bwd,
--                      reduce, elementwise or other
CREATE OR REPLACE VIEW _tracelens_op_category AS
SELECT name, CASE
    WHEN name LIKE 'triton\_%' ESCAPE '\' THEN 'triton'
    WHEN name IN ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm', 'aten::matmul',
                  'aten::_scaled_mm', 'aten::_int_mm', 'aten::addbmm', 'aten::_addmm_activation') THEN 'GEMM'
    WHEN regexp_matches(name, '^aten::(cudnn_|miopen_|mkldnn_|_)?convolution(_transpose)?_backward') THEN 'CONV_bwd'
    WHEN regexp_matches(name, '^aten::(cudnn_|miopen_|mkldnn_|_)?(convolution|conv[123]d|conv_transpose[123]d)')
         THEN 'CONV_fwd'
    WHEN regexp_matches(name, '^aten::(native_|miopen_|cudnn_|_fused_|_native_)?(batch|layer|group|rms)_norm(_with_update)?_backward')
         THEN 'NORM_bwd'
    WHEN regexp_matches(name, '^aten::(native_|miopen_|cudnn_|_fused_|_native_)?(batch|layer|group|rms)_norm')
         THEN 'NORM_fwd'
    WHEN regexp_matches(name, '^aten::_scaled_dot_product_\w*attention\w*_backward') THEN 'SDPA_bwd'
    WHEN regexp_matches(name, '^aten::_scaled_dot_product_\w*attention') THEN 'SDPA_fwd'
    WHEN name IN ('aten::sum', 'aten::mean', 'aten::all', 'aten::any', 'aten::argmax', 'aten::argmin',
                  'aten::max', 'aten::min', 'aten::amax', 'aten::amin', 'aten::linalg_vector_norm',
                  'aten::norm', 'aten::prod', 'aten::var', 'aten::std', 'aten::var_mean',
                  'aten::std_mean', 'aten::logsumexp') THEN 'reduce'
    WHEN name IN ('aten::add', 'aten::add_', 'aten::sub', 'aten::sub_', 'aten::mul', 'aten::mul_',
                  'aten::div', 'aten::div_', 'aten::copy_', 'aten::fill_', 'aten::zero_', 'aten::neg',
                  'aten::exp', 'aten::log', 'aten::pow', 'aten::sqrt', 'aten::rsqrt', 'aten::sin',
                  'aten::cos', 'aten::tanh', 'aten::sigmoid', 'aten::silu', 'aten::gelu', 'aten::relu',
                  'aten::relu_', 'aten::elu', 'aten::eq', 'aten::ne', 'aten::gt', 'aten::ge', 'aten::lt',
                  'aten::le', 'aten::where', 'aten::masked_fill_', 'aten::index', 'aten::normal_',
                  'aten::mse_loss', 'aten::mse_loss_backward', 'aten::upsample_nearest1d',
                  'aten::clamp', 'aten::clamp_', 'aten::abs', 'aten::threshold_backward',
                  'aten::gelu_backward', 'aten::silu_backward', 'aten::sigmoid_backward',
                  'aten::tanh_backward', 'aten::addcmul_', 'aten::addcdiv_', 'aten::lerp_') THEN 'elementwise'
    ELSE 'other' END AS category
FROM (SELECT DISTINCT name FROM slices WHERE cat = 'cpu_op');
