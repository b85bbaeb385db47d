-- ops_unique_args: CPU ops grouped by name and exact call arguments (input dims, types, strides,
-- concrete inputs), with the device time of the kernels launched beneath them.
-- Answers: which argument sets of an op are called how often and cost how much device time,
-- and which kernels ran for them.
-- depends: op_gpu_time, events, kernels
-- uses: args
-- Every cpu_op counts, with or without device events (TraceLens's table of the same name keeps
-- only kernel launchers and groups by its launcher rules: tracelens_ops_unique_args). Nested
-- ops each count: an aten::linear row and the aten::addmm row beneath it both hold the GEMM's
-- kernel. The argument lists are the recorded ones as text: dims and strides as op_perf writes shapes,
-- the string lists as JSON, so that every element is quoted (null when the op has none).
-- Columns (one row per trace, name and argument set, sorted by busy time, descending):
--   trace_id          INTEGER   trace
--   name              VARCHAR   op name
--   input_dims        VARCHAR   Input Dims as text, e.g. [[141, 512], [512, 512]]
--   input_types       VARCHAR   Input type as JSON text, e.g. ["c10::BFloat16","Scalar"]
--   input_strides     VARCHAR   Input Strides as text
--   concrete_inputs   VARCHAR   Concrete Inputs as JSON text, e.g. ["","1"]
--   count             BIGINT    number of op instances
--   kernels           BIGINT    device events launched in the instances' subtrees
--   kernel_sum_ns     BIGINT    ns, sum of those events' durations
--   busy_ns           BIGINT    ns, sum over instances of the busy time (union) of their subtree's device events
--   mean_busy_ns      DOUBLE    ns, busy_ns / count
--   kernel_names      VARCHAR[] the distinct names of those device events, sorted
CREATE OR REPLACE VIEW ops_unique_args AS
WITH inst AS (
    SELECT o.trace_id, o.uid, o.name, o.subtree_kernels, o.subtree_kernel_sum_ns, o.subtree_busy_ns,
           -- a TensorList argument is one level deeper than events.input_dims holds: read it from args
           coalesce(CAST(e.input_dims AS VARCHAR),
                    regexp_replace(_tc_arg(e.args, 'Input Dims')::VARCHAR, ',', ', ', 'g')) AS input_dims,
           coalesce(to_json(e.input_types)::VARCHAR, _tc_arg(e.args, 'Input type')::VARCHAR) AS input_types,
           coalesce(CAST(e.input_strides AS VARCHAR),
                    regexp_replace(_tc_arg(e.args, 'Input Strides')::VARCHAR, ',', ', ', 'g')) AS input_strides,
           coalesce(to_json(e.concrete_inputs)::VARCHAR,
                    _tc_arg(e.args, 'Concrete Inputs')::VARCHAR) AS concrete_inputs
    FROM op_gpu_time o JOIN events e ON e.trace_id = o.trace_id AND e.uid = o.uid
),
kn AS (  -- the name of every device event under each op (the op is on its op_path)
    SELECT trace_id, unnest(op_path) AS ouid, name FROM kernels WHERE op_path IS NOT NULL
),
names AS (
    SELECT i.trace_id, i.name, i.input_dims, i.input_types, i.input_strides, i.concrete_inputs,
           list_sort(list(DISTINCT kn.name)) AS kernel_names
    FROM inst i JOIN kn ON kn.trace_id = i.trace_id AND kn.ouid = i.uid
    GROUP BY ALL
),
grp AS (
    SELECT trace_id, name, input_dims, input_types, input_strides, concrete_inputs,
           count(*)::BIGINT AS count, sum(subtree_kernels)::BIGINT AS kernels,
           sum(subtree_kernel_sum_ns)::BIGINT AS kernel_sum_ns, sum(subtree_busy_ns)::BIGINT AS busy_ns,
           avg(subtree_busy_ns) AS mean_busy_ns
    FROM inst GROUP BY ALL
)
SELECT g.*, coalesce(n.kernel_names, []::VARCHAR[]) AS kernel_names
FROM grp g LEFT JOIN names n
  ON n.trace_id = g.trace_id AND n.name = g.name AND n.input_dims IS NOT DISTINCT FROM g.input_dims
 AND n.input_types IS NOT DISTINCT FROM g.input_types AND n.input_strides IS NOT DISTINCT FROM g.input_strides
 AND n.concrete_inputs IS NOT DISTINCT FROM g.concrete_inputs
ORDER BY g.trace_id, g.busy_ns DESC, g.name, g.input_dims, g.input_types, g.input_strides, g.concrete_inputs;
