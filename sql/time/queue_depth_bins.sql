-- queue_depth_bins: the queue depth of every stream over time, as the deepest queue in each of about 400 time bins.
-- Answers: how did each stream's launch queue move over the trace, at a resolution fit to draw?
-- depends: queue_depth, device_time_axis
-- The common time axis of device_time_axis (traces whose device work overlaps share its origin)
-- is cut into bins of axis_ns // 400 ns (at least 1 ns) from each trace's origin: 400 bins, a
-- few more where the division leaves a remainder (a trace shorter than the axis uses fewer).
-- A bin holds the changes of queue_depth at times from its start up to its end; bins without
-- a change have no row. Changes without a time are left out.
-- Columns (per stream, by bin):
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank of that trace (null when unknown)
--   device           BIGINT   device id
--   stream           BIGINT   stream id
--   bin              BIGINT   bin number, from 0 at the trace's origin on the axis
--   bin_start_ns     BIGINT   ns, start of the bin after the origin (bin * bin_ns)
--   bin_ns           BIGINT   ns, width of every bin
--   max_queue_depth  BIGINT   most events launched and not yet started at a change in the bin
CREATE OR REPLACE VIEW queue_depth_bins AS
WITH b AS (
    SELECT q.trace_id, any_value(q.rank) AS rank, q.device, q.stream,
           (q.ts_ns - a.origin_ns) // greatest(a.axis_ns // 400, 1) AS bin,
           any_value(greatest(a.axis_ns // 400, 1)) AS bin_ns, max(q.queue_depth) AS max_queue_depth
    FROM queue_depth q JOIN device_time_axis a ON a.trace_id = q.trace_id
    WHERE q.ts_ns IS NOT NULL
    GROUP BY q.trace_id, q.device, q.stream, bin
)
SELECT trace_id, rank, device, stream, bin, bin * bin_ns AS bin_start_ns, bin_ns, max_queue_depth
FROM b
ORDER BY trace_id, device, stream, bin;
