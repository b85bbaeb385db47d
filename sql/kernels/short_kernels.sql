-- short_kernels: the device work that runs under 10 µs, per name (TraceLens's short-kernel study).
-- Answers: which kernels are so short that launch overhead, not the work, sets their cost, how
-- often they run and how much of the device's time they take together.
-- depends: kernels
-- Short = dur_ns < 10 000 (10 µs, TraceLens's default threshold; fixed in this view). Every
-- device event counts (kernels, memcpy, memset; linked or not). One row per (trace_id, device,
-- name) with at least one short event.
-- Columns:
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank (null when unknown)
--   device           BIGINT   device id
--   name             VARCHAR  kernel name
--   cat              VARCHAR  kernel / gpu_memcpy / gpu_memset
--   count            BIGINT   events of that name
--   sum_ns           BIGINT   ns, their total duration
--   short_count      BIGINT   events of that name shorter than 10 µs
--   short_sum_ns     BIGINT   ns, total duration of those
--   short_mean_ns    DOUBLE   ns, their mean duration
--   short_count_pct  DOUBLE   % (0-100) of the name's events that are short
--   short_time_pct   DOUBLE   % (0-100) of the summed duration of all device events of that device
CREATE OR REPLACE VIEW short_kernels AS
WITH k AS (
    SELECT trace_id, rank, device, name, cat, dur_ns, dur_ns < 10000 AS short,
           sum(dur_ns) OVER (PARTITION BY trace_id, device) AS device_ns
    FROM kernels
)
SELECT trace_id, any_value(rank) AS rank, device, name, any_value(cat) AS cat,
       count(*) AS count,
       sum(dur_ns)::BIGINT AS sum_ns,
       count(*) FILTER (WHERE short) AS short_count,
       sum(dur_ns) FILTER (WHERE short)::BIGINT AS short_sum_ns,
       avg(dur_ns) FILTER (WHERE short) AS short_mean_ns,
       100.0 * count(*) FILTER (WHERE short) / count(*) AS short_count_pct,
       100.0 * sum(dur_ns) FILTER (WHERE short) / nullif(any_value(device_ns), 0) AS short_time_pct
FROM k
GROUP BY trace_id, device, name
HAVING count(*) FILTER (WHERE short) > 0
ORDER BY trace_id, device, short_sum_ns DESC, name;
