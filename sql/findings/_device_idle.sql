-- _device_idle: helper — the part of each stream's idle gap in which the whole device sat idle.
-- Answers: of the time a stream waited (idle_gaps), how much had no other stream of the device
-- running either — the time the device itself lost?
-- depends: idle_gaps, _kernels_in_span
-- The latest end of the events before an event on its device (every stream; same order as
-- idle_gaps: start, end, uid) bounds it: device_idle_ns = greatest(0, gap_end_ns - that end).
-- Those parts never overlap each other on a device (each lies between the device's previous work
-- and the event that ends the idle spell), so they add up; a stream's gaps do not (a collective
-- stream idle beside a busy compute stream costs nothing).
-- Columns (one row per idle_gaps row):
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank (null when unknown)
--   device, stream, uid  BIGINT  as in idle_gaps (uid: the event after the gap)
--   gap_start_ns     BIGINT   ns, idle_gaps.gap_start_ns
--   gap_ns           BIGINT   ns, idle_gaps.gap_ns
--   cause            VARCHAR  idle_gaps.cause
--   device_idle_ns   BIGINT   ns, the part of the gap with nothing running on the device
CREATE OR REPLACE VIEW _device_idle AS
WITH d AS (
    SELECT trace_id, uid,
           max(end_ns) OVER (PARTITION BY trace_id, device ORDER BY ts_ns, end_ns, uid
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS device_prev_end
    FROM _kernels_in_span
)
SELECT i.trace_id, i.rank, i.device, i.stream, i.uid, i.gap_start_ns, i.gap_ns, i.cause,
       greatest(0, i.gap_end_ns - d.device_prev_end)::BIGINT AS device_idle_ns
FROM idle_gaps i JOIN d ON d.trace_id = i.trace_id AND d.uid = i.uid;
