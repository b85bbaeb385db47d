-- finding_collective_skew: collectives whose ranks arrive far apart, and the rank that comes last.
-- Answers: for which collective do the early ranks wait longest for the others, and which rank
-- do they wait for?
-- depends: collective_skew, traces, gpu_timeline
-- uses: rules
-- Rule: collective_skew's instances seen on 2 or more ranks, per (pg_key, collective). The rank
-- waited for is the one most often last (ties: the lowest rank).
-- Time at stake: the sum of start_skew_ns over the instances — at each, the first rank to
-- arrive waits that long in its kernel. Instances of one group run one after another, so the
-- sum counts no time twice; it overlaps straggler's estimate when the last rank is a straggler.
-- Threshold tc_threshold_collective_skew, default 1: a time at stake of at least this % of the
-- GPU span of the rank waited for.
-- Columns (one row per (pg_key, collective) over the threshold): every column of findings but sources
CREATE OR REPLACE VIEW finding_collective_skew AS
WITH i AS (SELECT * FROM collective_skew WHERE ranks >= 2),
lastr AS (
    SELECT pg_key, collective, first(last_rank ORDER BY c DESC, last_rank) AS last_rank, max(c) AS times_last
    FROM (SELECT pg_key, collective, last_rank, count(*) AS c FROM i GROUP BY ALL) GROUP BY ALL
),
grp AS (
    SELECT pg_key, collective, count(*) AS calls, sum(start_skew_ns)::BIGINT AS stake_ns,
           avg(start_skew_ns) AS mean_skew_ns
    FROM i GROUP BY ALL
),
x AS (
    SELECT g.*, l.last_rank, l.times_last, t.trace_id, gt.total_ns
    FROM grp g JOIN lastr l ON l.pg_key = g.pg_key AND l.collective = g.collective
    JOIN (SELECT rank, min(trace_id) AS trace_id FROM traces GROUP BY rank) t ON t.rank = l.last_rank
    JOIN gpu_timeline gt ON gt.trace_id = t.trace_id AND gt.device IS NULL
)
SELECT 'collective_skew' AS rule, _tc_severity(100.0 * stake_ns / total_ns) AS severity, trace_id,
       last_rank AS rank, NULL::BIGINT AS device, collective AS kind, stake_ns,
       100.0 * stake_ns / total_ns AS stake_pct,
       printf('%s on %s: ranks arrived %.3f ms apart on average over %d calls; rank %d was last in %d of them',
              collective, pg_key, mean_skew_ns / 1e6, calls, last_rank, times_last) AS summary,
       []::BIGINT[] AS uids, [collective] AS names,
       printf('The other ranks wait for rank %d at %s: balance its work (data, pipeline stage) or find its slowdown (stragglers, rank_kernel_diff).', last_rank, collective) AS remedy
FROM x
WHERE stake_ns > 0 AND 100.0 * stake_ns / total_ns >= _tc_threshold('collective_skew', 1.0)
ORDER BY stake_ns DESC, pg_key, collective;
