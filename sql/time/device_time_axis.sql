-- device_time_axis: where each trace's device work lies in time, and the origin that puts the traces on one time axis.
-- Answers: from when to when did each trace launch and run device work, and do the traces share
-- a clock (their device work overlaps, as the ranks of one job) or not (unrelated runs)?
-- depends: kernels, traces
-- A trace's device work runs from its first kernel launch or device event start to the end of
-- its last device event (events without a timestamp left out). When every trace's work overlaps
-- every other's (the latest first_ns is at or before the earliest last_ns) the traces share one
-- origin, the earliest first_ns, and the axis runs from it to the latest last_ns; otherwise each
-- trace starts at its own first_ns and the axis is as long as the longest trace's work. One row
-- per trace with device events.
-- Columns:
--   trace_id      INTEGER  trace
--   rank          INTEGER  rank of that trace (null when unknown)
--   first_ns      BIGINT   ns, first kernel launch call or device event start
--   last_ns       BIGINT   ns, end of the last device event
--   shared_clock  BOOLEAN  true when the traces' device work overlaps, so they share one origin
--   origin_ns     BIGINT   ns, time 0 of this trace on the common axis
--   axis_ns       BIGINT   ns, length of the common axis (at least 1)
CREATE OR REPLACE VIEW device_time_axis AS
WITH s AS (
    SELECT trace_id, min(least(ts_ns, coalesce(launch_ts_ns, ts_ns))) AS first_ns,
           max(coalesce(end_ns, ts_ns)) AS last_ns
    FROM kernels WHERE ts_ns IS NOT NULL GROUP BY trace_id
),
a AS (
    SELECT max(first_ns) <= min(last_ns) AS shared_clock, min(first_ns) AS t0, max(last_ns) AS t1,
           max(last_ns - first_ns) AS longest
    FROM s
)
SELECT s.trace_id, t.rank, s.first_ns, s.last_ns, a.shared_clock,
       CASE WHEN a.shared_clock THEN a.t0 ELSE s.first_ns END AS origin_ns,
       greatest(CASE WHEN a.shared_clock THEN a.t1 - a.t0 ELSE a.longest END, 1) AS axis_ns
FROM s CROSS JOIN a LEFT JOIN traces t ON t.trace_id = s.trace_id
ORDER BY s.trace_id;
