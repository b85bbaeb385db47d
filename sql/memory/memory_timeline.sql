-- memory_timeline: every allocation and free the profiler recorded, per device, in time order.
-- Answers: how did allocated and reserved memory move over the trace, on each device, and in
-- which operator was each block allocated or freed?
-- depends: slices, traces
-- Source: the `[memory]` instant events torch.profiler writes with profile_memory=True (args
-- Bytes: + allocation / - free, Total Allocated and Total Reserved after the event, Device Type,
-- Device Id, Addr). Order per (trace_id, device_type, device_id): ts_ns, then file order.
-- net_bytes is the running sum of bytes from the first event of the trace on that device: the
-- growth since the profiler started (old traces write no totals, only Bytes).
-- The op: the innermost cpu_op of the event's own thread (pid, tid) whose [ts, end) holds the
-- event's ts (a zero-length op holds its own point) — null when the event is outside every
-- cpu_op. Found in the host tree, among the thread's cpu_ops only (the other slices, Python
-- frames above all, are most of a deep stack and hold no answer): the last op of the thread
-- starting at or before ts (the deepest of those starting together; an ASOF join), then the
-- deepest of its ops-ancestors-or-self that holds ts: a walk up from it, op by op (the op above
-- an op is its parent slice's op_uid), that stops at the first op holding ts (about two steps
-- an event). Equality and as-of joins only: a range join on positions was planned by DuckDB as
-- an IEJoin over Parquet but as a merge join over Arrow tables, 8.7 s instead of 0.17 s on a
-- trace of 28k memory events; the walk replaced an as-of join per level of ops (resnet50's
-- 12.8k events: 65 -> 45 ms).
-- Columns (one row per `[memory]` event):
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank (null when unknown)
--   device_type      BIGINT   c10 DeviceType code (0 CPU, 1 CUDA, 6 HIP, …)
--   device_kind      VARCHAR  cpu, cuda, hip, xla, xpu, mps, mtia, else 'type N'
--   device_id        BIGINT   device index (-1 for the CPU)
--   uid              BIGINT   event uid
--   pid, tid         BIGINT   thread that allocated or freed
--   ts_ns            BIGINT   ns, time of the event
--   bytes            BIGINT   bytes, + allocated / - freed
--   allocated_bytes  BIGINT   bytes allocated on the device after the event (Total Allocated; null when not written)
--   reserved_bytes   BIGINT   bytes reserved by the allocator after the event (Total Reserved; null when not written)
--   net_bytes        BIGINT   bytes, running sum of bytes on the device up to this event
--   addr             BIGINT   address of the block (null when not written)
--   op_uid           BIGINT   the cpu_op the event happened in (null for none)
--   op_name          VARCHAR  its name
CREATE OR REPLACE VIEW memory_timeline AS
WITH RECURSIVE m AS MATERIALIZED (  -- m and ts read once each: three steps below read m, two ts
    SELECT trace_id, uid, coalesce(pid, -1) AS pid, coalesce(tid, -1) AS tid, ts_ns, bytes,
           total_allocated_bytes, total_reserved_bytes, addr, device_type, device_id
    FROM events
    WHERE ph IN ('i', 'I') AND name = '[memory]' AND ts_ns IS NOT NULL
),
ts AS MATERIALIZED (  -- the cpu_ops of the threads that allocate
    SELECT s.trace_id, s.pid, s.tid, s.uid, s.ts_ns, s.end_ns, s.pre, s.parent_uid
    FROM slices s SEMI JOIN (SELECT DISTINCT trace_id, pid, tid FROM m) q
      ON q.trace_id = s.trace_id AND q.pid = s.pid AND q.tid = s.tid
    WHERE s.cat = 'cpu_op'
),
ops AS (  -- each with the op one up: the nearest cpu_op above it (its parent slice's op_uid)
    SELECT o.trace_id, o.uid, o.ts_ns, o.end_ns, o.pre, p.op_uid AS up
    FROM ts o LEFT JOIN slices p ON p.trace_id = o.trace_id AND p.uid = o.parent_uid
),
th AS (  -- of the ops starting together, the deepest (last in pre-order)
    SELECT trace_id, pid, tid, ts_ns, max(pre) AS pre FROM ts GROUP BY ALL
),
walk AS (  -- per event, from the last op of its thread starting at or before it, up the ops above
           -- it until one holds the event's time (a zero-length op holds its own point)
    SELECT c.trace_id, c.uid, c.t, o.uid AS op, o.up,
           c.t < o.end_ns OR o.end_ns = o.ts_ns AND o.ts_ns = c.t AS hit
    FROM (SELECT m.trace_id, m.uid, m.ts_ns AS t, th.pre
          FROM m ASOF JOIN th ON th.trace_id = m.trace_id AND th.pid = m.pid AND th.tid = m.tid
                              AND th.ts_ns <= m.ts_ns) c
    JOIN ops o ON o.trace_id = c.trace_id AND o.pre = c.pre
    UNION ALL
    SELECT w.trace_id, w.uid, w.t, o.uid, o.up, w.t < o.end_ns OR o.end_ns = o.ts_ns AND o.ts_ns = w.t
    FROM walk w JOIN ops o ON o.trace_id = w.trace_id AND o.uid = w.up
    WHERE NOT w.hit
),
found AS (SELECT trace_id, uid, op AS op_uid FROM walk WHERE hit)
SELECT m.trace_id, t.rank, m.device_type,
       CASE m.device_type WHEN 0 THEN 'cpu' WHEN 1 THEN 'cuda' WHEN 6 THEN 'hip' WHEN 9 THEN 'xla'
            WHEN 12 THEN 'xpu' WHEN 13 THEN 'mps' WHEN 19 THEN 'mtia'
            ELSE 'type ' || m.device_type END AS device_kind,
       m.device_id, m.uid, m.pid, m.tid, m.ts_ns, m.bytes,
       m.total_allocated_bytes AS allocated_bytes, m.total_reserved_bytes AS reserved_bytes,
       sum(m.bytes) OVER (PARTITION BY m.trace_id, m.device_type, m.device_id ORDER BY m.ts_ns, m.uid
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS net_bytes,
       m.addr, o.uid AS op_uid, o.name AS op_name
FROM m
LEFT JOIN found f ON f.trace_id = m.trace_id AND f.uid = m.uid
LEFT JOIN slices o ON o.trace_id = m.trace_id AND o.uid = f.op_uid
LEFT JOIN traces t ON t.trace_id = m.trace_id
ORDER BY m.trace_id, m.device_type, m.device_id, m.ts_ns, m.uid;
