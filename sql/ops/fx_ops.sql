-- fx_ops: every CPU op instance inside torch.compile's FX markers, with its marker and GPU time.
-- Answers: which FX node of which compiled graph file did this op (and its kernels) come from?
-- depends: op_gpu_time, fx_marks
-- fx_marks (a base table, tracecols/model/fx.py) holds, for every slice and kernel that lies
-- inside a `## path.py ##` and/or `## N ##` marker slice on the same thread, the innermost such
-- markers. Group this view by fx_file, fx_node to get per-node op tables.
-- Columns: every column of op_gpu_time, plus
--   fx_file   VARCHAR  path inside the innermost enclosing `## path.py ##` marker (null if none)
--   fx_node   BIGINT   N of the innermost enclosing `## N ##` marker (null if none)
CREATE OR REPLACE VIEW fx_ops AS
SELECT g.*, m.fx_file, m.fx_node
FROM op_gpu_time g
JOIN fx_marks m ON m.trace_id = g.trace_id AND m.uid = g.uid AND m.kind = 'slice';
