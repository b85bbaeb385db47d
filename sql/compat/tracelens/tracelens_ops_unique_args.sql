-- tracelens_ops_unique_args: TraceLens's ops_unique_args.csv — kernel launchers grouped by name
-- and call arguments, with the statistics of their direct and subtree GPU times.
-- Answers, for people coming from TraceLens: which argument sets of a launcher op own the GPU
-- time, in TraceLens's columns and units.
-- depends: _tracelens_launcher_time, _tracelens_op_category, _tracelens_thread_names, _tracelens_arg_text
-- Launchers and their times: _tracelens_launcher_time (the rules of tracelens_ops_summary, so
-- that summing operation_count by name gives its Count). Rows group by name, op category,
-- host process and thread, and the four argument lists exactly as recorded; the lists are
-- written as TraceLens prints them, Python tuples: ((512,), (141, 512)), ('c10::BFloat16', ''),
-- TensorList arguments (kept in events.args, not in input_dims) as tuples of tuples
-- (_tracelens_arg_text; _tracelens_thread_names gives the process and thread names).
-- A launcher without argument lists (a launch call that launches for itself) has them null.
-- Not reproduced: kernel_details_summary / trunc_kernel_details (ops_unique_args gives the
-- kernel names), and the inference reports' parent_module, num_kernels and call_stack columns
-- (summed over those two, their rows agree with these).
-- Columns (one row per group, sorted by total_direct_kernel_time_sum, descending):
--   trace_id                          INTEGER  trace (TraceLens has one trace per file)
--   name                              VARCHAR  launcher name
--   "op category"                     VARCHAR  TraceLens's category of the name (_tracelens_op_category; else other)
--   process_name, process_label, thread_name VARCHAR  the host process's and thread's names from the trace's metadata events
--                                              ('Unknown' where the trace names none, as TraceLens prints it)
--   "Input Dims", "Input type", "Input Strides", "Concrete Inputs" VARCHAR  the argument lists as Python tuple text
--   operation_count                   BIGINT   launcher instances in the group
--   total_direct_kernel_time_mean, total_subtree_kernel_time_mean DOUBLE  µs, mean over instances of the direct / subtree busy time
--   total_direct_kernel_time_median, total_subtree_kernel_time_median DOUBLE  µs, median
--   total_direct_kernel_time_std, total_subtree_kernel_time_std DOUBLE  µs, sample standard deviation (n − 1; null for one instance)
--   total_direct_kernel_time_min, total_subtree_kernel_time_min DOUBLE  µs, smallest
--   total_direct_kernel_time_max, total_subtree_kernel_time_max DOUBLE  µs, largest
--   total_direct_kernel_time_sum, total_subtree_kernel_time_sum DOUBLE  µs, sum
--   ex_UID                            BIGINT   uid of the group's first instance in pre-order (tracecols's uid, not TraceLens's)
--   "Percentage (%)"                  DOUBLE   % (0–100), direct sum / the trace's total direct sum
--   "Cumulative Percentage (%)"       DOUBLE   % (0–100), running sum of the previous column in row order
CREATE OR REPLACE VIEW tracelens_ops_unique_args AS
WITH inst AS (
    SELECT l.*, coalesce(c.category, 'other') AS op_category, a.dims, a.types, a.strides, a.concrete
    FROM _tracelens_launcher_time l
    LEFT JOIN _tracelens_arg_text a ON a.trace_id = l.trace_id AND a.uid = l.uid  -- a grafted launch call has none
    LEFT JOIN _tracelens_op_category c ON c.name = l.name
),
grp AS (
    SELECT trace_id, name, op_category, pid, tid, dims, types, strides, concrete,
           count(*) AS operation_count,
           avg(direct_ns) / 1e3 AS dmean, avg(subtree_ns) / 1e3 AS smean,
           quantile_cont(direct_ns, 0.5) / 1e3 AS dmed, quantile_cont(subtree_ns, 0.5) / 1e3 AS smed,
           stddev_samp(direct_ns) / 1e3 AS dstd, stddev_samp(subtree_ns) / 1e3 AS sstd,
           min(direct_ns) / 1e3 AS dmin, min(subtree_ns) / 1e3 AS smin,
           max(direct_ns) / 1e3 AS dmax, max(subtree_ns) / 1e3 AS smax,
           sum(direct_ns) / 1e3 AS dsum, sum(subtree_ns) / 1e3 AS ssum,
           arg_min(uid, pre) AS ex_uid
    FROM inst GROUP BY ALL
)
SELECT g.trace_id, g.name, g.op_category AS "op category",
       coalesce(pn.v, 'Unknown') AS process_name, coalesce(pl.v, 'Unknown') AS process_label,
       coalesce(tn.v, 'Unknown') AS thread_name,
       g.dims AS "Input Dims", g.types AS "Input type", g.strides AS "Input Strides", g.concrete AS "Concrete Inputs",
       g.operation_count,
       g.dmean AS total_direct_kernel_time_mean, g.smean AS total_subtree_kernel_time_mean,
       g.dmed AS total_direct_kernel_time_median, g.smed AS total_subtree_kernel_time_median,
       g.dstd AS total_direct_kernel_time_std, g.sstd AS total_subtree_kernel_time_std,
       g.dmin AS total_direct_kernel_time_min, g.smin AS total_subtree_kernel_time_min,
       g.dmax AS total_direct_kernel_time_max, g.smax AS total_subtree_kernel_time_max,
       g.dsum AS total_direct_kernel_time_sum, g.ssum AS total_subtree_kernel_time_sum,
       g.ex_uid AS "ex_UID",
       100.0 * g.dsum / nullif(sum(g.dsum) OVER (PARTITION BY g.trace_id), 0) AS "Percentage (%)",
       100.0 * sum(g.dsum) OVER (PARTITION BY g.trace_id ORDER BY g.dsum DESC, g.ex_uid ROWS UNBOUNDED PRECEDING)
           / nullif(sum(g.dsum) OVER (PARTITION BY g.trace_id), 0) AS "Cumulative Percentage (%)"
FROM grp g
LEFT JOIN _tracelens_thread_names pn ON pn.trace_id = g.trace_id AND pn.pid = g.pid AND pn.name = 'process_name'
LEFT JOIN _tracelens_thread_names pl ON pl.trace_id = g.trace_id AND pl.pid = g.pid AND pl.name = 'process_labels'
LEFT JOIN _tracelens_thread_names tn ON tn.trace_id = g.trace_id AND tn.pid = g.pid AND tn.tid = g.tid AND tn.name = 'thread_name'
ORDER BY g.trace_id, g.dsum DESC, g.ex_uid;
