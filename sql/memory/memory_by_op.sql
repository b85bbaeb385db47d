-- memory_by_op: which operators allocate and free memory, per device.
-- Answers: which ops account for the allocations (and so for the peak), and which ones hand
-- memory back?
-- depends: memory_timeline
-- The op of an event is memory_timeline.op_name (the cpu_op around it on its own thread); the
-- events outside every cpu_op form the row with a null op_name. Ranked per device by bytes
-- allocated.
-- Columns (one row per (trace_id, device_type, device_id, op_name)):
--   trace_id     INTEGER  trace
--   rank         INTEGER  rank (null when unknown)
--   device_type  BIGINT   c10 DeviceType code
--   device_kind  VARCHAR  cpu, cuda, hip, …
--   device_id    BIGINT   device index (-1 for the CPU)
--   op_name      VARCHAR  operator name (null: outside every cpu_op)
--   allocs       BIGINT   allocations
--   alloc_bytes  BIGINT   bytes allocated
--   frees        BIGINT   frees
--   freed_bytes  BIGINT   bytes freed (positive)
--   net_bytes    BIGINT   bytes, alloc_bytes - freed_bytes
--   place        BIGINT   1 for the op that allocated the most bytes on that device, 2 for the next, …
CREATE OR REPLACE VIEW memory_by_op AS
WITH g AS (
    SELECT trace_id, any_value(rank) AS rank, device_type, any_value(device_kind) AS device_kind, device_id, op_name,
           count(*) FILTER (WHERE bytes > 0) AS allocs,
           coalesce(sum(bytes) FILTER (WHERE bytes > 0), 0)::BIGINT AS alloc_bytes,
           count(*) FILTER (WHERE bytes < 0) AS frees,
           coalesce(-sum(bytes) FILTER (WHERE bytes < 0), 0)::BIGINT AS freed_bytes
    FROM memory_timeline
    GROUP BY trace_id, device_type, device_id, op_name
)
SELECT *, (alloc_bytes - freed_bytes)::BIGINT AS net_bytes,
       row_number() OVER (PARTITION BY trace_id, device_type, device_id
                          ORDER BY alloc_bytes DESC, allocs DESC, op_name NULLS LAST) AS place
FROM g
ORDER BY trace_id, device_type, device_id, place;
