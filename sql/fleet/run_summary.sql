-- run_summary: one line per run of a lake — step time, GPU busy and idle, exposed communication, the kernel classes that take the time.
-- Answers: how did each run of this job (a commit, a date, a config: `ingest --run LABEL`) do, in run order?
-- depends: step_stats, traces
-- A run is the traces ingested under one label (traces.run); the traces without a label form
-- one more run (run NULL: a single trace, or a lake ingested without --run), listed last. Run
-- order is run_seq, the order in which labels first reached the lake (docs/fleet.md).
-- Every figure is over the run's steps (step_stats rows: every rank and every trace of the
-- run together), so it reads the per-step rows a lake keeps, never the events: medians per
-- step for the times, totals for the percentages. Kernel classes are kernels.kernel_class
-- (gemm, conv, attention, elementwise, communication, …): the op families of the GPU's time.
-- Columns:
--   run                 VARCHAR  the run's label (null: the traces without one)
--   run_seq             INTEGER  its place in run order (0 first; null with run)
--   traces              BIGINT   traces of the run
--   steps               BIGINT   steps (ProfilerStep#N or serving iterations) of those traces
--   step_time_ns        DOUBLE   ns, median step time
--   gpu_busy_ns         DOUBLE   ns, median per step of the GPU's busy time in the step
--   gpu_idle_ns         DOUBLE   ns, median per step of the GPU's idle time in the step
--   gpu_busy_pct        DOUBLE   % of the steps' time the GPU was busy (sums over the steps)
--   comm_ns             DOUBLE   ns, median per step of communication time
--   exposed_comm_ns     DOUBLE   ns, median per step of communication not overlapped by computation
--   data_loading_ns     DOUBLE   ns, median per step of host time loading data
--   sync_ns             DOUBLE   ns, median per step of host time in synchronisation calls
--   top_kernel_classes  VARCHAR  the three kernel classes with the most device time per step, with their mean ms per step
CREATE OR REPLACE VIEW run_summary AS
WITH s AS (
    SELECT t.run, t.run_seq, s.*
    FROM step_stats s JOIN traces t ON t.trace_id = s.trace_id
),
runs AS (
    SELECT run, any_value(run_seq) AS run_seq, count(DISTINCT trace_id) AS traces, count(*) AS steps,
           median(dur_ns)::DOUBLE AS step_time_ns, median(gpu_busy_ns)::DOUBLE AS gpu_busy_ns,
           median(gpu_idle_ns)::DOUBLE AS gpu_idle_ns,
           100.0 * sum(gpu_busy_ns) / nullif(sum(dur_ns), 0) AS gpu_busy_pct,
           median(comm_ns)::DOUBLE AS comm_ns, median(exposed_comm_ns)::DOUBLE AS exposed_comm_ns,
           median(data_loading_ns)::DOUBLE AS data_loading_ns, median(sync_ns)::DOUBLE AS sync_ns
    FROM s GROUP BY run
),
classes AS (  -- mean device time per step of each kernel class
    SELECT s.run, c.kernel_class, sum(c.ns) / any_value(r.steps) AS per_step_ns
    FROM (SELECT run, unnest(kernel_classes) AS c FROM s) AS s(run, c)
    JOIN runs r ON r.run IS NOT DISTINCT FROM s.run
    GROUP BY s.run, c.kernel_class
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY run ORDER BY per_step_ns DESC, kernel_class) AS k FROM classes
),
top AS (
    SELECT run, string_agg(printf('%s %.1f ms', kernel_class, per_step_ns / 1e6), ', ' ORDER BY k) AS top_kernel_classes
    FROM ranked WHERE k <= 3 GROUP BY run
)
SELECT r.run, r.run_seq, r.traces, r.steps, r.step_time_ns, r.gpu_busy_ns, r.gpu_idle_ns, r.gpu_busy_pct,
       r.comm_ns, r.exposed_comm_ns, r.data_loading_ns, r.sync_ns, t.top_kernel_classes
FROM runs r LEFT JOIN top t ON t.run IS NOT DISTINCT FROM r.run
ORDER BY r.run_seq NULLS LAST, r.run;
