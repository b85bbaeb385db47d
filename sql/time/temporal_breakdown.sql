-- temporal_breakdown: HTA's temporal breakdown — of the device's active span, how much was
-- idle, computing, or doing something else (communication, copies).
-- Answers: is this rank's GPU starved (idle), busy with useful math (compute), or busy with
-- communication and memory traffic (non-compute)?
-- depends: _hta_unions, traces
-- Rules (HTA): kernel_time = end of the last device event - start of the first;
-- idle = kernel_time - union of all device events; compute = union of computation kernels
-- (HTA's kernel types, see _hta_unions); non_compute = kernel_time - compute - idle.
-- Columns (one row per (trace_id, device), plus device NULL for the trace's devices together):
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank of that trace (null when unknown)
--   device           BIGINT   device id; NULL = all devices of the trace
--   kernel_time_ns   BIGINT   ns, span of the device events
--   idle_ns          BIGINT   ns
--   compute_ns       BIGINT   ns
--   non_compute_ns   BIGINT   ns
--   idle_pct, compute_pct, non_compute_pct  DOUBLE  % (0-100) of kernel_time_ns (they sum to 100)
CREATE OR REPLACE VIEW temporal_breakdown AS
WITH b AS (
    SELECT u.trace_id, t.rank, u.device, (u.last_ns - u.first_ns) AS kernel_time_ns,
           (u.last_ns - u.first_ns - u.busy_ns) AS idle_ns, u.compute_ns
    FROM _hta_unions u LEFT JOIN traces t ON t.trace_id = u.trace_id
)
SELECT trace_id, rank, device, kernel_time_ns::BIGINT AS kernel_time_ns, idle_ns::BIGINT AS idle_ns,
       compute_ns::BIGINT AS compute_ns, (kernel_time_ns - compute_ns - idle_ns)::BIGINT AS non_compute_ns,
       100.0 * idle_ns / nullif(kernel_time_ns, 0) AS idle_pct,
       100.0 * compute_ns / nullif(kernel_time_ns, 0) AS compute_pct,
       100.0 * (kernel_time_ns - compute_ns - idle_ns) / nullif(kernel_time_ns, 0) AS non_compute_pct
FROM b
ORDER BY trace_id, device NULLS FIRST;
