-- _launch_queue: helper — the queue-depth samples PyTorch's BasicEvaluation takes, per device.
-- Answers: at each launch call and each kernel start, how many launched kernels had not yet
-- started on the device (BasicEvaluation's queue depth), for optimizable_ops.
-- depends: kernels, slices
-- Samples (per trace_id, device): every kernel whose name contains none of mem, cpy, alloc,
-- free (case-insensitive), and every launch call that launched one of them. Kernels are
-- numbered 0, 1, … by start time; at a sample at time t,
--   depth = max(0, (highest number of a kernel launched by a sample so far) - (kernels started at or before t) + 1),
-- samples in the order (time, launch calls before kernels, uid).
-- Columns:
--   trace_id  INTEGER  trace
--   device    BIGINT   device id
--   pos       BIGINT   0-based position of the sample in time order
--   kind      VARCHAR  'launch' or 'kernel'
--   uid       BIGINT   the launch call or the kernel
--   ts_ns     BIGINT   ns, start of that event
--   end_ns    BIGINT   ns, end of that event
--   depth     BIGINT   queue depth at the sample
CREATE OR REPLACE VIEW _launch_queue AS
WITH k AS (
    SELECT trace_id, device, uid, ts_ns, end_ns, launch_uid,
           row_number() OVER (PARTITION BY trace_id, device ORDER BY ts_ns, uid) - 1 AS r
    FROM kernels
    WHERE NOT regexp_matches(lower(name), 'mem|cpy|alloc|free')
),
l AS (
    SELECT k.trace_id, k.device, k.launch_uid AS uid, any_value(s.ts_ns) AS ts_ns,
           any_value(s.end_ns) AS end_ns, max(k.r) AS spawned
    FROM k JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
    GROUP BY k.trace_id, k.device, k.launch_uid
),
pts AS (
    SELECT trace_id, device, 0 AS kind, uid, ts_ns, end_ns, spawned FROM l
    UNION ALL
    SELECT trace_id, device, 1, uid, ts_ns, end_ns, NULL FROM k
),
w AS (
    SELECT *,
           coalesce(max(spawned) OVER (PARTITION BY trace_id, device ORDER BY ts_ns, kind, uid
                                       ROWS UNBOUNDED PRECEDING), -1) AS spawned_so_far,
           sum(kind) OVER (PARTITION BY trace_id, device ORDER BY ts_ns
                           RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS started,
           row_number() OVER (PARTITION BY trace_id, device ORDER BY ts_ns, kind, uid) - 1 AS pos
    FROM pts
)
SELECT trace_id, device, pos, CASE kind WHEN 0 THEN 'launch' ELSE 'kernel' END AS kind, uid, ts_ns, end_ns,
       greatest(spawned_so_far - started + 1, 0)::BIGINT AS depth
FROM w;
