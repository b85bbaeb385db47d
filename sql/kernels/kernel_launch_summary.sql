-- kernel_launch_summary: launch overhead per device, summed up from kernel_launch_stats.
-- Answers: how many launched kernels run shorter than their launch call, how long do launch
-- calls take, how long does launched work wait to start, and how many of each are outliers?
-- depends: kernel_launch_stats
-- One row per (trace_id, device) with linked device events. Launch-call figures count each
-- launch call once (a graph launch is one call however many events it launched); event
-- figures count each linked device event. Percentiles interpolate linearly between the two
-- nearest ranks (quantile_cont). Outliers use HTA's default cut-offs, absolute, not percentiles:
--   runtime outlier  a launch call longer than 50 µs (cpu_dur_ns > 50 000);
--   delay outlier    a device event that started more than 100 µs after its launch call ended
--                    (launch_delay_ns > 100 000).
-- Columns:
--   trace_id            INTEGER  trace
--   rank                INTEGER  rank (null when unknown)
--   device              BIGINT   device id
--   events              BIGINT   linked device events
--   launch_calls        BIGINT   distinct launch calls of those events
--   short_count         BIGINT   events with gpu_dur_ns < cpu_dur_ns
--   short_pct           DOUBLE   % (0-100) of events that are short
--   cpu_dur_p50_ns      DOUBLE   ns, median launch-call duration
--   cpu_dur_p95_ns      DOUBLE   ns, 95th percentile of launch-call durations
--   cpu_dur_max_ns      BIGINT   ns, longest launch call
--   delay_p50_ns        DOUBLE   ns, median launch delay
--   delay_p95_ns        DOUBLE   ns, 95th percentile of launch delays
--   delay_max_ns        BIGINT   ns, longest launch delay
--   runtime_outliers    BIGINT   launch calls longer than 50 µs
--   delay_outliers      BIGINT   events with a launch delay over 100 µs
CREATE OR REPLACE VIEW kernel_launch_summary AS
WITH e AS (
    SELECT *,
           row_number() OVER (PARTITION BY trace_id, device, launch_uid ORDER BY uid) = 1 AS first_of_call
    FROM kernel_launch_stats
)
SELECT trace_id, any_value(rank) AS rank, device,
       count(*) AS events,
       count(*) FILTER (WHERE first_of_call) AS launch_calls,
       count(*) FILTER (WHERE short) AS short_count,
       100.0 * count(*) FILTER (WHERE short) / count(*) AS short_pct,
       quantile_cont(cpu_dur_ns, 0.5) FILTER (WHERE first_of_call) AS cpu_dur_p50_ns,
       quantile_cont(cpu_dur_ns, 0.95) FILTER (WHERE first_of_call) AS cpu_dur_p95_ns,
       max(cpu_dur_ns) AS cpu_dur_max_ns,
       quantile_cont(launch_delay_ns, 0.5) AS delay_p50_ns,
       quantile_cont(launch_delay_ns, 0.95) AS delay_p95_ns,
       max(launch_delay_ns) AS delay_max_ns,
       count(*) FILTER (WHERE first_of_call AND cpu_dur_ns > 50000) AS runtime_outliers,
       count(*) FILTER (WHERE launch_delay_ns > 100000) AS delay_outliers
FROM e
GROUP BY trace_id, device
ORDER BY trace_id, device;
