-- kernel_class_stats: device time rolled up by kernel class, per device.
-- Answers: how the device's time splits between GEMMs, attention, convolutions, norms,
-- elementwise work, communication and copies.
-- depends: kernels
-- The class of a kernel is kernels.kernel_class (from its name and category). One row per
-- (trace_id, device, kernel_class); all streams of the device together.
-- Columns:
--   trace_id      INTEGER  trace
--   rank          INTEGER  rank of that trace (null when unknown)
--   device        BIGINT   device id
--   kernel_class  VARCHAR  class (see kernel_stats)
--   names         BIGINT   distinct kernel names in the class
--   count         BIGINT   number of events
--   sum_ns        BIGINT   ns, total duration
--   mean_ns       DOUBLE   ns, mean duration
--   median_ns     DOUBLE   ns, median duration
--   min_ns        BIGINT   ns, shortest
--   max_ns        BIGINT   ns, longest
--   std_ns        DOUBLE   ns, sample standard deviation (null for a single event)
--   time_pct      DOUBLE   % (0-100) of the summed duration of all device events of that device
CREATE OR REPLACE VIEW kernel_class_stats AS
SELECT trace_id, any_value(rank) AS rank, device, kernel_class,
       count(DISTINCT name) AS names,
       count(*) AS count,
       sum(dur_ns)::BIGINT AS sum_ns,
       avg(dur_ns) AS mean_ns,
       quantile_cont(dur_ns, 0.5) AS median_ns,
       min(dur_ns) AS min_ns,
       max(dur_ns) AS max_ns,
       stddev_samp(dur_ns) AS std_ns,
       100.0 * sum(dur_ns) / nullif(sum(sum(dur_ns)) OVER (PARTITION BY trace_id, device), 0) AS time_pct
FROM kernels
GROUP BY trace_id, device, kernel_class
ORDER BY trace_id, device, sum_ns DESC, kernel_class;
