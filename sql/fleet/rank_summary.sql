-- rank_summary: one line per rank — step times, GPU busy and idle, communication.
-- Answers: how long were this rank's training steps, how busy was its GPU, and how much of its
-- time went to communication (all of it, and the part not hidden behind computation)?
-- depends: _profiler_steps, gpu_timeline, collectives, traces
-- Steps come from the ProfilerStep#N annotations (_profiler_steps). GPU figures are
-- gpu_timeline's row for all devices of the trace together (device NULL): busy = union of
-- every device event, idle = span - busy, comm = union of communication kernels, exposed
-- comm = communication not overlapped by computation.
-- One row per trace (a lake has one trace per rank); traces without device events or step
-- annotations have nulls there.
-- Columns:
--   trace_id, rank, world_size  INTEGER  trace, its rank and the job's world size
--   steps                       BIGINT   ProfilerStep annotations in the trace
--   first_step, last_step       BIGINT   N of the first and last ProfilerStep#N
--   step_mean_ns                DOUBLE   ns, mean step time
--   step_median_ns              DOUBLE   ns, median step time
--   step_min_ns, step_max_ns    BIGINT   ns, shortest and longest step
--   steps_total_ns              BIGINT   ns, sum of step times
--   gpu_total_ns                BIGINT   ns, first device event start to last device event end
--   gpu_busy_ns, gpu_idle_ns    BIGINT   ns, union of device events; total - busy
--   gpu_busy_pct, gpu_idle_pct  DOUBLE   % of gpu_total_ns
--   comm_ns                     BIGINT   ns, union of communication kernels
--   exposed_comm_ns             BIGINT   ns, communication not overlapped by computation
--   comm_pct                    DOUBLE   % of gpu_total_ns spent in communication kernels
--   collectives                 BIGINT   communication kernels (rows of `collectives`)
--   comm_bytes                  BIGINT   bytes, sum of msg_bytes of those collectives
CREATE OR REPLACE VIEW rank_summary AS
WITH s AS (
    SELECT trace_id, count(*) AS steps, min(step) AS first_step, max(step) AS last_step,
           avg(dur_ns) AS step_mean_ns, median(dur_ns)::DOUBLE AS step_median_ns,
           min(dur_ns) AS step_min_ns, max(dur_ns) AS step_max_ns, sum(dur_ns)::BIGINT AS steps_total_ns
    FROM _profiler_steps GROUP BY trace_id
),
g AS (
    SELECT trace_id, total_ns, busy_ns, idle_ns, busy_pct, idle_pct, total_comm_ns, exposed_comm_ns
    FROM gpu_timeline WHERE device IS NULL
),
c AS (
    SELECT trace_id, count(*) AS collectives, sum(msg_bytes)::BIGINT AS comm_bytes
    FROM collectives GROUP BY trace_id
)
SELECT t.trace_id, t.rank, t.world_size,
       coalesce(s.steps, 0) AS steps, s.first_step, s.last_step, s.step_mean_ns, s.step_median_ns,
       s.step_min_ns, s.step_max_ns, s.steps_total_ns,
       g.total_ns AS gpu_total_ns, g.busy_ns AS gpu_busy_ns, g.idle_ns AS gpu_idle_ns,
       g.busy_pct AS gpu_busy_pct, g.idle_pct AS gpu_idle_pct,
       g.total_comm_ns AS comm_ns, g.exposed_comm_ns,
       100.0 * g.total_comm_ns / nullif(g.total_ns, 0) AS comm_pct,
       coalesce(c.collectives, 0) AS collectives, c.comm_bytes
FROM traces t
LEFT JOIN s ON s.trace_id = t.trace_id
LEFT JOIN g ON g.trace_id = t.trace_id
LEFT JOIN c ON c.trace_id = t.trace_id
ORDER BY t.rank NULLS LAST, t.trace_id;
