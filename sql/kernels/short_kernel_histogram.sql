-- short_kernel_histogram: how device work spreads over durations, on a logarithmic scale.
-- Answers: how many kernels are a few µs long against how many run for milliseconds, and how
-- much of the device's time each duration range holds.
-- depends: kernels
-- Buckets (ns, lower bound inclusive, upper exclusive), 1-2-5 steps per decade from 1 µs:
-- [0, 1 µs), [1, 2 µs), [2, 5 µs), [5, 10 µs), [10, 20 µs), [20, 50 µs), [50, 100 µs),
-- [100, 200 µs), … For a duration d ≥ 1 µs with p the power of ten at or below d, the bucket
-- starts at p, 2p or 5p. Every device event counts (kernels, memcpy, memset; linked or not);
-- one row per non-empty bucket of each (trace_id, device). The buckets below 10 µs are the
-- short kernels of `short_kernels`.
-- Columns:
--   trace_id      INTEGER  trace
--   rank          INTEGER  rank (null when unknown)
--   device        BIGINT   device id
--   bucket_lo_ns  BIGINT   ns, lower bound of the bucket (inclusive)
--   bucket_hi_ns  BIGINT   ns, upper bound (exclusive; null past the int64 range)
--   short         BOOLEAN  the bucket lies below 10 µs
--   count         BIGINT   events in the bucket
--   sum_ns        BIGINT   ns, their total duration
--   count_pct     DOUBLE   % (0-100) of the device's events
--   time_pct      DOUBLE   % (0-100) of the summed duration of all device events of that device
CREATE OR REPLACE VIEW short_kernel_histogram AS
WITH p AS (
    -- p: the power of ten at or below dur_ns, from its digit count (exact, no float log)
    SELECT trace_id, rank, device, dur_ns,
           (10::HUGEINT ** (length(dur_ns::VARCHAR) - 1))::HUGEINT AS p
    FROM kernels
),
b AS (
    SELECT trace_id, rank, device, dur_ns,
           CASE WHEN dur_ns < 1000 THEN 0 WHEN dur_ns >= 5 * p THEN 5 * p
                WHEN dur_ns >= 2 * p THEN 2 * p ELSE p END AS lo,
           CASE WHEN dur_ns < 1000 THEN 1000 WHEN dur_ns >= 5 * p THEN 10 * p
                WHEN dur_ns >= 2 * p THEN 5 * p ELSE 2 * p END AS hi
    FROM p
),
g AS (
    SELECT trace_id, any_value(rank) AS rank, device, lo, hi, count(*) AS count, sum(dur_ns) AS sum_ns
    FROM b
    GROUP BY trace_id, device, lo, hi
)
SELECT trace_id, rank, device, lo::BIGINT AS bucket_lo_ns, TRY_CAST(hi AS BIGINT) AS bucket_hi_ns,
       lo < 10000 AS short,
       count,
       sum_ns::BIGINT AS sum_ns,
       100.0 * count / sum(count) OVER (PARTITION BY trace_id, device) AS count_pct,
       100.0 * sum_ns / nullif(sum(sum_ns) OVER (PARTITION BY trace_id, device), 0) AS time_pct
FROM g
ORDER BY trace_id, device, bucket_lo_ns;
