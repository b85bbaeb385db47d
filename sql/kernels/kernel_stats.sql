-- kernel_stats: duration statistics of every device kernel name, per device and stream.
-- Answers: which kernels take the device's time, how often they ran and how much their
-- durations vary.
-- depends: kernels
-- Every device event counts (kernels, memcpy, memset; linked to a launch or not). One row per
-- (trace_id, device, stream, name); multi-device traces are split by device.
-- Columns:
--   trace_id      INTEGER  trace
--   rank          INTEGER  rank of that trace (null when unknown)
--   device        BIGINT   device id (the event's `device` arg, else its pid)
--   stream        BIGINT   stream id (the event's `stream` arg, else its tid)
--   name          VARCHAR  kernel name
--   cat           VARCHAR  kernel / gpu_memcpy / gpu_memset
--   kernel_class  VARCHAR  gemm, attention, conv, norm, reduction, elementwise, communication, memcpy, memset, other
--   count         BIGINT   number of events
--   sum_ns        BIGINT   ns, total duration
--   mean_ns       DOUBLE   ns, mean duration
--   median_ns     DOUBLE   ns, median duration (mean of the two middle values for an even count)
--   min_ns        BIGINT   ns, shortest
--   max_ns        BIGINT   ns, longest
--   std_ns        DOUBLE   ns, sample standard deviation (n-1; null for a single event)
--   time_pct      DOUBLE   % (0-100) of the summed duration of all device events of that device
CREATE OR REPLACE VIEW kernel_stats AS
SELECT trace_id, any_value(rank) AS rank, device, stream, name, any_value(cat) AS cat,
       any_value(kernel_class) AS kernel_class,
       count(*) AS count,
       sum(dur_ns)::BIGINT AS sum_ns,
       avg(dur_ns) AS mean_ns,
       quantile_cont(dur_ns, 0.5) AS median_ns,
       min(dur_ns) AS min_ns,
       max(dur_ns) AS max_ns,
       stddev_samp(dur_ns) AS std_ns,
       100.0 * sum(dur_ns) / nullif(sum(sum(dur_ns)) OVER (PARTITION BY trace_id, device), 0) AS time_pct
FROM kernels
GROUP BY trace_id, device, stream, name
ORDER BY trace_id, device, sum_ns DESC, stream, name;
