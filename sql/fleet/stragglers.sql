-- stragglers: which ranks are slow, judged against the other ranks of the job, and by how much.
-- Answers: is any rank's step time, or its arrival at collectives, an outlier among the ranks?
-- depends: rank_summary, collectives
-- Two measures per rank:
--   step    = its mean ProfilerStep time (rank_summary.step_mean_ns)
--   arrival = its mean lateness at collectives: for every collective instance (pg_key,
--             collective, seq — see collective_skew) seen on 2 or more ranks, the rank's kernel
--             start minus the earliest start of that instance; averaged over the instances it
--             took part in. A rank the others wait for has a large lateness.
-- Each measure is compared with the median over the ranks, scaled by the median absolute
-- deviation (MAD): robust_z = (x - median) / (1.4826 * MAD) (for normal data 1.4826 * MAD
-- estimates the standard deviation). A rank is an outlier when robust_z > 3.5 (Iglewicz and
-- Hoaglin's cut-off), or, when MAD = 0 (all others equal), when x > median. Only slow
-- outliers count: a fast rank is not a straggler. With fewer than 3 ranks nobody is flagged.
-- One row per rank with a known rank; stragglers first, then by arrival lateness.
-- Columns:
--   rank, trace_id              INTEGER  the rank and its trace
--   step_mean_ns                DOUBLE   ns, mean step time (null without ProfilerStep annotations)
--   step_median_ns              DOUBLE   ns, median over ranks of step_mean_ns
--   step_excess_ns              DOUBLE   ns, step_mean_ns - step_median_ns
--   step_excess_pct             DOUBLE   % of step_median_ns
--   step_robust_z               DOUBLE   (null when MAD = 0)
--   arrival_late_ns             DOUBLE   ns, mean lateness at collectives
--   arrival_median_ns           DOUBLE   ns, median over ranks of arrival_late_ns
--   arrival_excess_ns           DOUBLE   ns, arrival_late_ns - arrival_median_ns
--   arrival_robust_z            DOUBLE   (null when MAD = 0)
--   instances                   BIGINT   collective instances the rank took part in
--   times_last                  BIGINT   instances where it arrived last
--   slow_step                   BOOLEAN  step time is a slow outlier
--   late_arrival                BOOLEAN  arrival lateness is a slow outlier
--   straggler                   BOOLEAN  slow_step OR late_arrival
CREATE OR REPLACE VIEW stragglers AS
WITH inst AS (
    SELECT pg_key, collective, seq, rank, min(ts_ns) AS ts_ns
    FROM collectives WHERE collective IS NOT NULL AND rank IS NOT NULL
    GROUP BY pg_key, collective, seq, rank
),
lat AS (
    SELECT rank, ts_ns - min(ts_ns) OVER w AS late_ns, count(*) OVER w AS n
    FROM inst
    WINDOW w AS (PARTITION BY pg_key, collective, seq)
),
last_rank AS (
    SELECT pg_key, collective, seq, arg_max(rank, (ts_ns, -rank)) AS rank
    FROM inst GROUP BY pg_key, collective, seq HAVING count(*) >= 2
),
arr AS (
    SELECT l.rank, avg(l.late_ns) AS arrival_late_ns, count(*) AS instances,
           (SELECT count(*) FROM last_rank r WHERE r.rank = l.rank) AS times_last
    FROM lat l WHERE l.n >= 2 GROUP BY l.rank
),
base AS (
    SELECT s.rank, s.trace_id, s.step_mean_ns, a.arrival_late_ns,
           coalesce(a.instances, 0) AS instances, coalesce(a.times_last, 0) AS times_last
    FROM rank_summary s LEFT JOIN arr a ON a.rank = s.rank
    WHERE s.rank IS NOT NULL
),
med AS (
    SELECT median(step_mean_ns)::DOUBLE AS step_med, median(arrival_late_ns)::DOUBLE AS arr_med,
           count(step_mean_ns) AS n_step, count(arrival_late_ns) AS n_arr
    FROM base
),
mad AS (
    SELECT median(abs(step_mean_ns - step_med))::DOUBLE AS step_mad,
           median(abs(arrival_late_ns - arr_med))::DOUBLE AS arr_mad
    FROM base, med
),
z AS (
    SELECT b.*, m.step_med, m.arr_med, m.n_step, m.n_arr, d.step_mad, d.arr_mad,
           b.step_mean_ns - m.step_med AS step_excess_ns,
           b.arrival_late_ns - m.arr_med AS arrival_excess_ns,
           (b.step_mean_ns - m.step_med) / nullif(1.4826 * d.step_mad, 0) AS step_z,
           (b.arrival_late_ns - m.arr_med) / nullif(1.4826 * d.arr_mad, 0) AS arr_z
    FROM base b, med m, mad d
),
flags AS (
    SELECT *,
           coalesce(n_step >= 3 AND step_mean_ns IS NOT NULL AND
                    CASE WHEN step_mad = 0 THEN step_excess_ns > 0 ELSE step_z > 3.5 END, false) AS slow_step,
           coalesce(n_arr >= 3 AND arrival_late_ns IS NOT NULL AND
                    CASE WHEN arr_mad = 0 THEN arrival_excess_ns > 0 ELSE arr_z > 3.5 END, false) AS late_arrival
    FROM z
)
SELECT rank, trace_id, step_mean_ns, step_med AS step_median_ns, step_excess_ns,
       100.0 * step_excess_ns / nullif(step_med, 0) AS step_excess_pct, step_z AS step_robust_z,
       arrival_late_ns, arr_med AS arrival_median_ns, arrival_excess_ns, arr_z AS arrival_robust_z,
       instances, times_last, slow_step, late_arrival, slow_step OR late_arrival AS straggler
FROM flags
ORDER BY straggler DESC, arrival_late_ns DESC NULLS LAST, step_mean_ns DESC NULLS LAST, rank;
