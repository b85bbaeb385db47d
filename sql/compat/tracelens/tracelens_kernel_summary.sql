-- tracelens_kernel_summary: TraceLens's kernel_summary.csv, same columns and meaning.
-- Answers, for people coming from TraceLens: which kernels (under which launcher op) take the
-- GPU time, in their units.
-- depends: _tracelens_gpu_events, slices, _tracelens_op_category, tracelens_gpu_timeline
-- Rules (TraceLens): every event of category kernel counts, linked to a launch or not (memcpy
-- and memset events are not kernels here); links as TraceLens makes them (_tracelens_gpu_events:
-- through a complete ac2g flow pair). Rows group by (parent op category, parent op name,
-- kernel name, stream). The parent op is the nearest cpu_op above the kernel's launch call,
-- whatever lies between (python frames, user annotations, a cpu_op named execute): for a
-- collective that is record_param_comms, not the launch call as the ops summary's launcher
-- rule gives. A kernel without a launch has an empty category and parent; one with no cpu_op
-- above its launch call has the launch call's name and category 'runtime'. Durations are
-- summed as written (TraceLens does not clip overlapping kernels of one stream).
-- Columns (sorted by total duration, descending):
--   trace_id                          INTEGER  trace
--   "Parent op category"              VARCHAR  TraceLens category of the parent op (see _tracelens_op_category)
--   "Parent cpu_op"                   VARCHAR  parent op name ('' when the kernel has no launch)
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
WITH k AS (  -- the parent: the kernel's op, else its launch call (an op_uid is always a slice's uid),
             -- found in one join with the slices (two were more than DuckDB's memory at 4 GB)
    SELECT k.trace_id, k.name, k.stream, k.dur_ns,
           CASE WHEN k.launch_uid IS NULL THEN ''
                WHEN k.op_uid IS NOT NULL THEN coalesce(c.category, 'other')
                ELSE 'runtime' END AS pcat,
           CASE WHEN k.launch_uid IS NULL THEN '' ELSE coalesce(p.name, '') END AS pop
    FROM _tracelens_gpu_events k
    LEFT JOIN slices p ON p.trace_id = k.trace_id AND p.uid = coalesce(k.op_uid, k.launch_uid)
    LEFT JOIN _tracelens_op_category c ON k.op_uid IS NOT NULL AND c.name = p.name
    WHERE k.cat = 'kernel'
),
g AS (
    SELECT trace_id, pcat, pop, name, stream,
           sum(dur_ns) AS ns, sum(dur_ns) / 1000.0 AS s, count(*) AS n, avg(dur_ns) / 1000.0 AS m,
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
       -- over the integer sums: the same whatever order the groups are added in
       100.0 * ns / nullif(sum(ns) OVER (PARTITION BY g.trace_id), 0) AS "Percent of kernels time (%)",
       100.0 * s / nullif(tot.total_us, 0) AS "Percent of total time (%)"
FROM g LEFT JOIN tot ON tot.trace_id = g.trace_id
ORDER BY g.trace_id, s DESC, pop, name, stream;
