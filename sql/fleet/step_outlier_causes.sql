-- step_outlier_causes: for each slow step, what it spent more (or less) time on than the median step of its group.
-- Answers: a step was slow — was it the GPU sitting idle, the collectives, loading data, waiting
-- on a synchronisation, or one class of kernels taking longer, and how many ms of the excess
-- does each explain?
-- depends: step_outliers, step_stats
-- One row per slow step (step_outliers.slow) and cause. A cause's excess is the step's value
-- minus the median of that value over the steps of its group (step_outliers: same run and
-- phase), so a cause the slow step shares with every other step explains nothing. Causes
-- (step_stats' figures):
--   gpu idle               gpu_idle_ns: the device had nothing to run (host gaps, launch delays)
--   collectives (exposed)  exposed_comm_ns: communication not hidden behind computation
--   data loading           data_loading_ns: host time in `enumerate(DataLoader)#…`
--   synchronisation        sync_ns: host time in cuda/hip *Synchronize calls
--   kernels: <class>       device time of the kernels of that class the step launched (communication
--                          kernels are the collectives row)
-- The causes overlap (the host loads data while the device idles), so their excesses are not
-- meant to add up to the step's; each says how much more of that the slow step had.
-- Columns:
--   trace_id, rank  INTEGER  trace and its rank
--   run             VARCHAR  the trace's run label (null without one)
--   step            BIGINT   the slow step (as in step_outliers)
--   uid             BIGINT   its annotation's uid
--   step_excess_ns  DOUBLE   ns, the step's time above its group's median
--   cause           VARCHAR  gpu idle, collectives (exposed), data loading, synchronisation, kernels: <class>
--   step_ns         DOUBLE   ns, the slow step's value of that cause
--   median_ns       DOUBLE   ns, the group's median value of that cause
--   excess_ns       DOUBLE   ns, step_ns - median_ns: what the cause explains of the excess
CREATE OR REPLACE VIEW step_outlier_causes AS
WITH o AS (
    SELECT o.trace_id, o.rank, o.run, o.step, o.phase, o.uid, o.excess_ns AS step_excess_ns, o.slow
    FROM step_outliers o
),
kinds AS (
    SELECT DISTINCT c.kernel_class FROM (SELECT unnest(kernel_classes) AS c FROM step_stats)
    WHERE c.kernel_class <> 'communication'
),
class_ns AS (
    SELECT trace_id, uid, c.kernel_class, c.ns FROM (SELECT trace_id, uid, unnest(kernel_classes) AS c FROM step_stats)
),
wide AS (
    SELECT o.*, s.gpu_idle_ns, s.exposed_comm_ns, s.data_loading_ns, s.sync_ns
    FROM o JOIN step_stats s ON s.trace_id = o.trace_id AND s.uid = o.uid
),
values AS (  -- every step's value of every cause
    SELECT trace_id, rank, run, step, phase, uid, step_excess_ns, slow, cause, v::DOUBLE AS v
    FROM wide UNPIVOT (v FOR cause IN (gpu_idle_ns AS 'gpu idle', exposed_comm_ns AS 'collectives (exposed)',
                                       data_loading_ns AS 'data loading', sync_ns AS 'synchronisation'))
    UNION ALL
    SELECT o.*, 'kernels: ' || k.kernel_class, coalesce(c.ns, 0)::DOUBLE
    FROM o CROSS JOIN kinds k
    LEFT JOIN class_ns c ON c.trace_id = o.trace_id AND c.uid = o.uid AND c.kernel_class = k.kernel_class
),
medians AS (
    SELECT run, phase, cause, median(v) AS median_ns FROM values GROUP BY ALL
)
SELECT v.trace_id, v.rank, v.run, v.step, v.uid, v.step_excess_ns, v.cause, v.v AS step_ns, m.median_ns,
       v.v - m.median_ns AS excess_ns
FROM values v JOIN medians m ON m.run IS NOT DISTINCT FROM v.run AND m.phase = v.phase AND m.cause = v.cause
WHERE v.slow
ORDER BY v.run NULLS LAST, v.trace_id, v.step, excess_ns DESC, v.cause;
