-- comm_compute_overlap: how much of the communication time is hidden behind computation.
-- Answers: when this rank communicates, is the device also computing (good overlap), or
-- waiting for the collective (exposed communication)?
-- depends: _hta_unions, traces
-- Rule (HTA): overlap = time covered by both the computation union and the communication
-- union, as % of the communication union. Kernel types as in _hta_unions.
-- Columns (one row per (trace_id, device), plus device NULL for the trace's devices together):
--   trace_id          INTEGER  trace
--   rank              INTEGER  rank of that trace (null when unknown)
--   device            BIGINT   device id; NULL = all devices of the trace
--   comm_ns           BIGINT   ns, union of communication kernels
--   compute_ns        BIGINT   ns, union of computation kernels
--   overlap_ns        BIGINT   ns, time covered by both
--   exposed_comm_ns   BIGINT   ns, communication time not covered by computation
--   overlap_pct       DOUBLE   % (0-100) of comm_ns overlapped by computation; null without communication
CREATE OR REPLACE VIEW comm_compute_overlap AS
SELECT u.trace_id, t.rank, u.device, u.comm_ns, u.compute_ns,
       (u.compute_ns + u.comm_ns - u.compute_or_comm_ns)::BIGINT AS overlap_ns,
       (u.compute_or_comm_ns - u.compute_ns)::BIGINT AS exposed_comm_ns,
       100.0 * (u.compute_ns + u.comm_ns - u.compute_or_comm_ns) / nullif(u.comm_ns, 0) AS overlap_pct
FROM _hta_unions u LEFT JOIN traces t ON t.trace_id = u.trace_id
ORDER BY u.trace_id, u.device NULLS FIRST;
