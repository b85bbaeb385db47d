-- findings: what to fix first — every rule of sql/findings/ that fired, ranked by the time at stake.
-- Answers: which problems does this trace show, how much GPU time does each put at stake, what
-- is the evidence (events, ops, kernels, ranks), and what should be tried first?
-- depends: slices, kernels, finding_host_idle, finding_launch_bound, finding_exposed_comm, finding_low_roofline, finding_unattributed_replay, finding_straggler, finding_collective_skew, finding_memory_capacity, finding_data_quality, finding_recompute
-- The rules are deterministic SQL over the other views, one file each (docs/analyses.md,
-- Findings). Each says in its header what it detects, its threshold and how it estimates the
-- time at stake. A threshold is the DuckDB variable tc_threshold_<rule> when set
-- (Face.findings(thresholds=…)), else the default its header gives.
-- The times at stake of different findings can cover the same nanoseconds (a host_idle gap can
-- sit inside a launch_bound stretch; two streams can idle at once): each is an estimate on its
-- own, and they are never to be added up. Findings without a time at stake (memory,
-- data quality) come last.
-- Order: stake_ns descending (none last), then severity, rule, trace_id, device, kind, summary.
-- Columns (one row per finding):
--   rule        VARCHAR  the rule: host_idle, launch_bound, exposed_comm, low_roofline, unattributed_replay, straggler, collective_skew, memory_capacity or data_quality
--   severity    VARCHAR  high, medium or low (rules with a time at stake: by stake_pct, 10 % and 2 %)
--   trace_id    INTEGER  trace (for a finding across ranks: the trace of the rank it names)
--   rank        INTEGER  rank (null when unknown)
--   device      BIGINT   device id (null when the finding is about no one device)
--   kind        VARCHAR  what within the rule: host_idle's cause, launch_bound's stream, the op kind, the collective, …
--   stake_ns    BIGINT   ns, the time at stake as the rule estimates it (null for rules that estimate none)
--   stake_pct   DOUBLE   % of the trace's GPU span (gpu_timeline.total_ns, every device together)
--   summary     VARCHAR  what was found, in one line with its numbers
--   uids        BIGINT[] evidence: uids of events it names, the largest first (at most 5)
--   names       VARCHAR[] evidence: names of the ops, kernels or host calls (at most 5)
--   sources     VARCHAR[] evidence: the source lines the evidence events ran under, in their
--                         order: for each, the innermost Python frame `file.py(line): function`
--                         above it (a device event: above its launch call) outside torch's own
--                         package (empty for a trace recorded without with_stack)
--   remedy      VARCHAR  what to try, in one line
CREATE OR REPLACE VIEW findings AS
WITH RECURSIVE f AS (
    SELECT * FROM finding_host_idle
    UNION ALL BY NAME SELECT * FROM finding_launch_bound
    UNION ALL BY NAME SELECT * FROM finding_exposed_comm
    UNION ALL BY NAME SELECT * FROM finding_low_roofline
    UNION ALL BY NAME SELECT * FROM finding_unattributed_replay
    UNION ALL BY NAME SELECT * FROM finding_straggler
    UNION ALL BY NAME SELECT * FROM finding_collective_skew
    UNION ALL BY NAME SELECT * FROM finding_memory_capacity
    UNION ALL BY NAME SELECT * FROM finding_data_quality
    UNION ALL BY NAME SELECT * FROM finding_recompute
),
numbered AS (SELECT row_number() OVER () AS fid, * FROM f),
evidence AS (  -- each evidence event, as the host slice it starts from
    SELECT e.fid, e.i, e.trace_id, coalesce(s.uid, k.launch_uid) AS start_uid
    FROM (SELECT fid, trace_id, unnest(uids) AS uid, generate_subscripts(uids, 1) AS i FROM numbered) e
    LEFT JOIN slices s ON s.trace_id = e.trace_id AND s.uid = e.uid
    LEFT JOIN kernels k ON k.trace_id = e.trace_id AND k.uid = e.uid
),
frames AS MATERIALIZED (  -- the slices a walk can reach: each a frame above another slice
    SELECT s.trace_id, s.uid, s.py_uid, s.name FROM slices s
    SEMI JOIN slices c ON c.trace_id = s.trace_id AND c.py_uid = s.uid
),
walk(fid, i, trace_id, frame, depth) AS (  -- up the Python frames, until one of the user's
    SELECT e.fid, e.i, e.trace_id, s.py_uid, 0
    FROM evidence e JOIN slices s ON s.trace_id = e.trace_id AND s.uid = e.start_uid
    WHERE s.py_uid IS NOT NULL
    UNION ALL
    -- a frame's name is tested once the join has found it: the test, over the walk's column too,
    -- cannot be moved down to the scan of every slice, in every step
    SELECT w.fid, w.i, w.trace_id, p.py_uid, w.depth + 1
    FROM walk w JOIN frames p ON p.trace_id = w.trace_id AND p.uid = w.frame
    WHERE p.py_uid IS NOT NULL
      AND CASE WHEN w.depth < 64 THEN NOT (regexp_matches(p.name, '\.py\(\d+\): ') AND NOT regexp_matches(p.name, '(^|/)torch/')) ELSE false END
),
found AS (
    SELECT w.fid, w.i, arg_min(p.name, w.depth) AS frame
    FROM walk w JOIN frames p ON p.trace_id = w.trace_id AND p.uid = w.frame
    WHERE CASE WHEN w.depth >= 0 THEN regexp_matches(p.name, '\.py\(\d+\): ') AND NOT regexp_matches(p.name, '(^|/)torch/') END
    GROUP BY w.fid, w.i
),
sources AS (
    SELECT fid, list(frame ORDER BY i) AS sources
    FROM (SELECT fid, frame, min(i) AS i FROM found GROUP BY fid, frame) GROUP BY fid
)
SELECT n.rule, n.severity, n.trace_id, n.rank, n.device, n.kind, n.stake_ns, n.stake_pct, n.summary, n.uids, n.names,
       coalesce(src.sources, []::VARCHAR[]) AS sources, n.remedy
FROM numbered n LEFT JOIN sources src ON src.fid = n.fid
ORDER BY n.stake_ns DESC NULLS LAST, CASE n.severity WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END,
         n.rule, n.trace_id, n.device NULLS FIRST, n.kind, n.summary;
