"""The formulations some views had before they were rewritten for speed: plain, slower,
and kept here as the reference the rewritten views are checked against
(test_view_rewrites.py). Each is the query alone, without its header comment."""

PLAIN = {
    "memory_timeline": """
WITH RECURSIVE m AS (
    SELECT trace_id, uid, coalesce(pid, -1) AS pid, coalesce(tid, -1) AS tid, ts_ns, bytes,
           total_allocated_bytes, total_reserved_bytes, addr, device_type, device_id
    FROM events
    WHERE ph IN ('i', 'I') AND name = '[memory]' AND ts_ns IS NOT NULL
),
th AS (  -- slices of the threads that allocate; of those starting together, the deepest (last in pre-order)
    SELECT s.trace_id, s.pid, s.tid, s.ts_ns, arg_max(s.uid, s.pre) AS uid
    FROM slices s SEMI JOIN (SELECT DISTINCT trace_id, pid, tid FROM m) q
      ON q.trace_id = s.trace_id AND q.pid = s.pid AND q.tid = s.tid
    GROUP BY s.trace_id, s.pid, s.tid, s.ts_ns
),
climb(trace_id, uid, t, cur) AS (
    SELECT m.trace_id, m.uid, m.ts_ns, th.uid
    FROM m ASOF JOIN th ON th.trace_id = m.trace_id AND th.pid = m.pid AND th.tid = m.tid AND th.ts_ns <= m.ts_ns
    UNION ALL
    SELECT c.trace_id, c.uid, c.t, s.parent_uid
    FROM climb c JOIN slices s ON s.trace_id = c.trace_id AND s.uid = c.cur
    WHERE NOT (c.t < s.end_ns OR s.end_ns = s.ts_ns AND s.ts_ns = c.t) AND s.parent_uid IS NOT NULL
),
found AS (  -- the slice of the walk that holds the event's time
    SELECT c.trace_id, c.uid, s.op_uid
    FROM climb c JOIN slices s ON s.trace_id = c.trace_id AND s.uid = c.cur
    WHERE c.t < s.end_ns OR s.end_ns = s.ts_ns AND s.ts_ns = c.t
)
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
LEFT JOIN slices o ON o.trace_id = f.trace_id AND o.uid = f.op_uid
LEFT JOIN traces t ON t.trace_id = m.trace_id
ORDER BY m.trace_id, m.device_type, m.device_id, m.ts_ns, m.uid
""",
}
