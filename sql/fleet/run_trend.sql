-- run_trend: each per-step metric over the runs of a lake, in run order, with the first run where it moved beyond noise marked.
-- Answers: which run made the step slower, or a kernel class, the idle time or the communication
-- grow, and is that change bigger than the runs' own step-to-step noise?
-- depends: step_stats, traces
-- Runs are the labelled ones (traces.run, `ingest --run LABEL`), in run order (run_seq: the
-- order in which labels first reached the lake). Metrics are per-step samples from step_stats
-- (the rows a lake keeps at ingest: the cost does not grow with the events of a run):
--   step_time, gpu_busy, gpu_idle, comm, exposed_comm, data_loading, sync (step_stats' columns)
--   kernels:<class>   device time the step launched of that kernels.kernel_class (0 in a step without any)
-- A run's value is the median of its samples (every step of every trace of the run).
-- Noise rule: the baseline of run r is the samples of every run before it, pooled; r moved when
--   |value - median(baseline)| > 3 × 1.4826 × MAD(baseline)   and   > 1 % of |median(baseline)|.
-- 1.4826 × MAD is the robust standard deviation of a single step. The unit is a step's spread,
-- not the standard error of a median, because runs differ from each other by more than their
-- steps do (another node, another warm-up): against the standard error every run would
-- differ. k = 3 puts the fence where 0.3 % of normally spread steps would fall, so a run is
-- marked when its typical step lies outside the range of nearly all earlier steps; the 1 %
-- floor keeps copies with no spread at all (MAD 0) from being marked for rounding.
-- A metric's first moved run is marked (first_moved): where it changed. The runs after it are
-- compared with baselines that mix before and after, so `moved` there says little.
-- Columns:
--   metric        VARCHAR  step_time, gpu_busy, gpu_idle, comm, exposed_comm, data_loading, sync, kernels:<class>
--   run           VARCHAR  the run's label
--   run_seq       INTEGER  its place in run order (0 first)
--   samples       BIGINT   steps of the run
--   value_ns      DOUBLE   ns, median of the run's per-step samples
--   baseline_ns   DOUBLE   ns, median of the samples of the runs before it (null for the first run)
--   delta_ns      DOUBLE   ns, value_ns - baseline_ns
--   delta_pct     DOUBLE   %, delta_ns / baseline_ns
--   noise_ns      DOUBLE   ns, 3 × 1.4826 × MAD of the baseline's samples
--   moved         BOOLEAN  beyond noise by the rule above (false for the first run)
--   first_moved   BOOLEAN  the first run in run order where this metric moved
CREATE OR REPLACE VIEW run_trend AS
WITH steps AS (
    SELECT t.run, t.run_seq, s.*
    FROM step_stats s JOIN traces t ON t.trace_id = s.trace_id
    WHERE t.run IS NOT NULL
),
kinds AS (
    SELECT DISTINCT c.kernel_class FROM (SELECT unnest(kernel_classes) AS c FROM steps)
),
class_ns AS (
    SELECT trace_id, uid, c.kernel_class, c.ns FROM (SELECT trace_id, uid, unnest(kernel_classes) AS c FROM steps)
),
samples AS (
    SELECT run, run_seq, metric, v::DOUBLE AS v
    FROM steps UNPIVOT (v FOR metric IN (
        dur_ns AS 'step_time', gpu_busy_ns AS 'gpu_busy', gpu_idle_ns AS 'gpu_idle', comm_ns AS 'comm',
        exposed_comm_ns AS 'exposed_comm', data_loading_ns AS 'data_loading', sync_ns AS 'sync'))
    UNION ALL
    SELECT s.run, s.run_seq, 'kernels:' || k.kernel_class, coalesce(c.ns, 0)::DOUBLE
    FROM steps s CROSS JOIN kinds k
    LEFT JOIN class_ns c ON c.trace_id = s.trace_id AND c.uid = s.uid AND c.kernel_class = k.kernel_class
),
runs AS (
    SELECT metric, run, any_value(run_seq) AS run_seq, count(*) AS samples, median(v) AS value_ns
    FROM samples GROUP BY metric, run
),
base AS (  -- each run's baseline: the samples of the runs before it
    SELECT r.metric, r.run, b.v FROM runs r JOIN samples b ON b.metric = r.metric AND b.run_seq < r.run_seq
),
centre AS (
    SELECT metric, run, median(v) AS baseline_ns FROM base GROUP BY ALL
),
spread AS (
    SELECT b.metric, b.run, 3 * 1.4826 * median(abs(b.v - c.baseline_ns)) AS noise_ns
    FROM base b JOIN centre c ON c.metric = b.metric AND c.run = b.run GROUP BY ALL
),
judged AS (
    SELECT r.metric, r.run, r.run_seq, r.samples, r.value_ns, c.baseline_ns,
           r.value_ns - c.baseline_ns AS delta_ns,
           100.0 * (r.value_ns - c.baseline_ns) / nullif(c.baseline_ns, 0) AS delta_pct,
           s.noise_ns,
           coalesce(abs(r.value_ns - c.baseline_ns) > s.noise_ns
                    AND abs(r.value_ns - c.baseline_ns) > 0.01 * abs(c.baseline_ns), false) AS moved
    FROM runs r
    LEFT JOIN centre c ON c.metric = r.metric AND c.run = r.run
    LEFT JOIN spread s ON s.metric = r.metric AND s.run = r.run
)
SELECT *, coalesce(moved AND run_seq = min(run_seq) FILTER (WHERE moved) OVER (PARTITION BY metric), false) AS first_moved
FROM judged
ORDER BY CASE WHEN metric LIKE 'kernels:%' THEN 1 ELSE 0 END, metric, run_seq;
