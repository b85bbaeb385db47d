-- tracelens_kernel_summary: TraceLens's kernel_summary.csv, same columns and meaning.
-- Answers, for people coming from TraceLens: which kernels (under which launcher op) take the
-- GPU time, in their units.
-- depends: kernels, slices, traces, _tracelens_op_category, tracelens_gpu_timeline
-- Rules (TraceLens): every event of category kernel counts, linked to a launch or not (memcpy
-- and memset events are not kernels here). Rows group by (launcher op category, launcher
-- name, kernel name, stream), the launcher being kernels.launcher_uid (see
-- tracelens_ops_summary). A kernel without a launch has an empty category and launcher; one
-- whose launcher is the launch call itself (no enclosing cpu_op) has category 'runtime'.
-- Columns (sorted by total duration, descending):
--   trace_id                          INTEGER  trace
--   "Parent op category"              VARCHAR  TraceLens category of the launcher (see _tracelens_op_category)
--   "Parent cpu_op"                   VARCHAR  launcher name ('' when the kernel has no launch)
--   "Kernel name"                     VARCHAR  kernel name
--   "Kernel stream"                   BIGINT   stream
--   "Kernel duration (µs)_sum"        DOUBLE   µs, total duration
--   "Kernel duration (µs)_count"      BIGINT   number of kernels
--   "Kernel duration (µs)_mean"       DOUBLE   µs
--   "Kernel duration (µs)_min"        DOUBLE   µs
--   "Kernel duration (µs)_max"        DOUBLE   µs
--   "Percent of kernels time (%)"     DOUBLE   % (0-100) of the summed duration of all rows of the trace
--   "Percent of total time (%)"       DOUBLE   % (0-100) of tracelens_gpu_timeline's total_time
CREATE OR REPLACE VIEW tracelens_kernel_summary AS
WITH k AS (
    SELECT k.trace_id, k.name, k.stream, k.dur_ns,
           CASE WHEN k.launch_uid IS NULL THEN ''
                WHEN l.cat = 'cpu_op' THEN coalesce(c.category, 'other')
                ELSE 'runtime' END AS pcat,
           CASE WHEN k.launch_uid IS NULL THEN '' ELSE coalesce(l.name, '') END AS pop
    FROM kernels k
    LEFT JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launcher_uid
    LEFT JOIN _tracelens_op_category c ON c.name = l.name
    WHERE k.cat = 'kernel'
),
g AS (
    SELECT trace_id, pcat, pop, name, stream,
           sum(dur_ns) / 1000.0 AS s, count(*) AS n, avg(dur_ns) / 1000.0 AS m,
           min(dur_ns) / 1000.0 AS lo, max(dur_ns) / 1000.0 AS hi
    FROM k GROUP BY ALL
),
tot AS (
    SELECT trace_id, "time ms" * 1000.0 AS total_us FROM tracelens_gpu_timeline WHERE type = 'total_time'
)
SELECT g.trace_id, pcat AS "Parent op category", pop AS "Parent cpu_op", name AS "Kernel name",
       stream AS "Kernel stream",
       s AS "Kernel duration (µs)_sum", n AS "Kernel duration (µs)_count", m AS "Kernel duration (µs)_mean",
       lo AS "Kernel duration (µs)_min", hi AS "Kernel duration (µs)_max",
       100.0 * s / nullif(sum(s) OVER (PARTITION BY g.trace_id), 0) AS "Percent of kernels time (%)",
       100.0 * s / nullif(tot.total_us, 0) AS "Percent of total time (%)"
FROM g LEFT JOIN tot ON tot.trace_id = g.trace_id
ORDER BY g.trace_id, s DESC, pop, name, stream;
