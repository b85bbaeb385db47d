-- _op_device_time: helper — per cpu_op and user_annotation slice that device work reaches, the
-- device time torch.profiler's key_averages() gives it (for _op_time).
-- Answers: how much device time does torch count for this one event, its own and its subtree's.
-- depends: slices, kernels
-- Device time follows torch's FunctionEvent: a device event's duration counts as *self* device
-- time of the one event that launched it and as device time of that event and of every event
-- above it (torch: own kernels + the children's device totals). The launcher is the nearest
-- cpu_op above the launch call (kernels.op_uid); a device event with no cpu_op above its launch
-- call belongs to the innermost user_annotation around the launch call, if any. Runtime calls
-- (cudaLaunchKernel, …) get no device time, as in torch's table. Subtree
-- membership of cpu_ops comes from kernels.op_path (an equality join); that of user annotations
-- from the launch call's pre-order number (a graph-replayed kernel's: that of the grafted op it
-- belongs to, docs/graphs.md), in one sweep over the pre-order with the annotations' starts and
-- ends (no join: a join of device events with the annotations around them was quadratic on
-- traces of many annotations). Durations are summed,
-- not united (torch adds kernel durations; overlapping kernels count twice).
-- A view of its own, not a step of _op_time: with these steps held in memory while _op_time
-- joined every op with its event, DuckDB ran out of its memory on a 1 GB trace.
-- Columns (one row per event with device time):
--   trace_id        INTEGER  trace
--   uid             BIGINT   the event (a cpu_op or user_annotation slice)
--   self_device_ns  BIGINT   ns, sum of durations of the device events it launched
--   device_ns       BIGINT   ns, sum of durations of the device events launched in its subtree
CREATE OR REPLACE VIEW _op_device_time AS
WITH kl AS (  -- device events with a launch call in the tree, placed at the deeper of the launch call
         -- and their op: a graph-replayed kernel's op is grafted beneath its graph launch
    SELECT k.trace_id, k.uid AS kuid, k.dur_ns, k.op_uid, k.op_path, greatest(l.pre, o.pre) AS lpre
    FROM kernels k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid
    LEFT JOIN slices o ON o.trace_id = k.trace_id AND o.uid = k.op_uid
),
marks AS (  -- one pre-order stream: annotation starts (+1, key 2·pre+1) and ends (-1, key
            -- 2·subtree_end+1), device events (0, key 2·lpre): an event lies inside an
            -- annotation exactly when the annotation's start and not its end come before it
    SELECT trace_id, 2 * pre + 1 AS k, 1 AS delta, uid, NULL::BIGINT AS dur_ns, NULL::BIGINT AS op_uid
    FROM slices WHERE cat = 'user_annotation'
    UNION ALL SELECT trace_id, 2 * subtree_end + 1, -1, uid, NULL, NULL FROM slices WHERE cat = 'user_annotation'
    UNION ALL SELECT trace_id, 2 * lpre, 0, NULL, dur_ns, op_uid FROM kl
),
swept AS (  -- level: annotations open after each mark; under: device time of the events so far
    SELECT *, sum(delta) OVER w AS level, coalesce(sum(dur_ns) OVER w, 0) AS under
    FROM marks WINDOW w AS (PARTITION BY trace_id ORDER BY k, delta DESC ROWS UNBOUNDED PRECEDING)
),
innermost AS (  -- annotations nest: the innermost one around an event is the last start before it at its level
    SELECT trace_id, dur_ns, last_value(uid IGNORE NULLS) OVER (PARTITION BY trace_id, level ORDER BY k
                                                              ROWS UNBOUNDED PRECEDING) AS ouid, delta
    FROM swept WHERE delta >= 0 AND (delta = 1 OR op_uid IS NULL)
),
per AS (
    SELECT trace_id, op_uid AS ouid, sum(dur_ns) AS self_dev, 0 AS dev FROM kl WHERE op_uid IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT trace_id, ouid, 0, sum(dur_ns) FROM (SELECT trace_id, unnest(op_path) AS ouid, dur_ns FROM kl) GROUP BY ALL
    UNION ALL  -- an annotation's device time: the events between its start and its end
    SELECT trace_id, uid, 0, sum(CASE WHEN delta = 1 THEN -under ELSE under END)
    FROM swept WHERE delta != 0 GROUP BY ALL
    UNION ALL  -- its self device time: the events without a cpu_op whose innermost annotation it is
    SELECT trace_id, ouid, sum(dur_ns), 0 FROM innermost WHERE delta = 0 AND ouid IS NOT NULL GROUP BY ALL
)
SELECT trace_id, ouid AS uid, coalesce(sum(self_dev), 0)::BIGINT AS self_device_ns,
       coalesce(sum(dev), 0)::BIGINT AS device_ns
FROM per GROUP BY ALL;
