-- critical_path_summary: the critical path of each profiler step split by what bounds it.
-- Answers: is this step's critical path mostly CPU, GPU compute, GPU communication, launch or
-- kernel-kernel overhead, or data loading — how many ns of each, what share of the path and of
-- the step? (HTA's critical path summary.)
-- depends: critical_path, critical_path_edges
-- One row per (trace, window, bound_by) with time on the path; links that count no time
-- (bound_by NULL in critical_path) are left out. pct_of_path is HTA's figure (the shares of one
-- window sum to 100); pct_of_step divides by the window's own duration, which the path may
-- fall short of (time between outermost ops and inside blocking calls counts 0) or exceed
-- (device work launched in the step that runs past its end).
-- Columns:
--   trace_id        INTEGER  trace
--   rank            INTEGER  rank (null when unknown)
--   step            BIGINT   N of the window's ProfilerStep#N (null: the whole trace)
--   window_uid      BIGINT   uid of the window's annotation (null: the whole trace)
--   bound_by        VARCHAR  cpu_bound, data_loading, gpu_compute_bound, gpu_communication_bound,
--                            kernel_launch_overhead or kernel_kernel_overhead
--   segments        BIGINT   segments of the path bound so
--   path_ns         BIGINT   ns of the path bound so
--   pct_of_path     DOUBLE   % (0-100) of the window's path length
--   step_ns         BIGINT   ns, the window's duration (its annotation's; the span of its host
--                            calls for a whole trace)
--   pct_of_step     DOUBLE   % (0-100) of step_ns
CREATE OR REPLACE VIEW critical_path_summary AS
WITH w AS (
    SELECT DISTINCT trace_id, window_uid, window_start_ns, window_end_ns FROM critical_path_edges
),
b AS (
    SELECT trace_id, rank, step, window_uid, bound_by, count(*) AS segments, sum(dur_ns) AS path_ns
    FROM critical_path GROUP BY ALL
),
t AS (
    SELECT *, sum(path_ns) OVER (PARTITION BY trace_id, window_uid) AS total_ns FROM b
)
SELECT t.trace_id, t.rank, t.step, t.window_uid, t.bound_by, t.segments::BIGINT AS segments,
       t.path_ns::BIGINT AS path_ns, 100.0 * t.path_ns / nullif(t.total_ns, 0) AS pct_of_path,
       (w.window_end_ns - w.window_start_ns)::BIGINT AS step_ns,
       100.0 * t.path_ns / nullif(w.window_end_ns - w.window_start_ns, 0) AS pct_of_step
FROM t JOIN w ON w.trace_id = t.trace_id AND w.window_uid IS NOT DISTINCT FROM t.window_uid
WHERE t.bound_by IS NOT NULL
ORDER BY t.trace_id, w.window_start_ns, t.window_uid NULLS FIRST, t.path_ns DESC, t.bound_by;
