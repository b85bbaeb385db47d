-- _op_time: helper — per instance of a cpu_op, user_annotation or runtime-call slice, the host and device
-- times torch.profiler's key_averages() adds up (op_averages, op_averages_by_shape).
-- Answers: how much CPU time and device time does torch count for this one event.
-- depends: slices, events, _op_device_time
-- uses: args
-- Device time: _op_device_time (torch's rules for it are there).
-- Folding: torch's table drops an event that is its parent's only child and has its parent's name
-- (aten::sum calling aten::sum's other overload, aten::mul calling aten::mul): the parent takes
-- its children and its device events, so the child is no call of its own and adds nothing to
-- the name's CPU or device total, while its self times count under the parent (a chain of such
-- events folds into the top one). In pre-order an only child comes right after its parent, so
-- a chain is a run of consecutive pre numbers. torch also keys every ProfilerStep#N as one
-- name, ProfilerStep*.
-- Columns (one row per cpu_op, user_annotation, cuda_runtime and cuda_driver slice):
--   trace_id        INTEGER  trace
--   uid             BIGINT   the slice
--   name            VARCHAR  event name as torch's table keys it (ProfilerStep#N: ProfilerStep*)
--   cat             VARCHAR  cpu_op, user_annotation, cuda_runtime or cuda_driver
--   input_shapes    VARCHAR  Input Dims as text (null when the event has none); a folded event: its chain top's
--   input_types     VARCHAR  Input type as JSON text, e.g. ["float","Scalar"] (null when none); folded: its chain top's
--   folded          BOOLEAN  torch merges this event into its parent (see Folding): no call, CPU or device total of its own
--   dur_ns          BIGINT   ns, host wall time (torch's CPU total of one event)
--   self_ns         BIGINT   ns, dur_ns minus the children's durations (torch's self CPU)
--   self_device_ns  BIGINT   ns, sum of durations of the device events this event launched
--   device_ns       BIGINT   ns, sum of durations of the device events launched in its subtree
CREATE OR REPLACE VIEW _op_time AS
WITH folded AS (  -- only children of a parent of the same name
    SELECT c.trace_id, c.uid, c.parent_uid, c.pre
    FROM slices c JOIN slices p ON p.trace_id = c.trace_id AND p.uid = c.parent_uid
    WHERE p.n_children = 1 AND p.name = c.name AND c.cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
      AND p.cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
),
tops AS (  -- each folded event's chain top: the last unfolded event before it in its run of pre numbers
    SELECT trace_id, uid, top FROM (
        SELECT *, last_value(CASE WHEN NOT f THEN uid END IGNORE NULLS) OVER (PARTITION BY trace_id ORDER BY pre) AS top
        FROM (SELECT trace_id, uid, pre, bool_or(f) AS f FROM (
                  SELECT trace_id, uid, pre, true AS f FROM folded
                  UNION ALL SELECT trace_id, parent_uid, pre - 1, false FROM folded)
              GROUP BY ALL))
    WHERE f
),
shapes AS (  -- the arguments' text made before the join, which then carries two strings, not every
             -- event's args (4 GB: 7M ops, out of memory)
    SELECT trace_id, uid,
           -- a TensorList argument is one level deeper than events.input_dims holds: read it from args
           coalesce(CAST(input_dims AS VARCHAR),
                    regexp_replace(_tc_arg(args, 'Input Dims')::VARCHAR, ',', ', ', 'g')) AS input_shapes,
           coalesce(to_json(input_types)::VARCHAR, _tc_arg(args, 'Input type')::VARCHAR) AS input_types
    FROM events WHERE cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
),
top_shapes AS (  -- the folded events' shapes: their tops', a small join of its own (one join of every op
                 -- on coalesce(top, uid) ran out of DuckDB's memory at 4 GB)
    SELECT t.trace_id, t.uid, e.input_shapes, e.input_types FROM tops t JOIN shapes e ON e.trace_id = t.trace_id AND e.uid = t.top
)
SELECT s.trace_id, s.uid,
       CASE WHEN s.name LIKE 'ProfilerStep#%' THEN 'ProfilerStep*' ELSE s.name END AS name, s.cat,
       CASE WHEN t.uid IS NULL THEN e.input_shapes ELSE t.input_shapes END AS input_shapes,
       CASE WHEN t.uid IS NULL THEN e.input_types ELSE t.input_types END AS input_types,
       t.uid IS NOT NULL AS folded, s.dur_ns, s.self_ns,
       coalesce(d.self_device_ns, 0) AS self_device_ns, coalesce(d.device_ns, 0) AS device_ns
FROM slices s
-- grafted graph nodes other than cpu_ops have no events row (docs/graphs.md)
LEFT JOIN shapes e ON e.trace_id = s.trace_id AND e.uid = s.uid
LEFT JOIN top_shapes t ON t.trace_id = s.trace_id AND t.uid = s.uid
LEFT JOIN _op_device_time d ON d.trace_id = s.trace_id AND d.uid = s.uid
WHERE s.cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver');
