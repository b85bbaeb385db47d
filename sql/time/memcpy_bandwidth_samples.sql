-- memcpy_bandwidth_samples: the copy bandwidth of every device and direction over time, on the device's pid.
-- Answers: what does a counter track of each device's copy bandwidth hold (`tracecols augment --counters`)?
-- depends: memcpy_bandwidth, _stream_pids
-- memcpy_bandwidth's rows (a step function per device and direction), each with the pid of the
-- device's events: the smallest int pid and the smallest string pid over its streams
-- (_stream_pids), where a trace viewer draws it.
-- Columns (one per trace, device, direction and time of change; in that order):
--   trace_id     INTEGER  trace
--   device       BIGINT   device id
--   direction    VARCHAR  HtoD, DtoH, DtoD, PtoP, HtoH, memset, … (memcpy_bandwidth)
--   pid          BIGINT   int pid of the device's events (null when they have a string pid)
--   pid_str      VARCHAR  string pid of the device's events (null when they have an int pid)
--   ts_ns        BIGINT   ns, time of the change
--   bytes_per_s  DOUBLE   bytes/s (1 GB/s = 1e9 bytes/s) from ts_ns to the next change; 0 when no copy runs
CREATE OR REPLACE VIEW memcpy_bandwidth_samples AS
WITH pids AS (
    SELECT trace_id, device, min(pid) AS pid, min(pid_str) AS pid_str FROM _stream_pids GROUP BY trace_id, device
)
SELECT b.trace_id, b.device, b.direction, p.pid, p.pid_str, b.ts_ns, b.bytes_per_s
FROM memcpy_bandwidth b
JOIN pids p ON p.trace_id = b.trace_id AND p.device IS NOT DISTINCT FROM b.device
ORDER BY b.trace_id, b.device, b.direction, b.ts_ns;
