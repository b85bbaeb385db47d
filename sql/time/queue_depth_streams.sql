-- queue_depth_streams: each stream's launch queue summed up: how much device work it queued and how deep the queue got.
-- Answers: which streams were busiest with launched device work, and how far ahead of each did
-- the host run at most?
-- depends: queue_depth
-- One row per (trace_id, device, stream) of queue_depth (device events linked to a launch call).
-- Columns (by events, descending, then trace_id, device, stream):
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank of that trace (null when unknown)
--   device           BIGINT   device id
--   stream           BIGINT   stream id
--   events           BIGINT   device events linked to a launch call on the stream
--   max_queue_depth  BIGINT   most events launched and not yet started at once
CREATE OR REPLACE VIEW queue_depth_streams AS
SELECT trace_id, any_value(rank) AS rank, device, stream, count(*) FILTER (WHERE kind = 'start') AS events,
       max(queue_depth) AS max_queue_depth
FROM queue_depth
GROUP BY trace_id, device, stream
ORDER BY events DESC, trace_id, device, stream;
