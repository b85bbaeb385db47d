-- finding_straggler: ranks the other ranks of the job wait for.
-- Answers: is one rank slower than the others, by its steps or by its arrival at collectives,
-- and how much time does that cost the job?
-- depends: stragglers, rank_summary, gpu_timeline
-- uses: rules
-- Rule: stragglers' `straggler` ranks (a robust z-score over 3.5 against the median rank;
-- nobody with fewer than 3 ranks).
-- Time at stake: the larger of two estimates of the same loss, never their sum (a late arrival
-- is part of a slow step): step = step_excess_ns × the rank's steps (rank_summary.steps);
-- arrival = arrival_excess_ns × the collective instances it took part in. kind says which.
-- Threshold tc_threshold_straggler, default 1: a time at stake of at least this % of the
-- rank's GPU span.
-- Columns (one row per straggler rank over the threshold): every column of findings but sources
CREATE OR REPLACE VIEW finding_straggler AS
WITH s AS (
    SELECT st.*, coalesce(st.step_excess_ns * r.steps, 0) AS step_stake,
           coalesce(st.arrival_excess_ns * st.instances, 0) AS arrival_stake
    FROM stragglers st JOIN rank_summary r ON r.trace_id = st.trace_id
    WHERE st.straggler
),
x AS (
    SELECT s.*, greatest(step_stake, arrival_stake) AS stake,
           CASE WHEN step_stake >= arrival_stake THEN 'step' ELSE 'arrival' END AS kind, g.total_ns
    FROM s JOIN gpu_timeline g ON g.trace_id = s.trace_id AND g.device IS NULL
)
SELECT 'straggler' AS rule, _tc_severity(100.0 * stake / total_ns) AS severity, trace_id, rank,
       NULL::BIGINT AS device, kind, round(stake)::BIGINT AS stake_ns, 100.0 * stake / total_ns AS stake_pct,
       printf('rank %d: mean step %s ms (%s %% over the median rank); %s ms later than the median rank at collectives, last in %d of %d',
              rank, coalesce(printf('%.3f', step_mean_ns / 1e6), '?'), coalesce(printf('%+.1f', step_excess_pct), '?'),
              coalesce(printf('%.3f', arrival_excess_ns / 1e6), '?'), coalesce(times_last, 0), coalesce(instances, 0)) AS summary,
       []::BIGINT[] AS uids, []::VARCHAR[] AS names,
       'Find what differs on this rank: its data (uneven batches), host (load, CPU, NUMA), GPU (clocks, heat) or links; rank_kernel_diff shows which kernels differ.' AS remedy
FROM x
WHERE stake > 0 AND 100.0 * stake / total_ns >= _tc_threshold('straggler', 1.0)
ORDER BY stake DESC, trace_id;
