-- memory_timeline_bins: allocated and reserved memory of every device over time, as the highest value in each of 400 time bins.
-- Answers: how did each device's memory move over the trace, at a resolution fit to draw?
-- depends: memory_timeline
-- The span from the first to the last memory event of all traces together (at least 1 ns) is
-- cut into 400 bins of equal width; an event at the very end counts in the last. Allocated is
-- memory_timeline.allocated_bytes, or net_bytes (the running sum of allocations) where the trace
-- writes no totals. Bins without an event have no row; events without a time are left out.
-- Columns (per trace and device, by bin):
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank of that trace (null when unknown)
--   device_kind      VARCHAR  cpu, cuda, hip, … (see memory_timeline)
--   device_id        BIGINT   device index (-1 for the CPU)
--   bin              BIGINT   bin number, 0 to 399
--   bin_start_ns     DOUBLE   ns, start of the bin after the first memory event (bin * span_ns / 400)
--   bin_ns           DOUBLE   ns, width of every bin (span_ns / 400)
--   span_ns          BIGINT   ns, from the first to the last memory event of all traces (at least 1)
--   allocated_bytes  BIGINT   bytes, highest allocated (else net) memory at an event in the bin
--   reserved_bytes   BIGINT   bytes, highest reserved memory at an event in the bin (null: the trace writes none)
CREATE OR REPLACE VIEW memory_timeline_bins AS
WITH m AS (
    SELECT trace_id, rank, device_kind, device_id, ts_ns, coalesce(allocated_bytes, net_bytes) AS alloc,
           reserved_bytes AS res
    FROM memory_timeline WHERE ts_ns IS NOT NULL
),
r AS (SELECT min(ts_ns) AS t0, greatest(max(ts_ns) - min(ts_ns), 1) AS span_ns FROM m),
b AS (
    SELECT trace_id, any_value(rank) AS rank, device_kind, device_id,
           least((ts_ns - t0) * 400 // span_ns, 399) AS bin, any_value(span_ns) AS span_ns,
           max(alloc) AS allocated_bytes, max(res) AS reserved_bytes
    FROM m, r
    GROUP BY trace_id, device_kind, device_id, bin
)
SELECT trace_id, rank, device_kind, device_id, bin, bin * span_ns / 400 AS bin_start_ns, span_ns / 400 AS bin_ns,
       span_ns, allocated_bytes, reserved_bytes
FROM b
ORDER BY trace_id, device_id, bin, device_kind;
