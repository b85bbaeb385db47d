-- step_outliers: every step with its robust z-score against the median step of its group, and whether it is slow.
-- Answers: which steps (ProfilerStep#N, serving iterations) were slow, and by how much, within one
-- trace or across the many traces and ranks of a run in a lake?
-- depends: step_stats, traces
-- A step is compared with the other steps of its group: the same run (traces.run; every trace
-- without a label together: a single trace's own steps) and the same phase (serving: prefill,
-- decode and mixed steps apart; ProfilerStep steps are all `unknown`).
-- z = (dur_ns - median) / spread, spread = greatest(1.4826 × MAD, 1 % of the median): the
-- robust z-score (median and MAD, so the slow steps do not hide themselves by widening the
-- spread), with a floor so that a group of near-identical steps does not make a step 0.1 %
-- slower an outlier. Slow: z > 3.5 (Iglewicz–Hoaglin's fence for robust z-scores, as
-- `stragglers` uses): at the least 3.5 % slower than the median step. A group of fewer than
-- 3 steps has no z. Only slow steps count: a fast one has a negative z. What a slow step
-- spent its extra time on is in step_outlier_causes.
-- Columns:
--   trace_id, rank   INTEGER  trace and its rank (null when unknown)
--   run              VARCHAR  the trace's run label (null without one)
--   step             BIGINT   N of ProfilerStep#N; a serving iteration's 0-based index
--   phase            VARCHAR  prefill, decode, mixed or unknown
--   name             VARCHAR  the step's annotation
--   uid              BIGINT   the annotation's uid
--   ts_ns            BIGINT   ns, the step's start
--   dur_ns           BIGINT   ns, the step time
--   group_steps      BIGINT   steps in its group
--   median_ns        DOUBLE   ns, the group's median step time
--   excess_ns        DOUBLE   ns, dur_ns - median_ns
--   z                DOUBLE   robust z-score (null in a group of fewer than 3 steps)
--   slow             BOOLEAN  z > 3.5
CREATE OR REPLACE VIEW step_outliers AS
WITH s AS (
    SELECT s.trace_id, s.rank, t.run, s.step, s.phase, s.name, s.uid, s.ts_ns, s.dur_ns
    FROM step_stats s JOIN traces t ON t.trace_id = s.trace_id
),
centre AS (
    SELECT run, phase, count(*) AS group_steps, median(dur_ns)::DOUBLE AS median_ns FROM s GROUP BY ALL
),
spread AS (
    SELECT s.run, s.phase, greatest(1.4826 * median(abs(s.dur_ns - c.median_ns)), 0.01 * any_value(c.median_ns)) AS spread
    FROM s JOIN centre c ON c.run IS NOT DISTINCT FROM s.run AND c.phase = s.phase GROUP BY ALL
),
scored AS (
    SELECT s.*, c.group_steps, c.median_ns, s.dur_ns - c.median_ns AS excess_ns,
           CASE WHEN c.group_steps >= 3 THEN (s.dur_ns - c.median_ns) / nullif(p.spread, 0) END AS z
    FROM s
    JOIN centre c ON c.run IS NOT DISTINCT FROM s.run AND c.phase = s.phase
    JOIN spread p ON p.run IS NOT DISTINCT FROM s.run AND p.phase = s.phase
)
SELECT *, coalesce(z > 3.5, false) AS slow
FROM scored
ORDER BY run NULLS LAST, trace_id, ts_ns, uid;
