-- _op_time: helper — per instance of a cpu_op, user_annotation or runtime-call slice, the host and device
-- times torch.profiler's key_averages() adds up (op_averages, op_averages_by_shape).
-- Answers: how much CPU time and device time does torch count for this one event.
-- depends: slices, kernels
-- Device time follows torch's FunctionEvent: a device event's duration counts as *self* device
-- time of the one event that launched it and as device time of that event and of every event
-- above it (torch: own kernels + the children's device totals). The launcher is the nearest
-- cpu_op above the launch call (kernels.op_uid); a device event with no cpu_op above its launch
-- call belongs to the innermost user_annotation around the launch call, if any. Runtime calls
-- (cudaLaunchKernel, …) get no device time, as in torch's table. Subtree
-- membership of cpu_ops comes from kernels.op_path (an equality join); user annotations are
-- few, so theirs is a range join on the launch call's pre-order number (a graph-replayed kernel's:
-- that of the grafted op it belongs to, docs/graphs.md). Durations are summed,
-- not united (torch adds kernel durations; overlapping kernels count twice).
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
    SELECT s.trace_id, s.uid, s.name, s.cat, s.pre, s.subtree_end, s.dur_ns, s.self_ns,
           -- a TensorList argument is one level deeper than events.input_dims holds: read it from args
           coalesce(CAST(e.input_dims AS VARCHAR),
                    regexp_replace(json_extract(e.args, '$."Input Dims"')::VARCHAR, ',', ', ', 'g')) AS input_shapes,
           coalesce(to_json(e.input_types)::VARCHAR, json_extract(e.args, '$."Input type"')::VARCHAR) AS input_types
    -- grafted graph nodes other than cpu_ops have no events row (docs/graphs.md)
    FROM slices s LEFT JOIN events e ON e.trace_id = s.trace_id AND e.uid = s.uid
    WHERE s.cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
),
ann AS (
    SELECT trace_id, uid, pre, subtree_end FROM ev WHERE cat = 'user_annotation'
),
kl AS (  -- device events with a launch call in the tree, placed at the deeper of the launch call
         -- and their op: a graph-replayed kernel's op is grafted beneath its graph launch
    SELECT k.trace_id, k.uid AS kuid, k.dur_ns, k.op_uid, k.op_path, greatest(l.pre, o.pre) AS lpre
    FROM kernels k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid
    LEFT JOIN slices o ON o.trace_id = k.trace_id AND o.uid = k.op_uid
),
in_ann AS (  -- each device event under each annotation around its launch call
    SELECT kl.trace_id, a.uid AS ouid, kl.dur_ns, kl.op_uid, a.pre,
           max(a.pre) OVER (PARTITION BY kl.trace_id, kl.kuid) AS inner_pre
    FROM kl JOIN ann a ON a.trace_id = kl.trace_id AND a.pre < kl.lpre AND kl.lpre <= a.subtree_end
),
per AS (
    SELECT trace_id, op_uid AS ouid, sum(dur_ns) AS self_dev, 0 AS dev FROM kl WHERE op_uid IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT trace_id, ouid, 0, sum(dur_ns) FROM (SELECT trace_id, unnest(op_path) AS ouid, dur_ns FROM kl) GROUP BY ALL
    UNION ALL
    SELECT trace_id, ouid, sum(dur_ns) FILTER (WHERE op_uid IS NULL AND pre = inner_pre), sum(dur_ns)
    FROM in_ann GROUP BY ALL
),
dev AS (
    SELECT trace_id, ouid, coalesce(sum(self_dev), 0) AS self_dev, coalesce(sum(dev), 0) AS dev FROM per GROUP BY ALL
)
SELECT ev.trace_id, ev.uid, ev.name, ev.cat, ev.input_shapes, ev.input_types, ev.dur_ns, ev.self_ns,
       coalesce(d.self_dev, 0)::BIGINT AS self_device_ns, coalesce(d.dev, 0)::BIGINT AS device_ns
FROM ev LEFT JOIN dev d ON d.trace_id = ev.trace_id AND d.ouid = ev.uid;
