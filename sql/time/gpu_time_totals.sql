-- gpu_time_totals: the GPU timeline of every trace added up, as one row.
-- Answers: over all traces together (every rank of a lake), how long were the devices' spans,
-- and how much of that time was busy, computing, communicating without overlap, or idle?
-- depends: gpu_timeline
-- Sums of gpu_timeline's whole-trace rows (device NULL: every device of a trace together), so a
-- trace counts once however many devices it has. The shares are of the summed span. One row,
-- with null sums and shares when no trace has device events.
-- Columns:
--   traces              BIGINT   traces with device events
--   total_ns            BIGINT   ns, summed span (first to last device event of each trace)
--   busy_ns             BIGINT   ns, summed time with any device event running
--   computation_ns      BIGINT   ns, summed computation time
--   exposed_comm_ns     BIGINT   ns, summed communication time not overlapped by computation
--   exposed_memcpy_ns   BIGINT   ns, summed memcpy time not overlapped by computation or communication
--   idle_ns             BIGINT   ns, summed idle time
--   busy_pct            DOUBLE   % (0-100) of total_ns that was busy
--   computation_pct     DOUBLE   % (0-100) of total_ns spent computing
--   exposed_comm_pct    DOUBLE   % (0-100) of total_ns in exposed communication
--   idle_pct            DOUBLE   % (0-100) of total_ns idle
CREATE OR REPLACE VIEW gpu_time_totals AS
WITH t AS (
    SELECT count(*) AS traces, sum(total_ns)::BIGINT AS total_ns, sum(busy_ns)::BIGINT AS busy_ns,
           sum(computation_ns)::BIGINT AS computation_ns, sum(exposed_comm_ns)::BIGINT AS exposed_comm_ns,
           sum(exposed_memcpy_ns)::BIGINT AS exposed_memcpy_ns, sum(idle_ns)::BIGINT AS idle_ns
    FROM gpu_timeline WHERE device IS NULL
)
SELECT traces, total_ns, busy_ns, computation_ns, exposed_comm_ns, exposed_memcpy_ns, idle_ns,
       100 * busy_ns::DOUBLE / nullif(total_ns, 0)::DOUBLE AS busy_pct,
       100 * computation_ns::DOUBLE / nullif(total_ns, 0)::DOUBLE AS computation_pct,
       100 * exposed_comm_ns::DOUBLE / nullif(total_ns, 0)::DOUBLE AS exposed_comm_pct,
       100 * idle_ns::DOUBLE / nullif(total_ns, 0)::DOUBLE AS idle_pct
FROM t;
