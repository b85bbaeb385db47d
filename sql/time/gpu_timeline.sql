-- gpu_timeline: where the device's wall time went — computation, communication, copies, idle.
-- Answers: over the span from the first to the last device event, how much time was the
-- device computing, communicating without overlapping computation, copying without
-- overlapping either, and idle.
-- depends: _kernels_in_span, traces
-- uses: intervals
-- Every device event counts (linked to a launch or not) but an outlying one, far from the rest
-- of its trace (a broken timestamp: _kernels_in_span). Sets of events, by kernels.kernel_class:
--   computation   = every event that is neither communication nor memcpy (memsets included)
--   communication = kernel_class 'communication';  memcpy = kernel_class 'memcpy'
-- Each set's time is the length of the union of its intervals (overlaps counted once),
-- computed with a running maximum of end times (window functions).
-- One row per (trace_id, device), plus one row per trace with device NULL over all its
-- devices together (the union across devices, as TraceLens reports it).
-- Columns:
--   trace_id            INTEGER  trace
--   rank                INTEGER  rank of that trace (null when unknown)
--   device              BIGINT   device id; NULL = every device of the trace together
--   computation_ns      BIGINT   ns, union of computation events
--   exposed_comm_ns     BIGINT   ns, communication time not overlapped by computation
--   exposed_memcpy_ns   BIGINT   ns, memcpy time not overlapped by computation or communication
--   busy_ns             BIGINT   ns, union of all events
--   idle_ns             BIGINT   ns, total_ns - busy_ns
--   total_ns            BIGINT   ns, end of the last event - start of the first
--   total_comm_ns       BIGINT   ns, union of communication events
--   total_memcpy_ns     BIGINT   ns, union of memcpy events
--   computation_pct, exposed_comm_pct, exposed_memcpy_pct, busy_pct, idle_pct  DOUBLE  % (0-100) of total_ns
CREATE OR REPLACE VIEW gpu_timeline AS
WITH ev AS (
    SELECT trace_id, device, ts_ns, end_ns,
           CASE WHEN kernel_class = 'communication' THEN 1 WHEN kernel_class = 'memcpy' THEN 2 ELSE 0 END AS kind
    FROM _kernels_in_span
),
scoped AS (  -- each event once per device and once for its whole trace (device NULL)
    SELECT trace_id, device, ts_ns, end_ns, kind FROM ev
    UNION ALL
    SELECT trace_id, NULL, ts_ns, end_ns, kind FROM ev
),
tagged AS (  -- 0 computation, 1 communication, 2 memcpy, 3 computation+communication, 4 all
    SELECT trace_id, device, ts_ns, end_ns, kind AS s FROM scoped
    UNION ALL
    SELECT trace_id, device, ts_ns, end_ns, 3 FROM scoped WHERE kind < 2
    UNION ALL
    SELECT trace_id, device, ts_ns, end_ns, 4 FROM scoped
),
contrib AS (  -- each interval adds what it covers beyond the running max end of earlier ones
    SELECT trace_id, device, s, ts_ns, end_ns,
           _tc_union_add(ts_ns, end_ns, trace_id, device, s) AS c
    FROM tagged
),
u AS (
    SELECT trace_id, device,
           sum(c) FILTER (WHERE s = 0) AS comp, sum(c) FILTER (WHERE s = 1) AS comm,
           sum(c) FILTER (WHERE s = 2) AS mcpy, sum(c) FILTER (WHERE s = 3) AS cc,
           sum(c) FILTER (WHERE s = 4) AS busy,
           max(end_ns) FILTER (WHERE s = 4) - min(ts_ns) FILTER (WHERE s = 4) AS total
    FROM contrib GROUP BY trace_id, device
),
r AS (
    SELECT u.trace_id, (SELECT any_value(rank) FROM traces t WHERE t.trace_id = u.trace_id) AS rank,
           u.device,
           coalesce(comp, 0)::BIGINT AS computation_ns,
           (coalesce(cc, 0) - coalesce(comp, 0))::BIGINT AS exposed_comm_ns,
           (coalesce(busy, 0) - coalesce(cc, 0))::BIGINT AS exposed_memcpy_ns,
           coalesce(busy, 0)::BIGINT AS busy_ns,
           (total - coalesce(busy, 0))::BIGINT AS idle_ns,
           total::BIGINT AS total_ns,
           coalesce(comm, 0)::BIGINT AS total_comm_ns,
           coalesce(mcpy, 0)::BIGINT AS total_memcpy_ns
    FROM u
)
SELECT *,
       100.0 * computation_ns / nullif(total_ns, 0) AS computation_pct,
       100.0 * exposed_comm_ns / nullif(total_ns, 0) AS exposed_comm_pct,
       100.0 * exposed_memcpy_ns / nullif(total_ns, 0) AS exposed_memcpy_pct,
       100.0 * busy_ns / nullif(total_ns, 0) AS busy_pct,
       100.0 * idle_ns / nullif(total_ns, 0) AS idle_pct
FROM r
ORDER BY trace_id, device NULLS FIRST;
