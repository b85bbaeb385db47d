-- memory_summary: the memory high-water marks of each device, from the allocation records.
-- Answers: how much memory did each device peak at, when, how much did the allocator hold,
-- and how much was still allocated at the end of the trace?
-- depends: memory_timeline
-- Peaks are the maxima of Total Allocated / Total Reserved as written after each event (null
-- when the trace writes no totals); peak_ts_ns is the first event reaching the peak.
-- Columns (one row per (trace_id, device_type, device_id)):
--   trace_id               INTEGER  trace
--   rank                   INTEGER  rank (null when unknown)
--   device_type            BIGINT   c10 DeviceType code
--   device_kind            VARCHAR  cpu, cuda, hip, …
--   device_id              BIGINT   device index (-1 for the CPU)
--   events                 BIGINT   number of [memory] events
--   allocs                 BIGINT   events with bytes > 0
--   frees                  BIGINT   events with bytes < 0
--   alloc_bytes            BIGINT   bytes, sum of the allocations
--   freed_bytes            BIGINT   bytes, sum of the frees (positive)
--   peak_allocated_bytes   BIGINT   bytes, highest Total Allocated
--   peak_ts_ns             BIGINT   ns, first time allocated memory stood at its peak
--   peak_reserved_bytes    BIGINT   bytes, highest Total Reserved
--   final_allocated_bytes  BIGINT   bytes, Total Allocated after the last event
--   final_reserved_bytes   BIGINT   bytes, Total Reserved after the last event
--   peak_net_bytes         BIGINT   bytes, highest growth since the first event (memory_timeline.net_bytes)
CREATE OR REPLACE VIEW memory_summary AS
SELECT trace_id, any_value(rank) AS rank, device_type, any_value(device_kind) AS device_kind, device_id,
       count(*) AS events,
       count(*) FILTER (WHERE bytes > 0) AS allocs,
       count(*) FILTER (WHERE bytes < 0) AS frees,
       coalesce(sum(bytes) FILTER (WHERE bytes > 0), 0)::BIGINT AS alloc_bytes,
       coalesce(-sum(bytes) FILTER (WHERE bytes < 0), 0)::BIGINT AS freed_bytes,
       max(allocated_bytes) AS peak_allocated_bytes,
       arg_min(ts_ns, (-allocated_bytes, ts_ns, uid)) FILTER (WHERE allocated_bytes IS NOT NULL) AS peak_ts_ns,
       max(reserved_bytes) AS peak_reserved_bytes,
       arg_max(allocated_bytes, (ts_ns, uid)) AS final_allocated_bytes,
       arg_max(reserved_bytes, (ts_ns, uid)) AS final_reserved_bytes,
       max(net_bytes) AS peak_net_bytes
FROM memory_timeline
GROUP BY trace_id, device_type, device_id
ORDER BY trace_id, device_type, device_id;
