-- _op_time: helper — per instance of a cpu_op, user_annotation or runtime-call slice, the host and device
-- times torch.profiler's key_averages() adds up (op_averages, op_averages_by_shape).
-- Answers: how much CPU time and device time does torch count for this one event.
-- depends: slices, events, _op_device_time
-- Device time: _op_device_time (torch's rules for it are there).
-- Columns (one row per cpu_op, user_annotation, cuda_runtime and cuda_driver slice):
--   trace_id        INTEGER  trace
--   uid             BIGINT   the slice
--   name            VARCHAR  event name
--   cat             VARCHAR  cpu_op, user_annotation, cuda_runtime or cuda_driver
--   input_shapes    VARCHAR  Input Dims as text (null when the event has none)
--   input_types     VARCHAR  Input type as JSON text, e.g. ["float","Scalar"] (null when the event has none)
--   dur_ns          BIGINT   ns, host wall time (torch's CPU total of one event)
--   self_ns         BIGINT   ns, dur_ns minus the children's durations (torch's self CPU)
--   self_device_ns  BIGINT   ns, sum of durations of the device events this event launched
--   device_ns       BIGINT   ns, sum of durations of the device events launched in its subtree
CREATE OR REPLACE VIEW _op_time AS
WITH ev AS (
    SELECT s.trace_id, s.uid, s.name, s.cat, s.dur_ns, s.self_ns, e.input_shapes, e.input_types
    -- grafted graph nodes other than cpu_ops have no events row (docs/graphs.md)
    FROM slices s LEFT JOIN (  -- the arguments' text made before the join, which then carries
                               -- two strings, not every event's args (4 GB: 7M ops, out of memory)
        SELECT trace_id, uid,
               -- a TensorList argument is one level deeper than events.input_dims holds: read it from args
               coalesce(CAST(input_dims AS VARCHAR),
                        regexp_replace(json_extract(args, '$."Input Dims"')::VARCHAR, ',', ', ', 'g')) AS input_shapes,
               coalesce(to_json(input_types)::VARCHAR, json_extract(args, '$."Input type"')::VARCHAR) AS input_types
        FROM events WHERE cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
    ) e ON e.trace_id = s.trace_id AND e.uid = s.uid
    WHERE s.cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
)
SELECT ev.trace_id, ev.uid, ev.name, ev.cat, ev.input_shapes, ev.input_types, ev.dur_ns, ev.self_ns,
       coalesce(d.self_device_ns, 0) AS self_device_ns, coalesce(d.device_ns, 0) AS device_ns
FROM ev LEFT JOIN _op_device_time d ON d.trace_id = ev.trace_id AND d.uid = ev.uid;
