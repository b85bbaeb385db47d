-- queue_depth_samples: the queue length of every stream at each time it changes, on its device's pid.
-- Answers: what does a counter track of each stream's launch queue hold (`tracecols augment --counters`)?
-- depends: queue_depth, _stream_pids
-- queue_depth has a row per change; changes at one time become one sample, the queue length
-- after the last of them (in queue_depth's order: starts before launches, then by uid). pid and
-- pid_str are those of the stream's device events (_stream_pids), where a trace viewer draws it.
-- Columns (one per trace, device, stream and time of change; in that order):
--   trace_id     INTEGER  trace
--   device       BIGINT   device id
--   stream       BIGINT   stream id
--   pid          BIGINT   int pid of the stream's device events (null when they have a string pid)
--   pid_str      VARCHAR  string pid of the stream's device events (null when they have an int pid)
--   ts_ns        BIGINT   ns, time of the change
--   queue_depth  BIGINT   events launched and not yet started on the stream, after every change at ts_ns
CREATE OR REPLACE VIEW queue_depth_samples AS
SELECT q.trace_id, q.device, q.stream, p.pid, p.pid_str, q.ts_ns,
       arg_max(q.queue_depth, (q.delta, q.uid)) AS queue_depth
FROM queue_depth q
JOIN _stream_pids p
  ON p.trace_id = q.trace_id AND p.device IS NOT DISTINCT FROM q.device AND p.stream IS NOT DISTINCT FROM q.stream
GROUP BY q.trace_id, q.device, q.stream, p.pid, p.pid_str, q.ts_ns
ORDER BY q.trace_id, q.device, q.stream, q.ts_ns;
