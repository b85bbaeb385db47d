-- instants: instant events (ph 'i' / 'I'), e.g. the profiler's [memory] allocation records.
-- Answers: what happened at a point in time — allocations and frees with their sizes,
-- the running allocated/reserved totals, and other markers.
-- Columns:
--   trace_id INTEGER; rank INTEGER; uid BIGINT; name VARCHAR; cat VARCHAR; pid, tid BIGINT;
--   ts_ns BIGINT (ns); scope VARCHAR ('g' global, 'p' process, 't' thread);
--   bytes BIGINT (allocation size, negative for frees); total_allocated_bytes BIGINT;
--   total_reserved_bytes BIGINT; addr BIGINT; device_type BIGINT; device_id BIGINT;
--   args VARCHAR JSON text of the other args
CREATE OR REPLACE VIEW instants AS
SELECT trace_id, rank, uid, name, cat, pid, tid, ts_ns, scope,
       bytes, total_allocated_bytes, total_reserved_bytes, addr, device_type, device_id, args
FROM events
WHERE ph IN ('i', 'I')
ORDER BY trace_id, uid;
