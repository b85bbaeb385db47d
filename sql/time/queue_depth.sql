-- queue_depth: launched-but-not-started device work of every stream, over time.
-- Answers: how far ahead of the device is the host running — is the launch queue full
-- (device-bound) or draining to zero (host-bound)?
-- depends: kernels, traces
-- Rule (HTA's queue length): per (trace_id, device, stream), +1 at the start of the launch
-- call of each device event (kernel, memcpy, memset; a graph launch counts once per event
-- it launched), -1 at the start of the device event; queue_depth is the running sum. Only
-- device events linked to a launch call count. At equal times a start is counted before a
-- launch.
-- Columns (two rows per linked device event):
--   trace_id     INTEGER  trace
--   rank         INTEGER  rank (null when unknown)
--   device       BIGINT   device id
--   stream       BIGINT   stream id
--   ts_ns        BIGINT   ns, time of the change
--   kind         VARCHAR  'launch' (+1) or 'start' (-1)
--   uid          BIGINT   the device event
--   launch_uid   BIGINT   its launch call
--   delta        INTEGER  +1 or -1
--   queue_depth  BIGINT   events launched and not yet started on the stream, after this change
CREATE OR REPLACE VIEW queue_depth AS
WITH ch AS (
    SELECT trace_id, device, stream, launch_ts_ns AS ts_ns, 'launch' AS kind, uid, launch_uid, 1 AS delta
    FROM kernels WHERE launch_uid IS NOT NULL
    UNION ALL
    SELECT trace_id, device, stream, ts_ns, 'start', uid, launch_uid, -1
    FROM kernels WHERE launch_uid IS NOT NULL
)
SELECT ch.trace_id, t.rank, device, stream, ts_ns, kind, uid, launch_uid, delta,
       sum(delta) OVER (PARTITION BY ch.trace_id, device, stream ORDER BY ts_ns, delta, uid
                        ROWS UNBOUNDED PRECEDING)::BIGINT AS queue_depth
FROM ch LEFT JOIN traces t ON t.trace_id = ch.trace_id
ORDER BY ch.trace_id, device, stream, ts_ns, delta, uid;
