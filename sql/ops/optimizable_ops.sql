-- optimizable_ops: PyTorch BasicEvaluation's "optimizable events" ranking, for CPU ops.
-- Answers: which host ops ran while the device's launch queue was draining towards empty
-- (the device about to starve), ranked by how much device idle time they overlap and how
-- much self time they have — the ops to make faster (or overlap) first — and where in the
-- Python source they were called.
-- depends: _launch_queue, slices, kernels, traces
-- uses: intervals
-- Steps, per (trace_id, device) (docs/analyses.md has the long form):
-- 1. Queue samples and depths: _launch_queue.
-- 2. Falling phases: reading the samples backwards in time, zeros (depth <= 0) cut them into
--    segments; a segment whose peak depth is >= 4 is a falling phase, running from the time
--    of its peak sample to the time of a zero after it; after one is taken the segment just
--    before it in time is passed over (BasicEvaluation's scan, made exact with window
--    functions: within a run of consecutive qualifying segments every other one is taken).
-- 3. Idle intervals: from the end of the first sample of each run of depth-0 samples to the
--    start of the next sample with depth > 0, plus [first op start, first sample start] and
--    [last sample end, end of the op that starts last].
-- 4. Candidates: cpu_ops of the processes that launched onto the device that overlap a
--    falling phase. idle_ns = the op's overlap with the union of idle intervals.
-- 5. score = z(idle fraction) + 0.6 * z(self time), z-scores over the candidates of the
--    device (sample standard deviation; a term whose deviation is 0 counts 0).
-- Columns (one row per candidate, best first):
--   trace_id       INTEGER  trace
--   rank           INTEGER  rank (null when unknown)
--   device         BIGINT   device whose queue was draining
--   score_rank     BIGINT   1 = most worth optimizing on that device
--   uid            BIGINT   the op
--   name           VARCHAR  op name
--   pid, tid       BIGINT   host process and thread
--   ts_ns          BIGINT   ns, op start
--   dur_ns         BIGINT   ns, op wall time
--   self_ns        BIGINT   ns, host self time (not covered by child slices)
--   idle_ns        BIGINT   ns, device idle time during the op
--   idle_pct       DOUBLE   % (0-100), idle_ns / dur_ns
--   score          DOUBLE   z(idle fraction) + 0.6 z(self time)
--   source         VARCHAR  nearest enclosing python frame whose name looks like file.py(line) (null if none)
CREATE OR REPLACE VIEW optimizable_ops AS
WITH RECURSIVE q AS (
    SELECT *, (depth <= 0)::INT AS z, depth = 0 AS idle,
           sum((depth <= 0)::INT) OVER (PARTITION BY trace_id, device) AS nz,
           sum((depth <= 0)::INT) OVER (PARTITION BY trace_id, device ORDER BY pos ROWS UNBOUNDED PRECEDING) AS zc,
           lag(depth = 0) OVER (PARTITION BY trace_id, device ORDER BY pos) AS prev_idle
    FROM _launch_queue
),
q2 AS (  -- zeros numbered from the latest (k = 0); a non-zero sample belongs to segment k
    SELECT *, nz - zc AS zeros_after,
           CASE WHEN z = 1 THEN nz - zc ELSE nz - zc - 1 END AS k
    FROM q
),
zeros AS (SELECT trace_id, device, k, ts_ns FROM q2 WHERE z = 1),
peaks AS (  -- each segment's deepest sample, the latest of equals
    SELECT trace_id, device, k, arg_max(ts_ns, (depth, pos)) AS peak_ns, max(depth) AS peak
    FROM q2 WHERE z = 0 AND k >= 0
    GROUP BY trace_id, device, k
),
seg AS (
    SELECT z.trace_id, z.device, z.k, p.peak_ns, coalesce(p.peak >= 4, false) AS valid
    FROM zeros z LEFT JOIN peaks p ON p.trace_id = z.trace_id AND p.device = z.device AND p.k = z.k
),
runs AS (
    SELECT *, k - row_number() OVER (PARTITION BY trace_id, device ORDER BY k) AS grp
    FROM seg WHERE valid
),
chosen AS (
    SELECT trace_id, device, k, peak_ns,
           coalesce(lag(k) OVER (PARTITION BY trace_id, device ORDER BY k) + 2, 0) AS a
    FROM (SELECT *, k - min(k) OVER (PARTITION BY trace_id, device, grp) AS pos_in_run FROM runs)
    WHERE pos_in_run % 2 = 0
),
falling AS (
    SELECT c.trace_id, c.device, c.peak_ns AS b, z.ts_ns AS e
    FROM chosen c JOIN zeros z ON z.trace_id = c.trace_id AND z.device = c.device AND z.k = c.a
),
hostp AS (SELECT DISTINCT trace_id, device, launch_pid AS pid FROM kernels WHERE launch_pid IS NOT NULL),
ops AS (
    SELECT h.device, s.trace_id, s.uid, s.name, s.pid, s.tid, s.ts_ns, s.end_ns, s.dur_ns, s.self_ns, s.pre, s.py_uid
    FROM slices s JOIN hostp h ON h.trace_id = s.trace_id AND h.pid = s.pid
    WHERE s.cat = 'cpu_op'
),
idle_iv AS (  -- a run of depth-0 samples starts where the sample before is not one; its next run
             -- starts at the next sample where a run starts
    SELECT trace_id, device, b, e FROM (
        SELECT trace_id, device, idle, end_ns AS b,
               lead(ts_ns) OVER (PARTITION BY trace_id, device ORDER BY pos) AS e
        FROM q WHERE idle IS DISTINCT FROM prev_idle)
    WHERE idle AND e IS NOT NULL
    UNION ALL
    SELECT q.trace_id, q.device, o.first_start, q.first_ts
    FROM (SELECT trace_id, device, arg_min(ts_ns, pos) AS first_ts, arg_max(end_ns, pos) AS last_end
          FROM _launch_queue GROUP BY ALL) q
    JOIN (SELECT trace_id, device, min(ts_ns) AS first_start, arg_max(end_ns, ts_ns) AS last_op_end
          FROM ops GROUP BY ALL) o ON o.trace_id = q.trace_id AND o.device = q.device
    UNION ALL
    SELECT q.trace_id, q.device, q.last_end, o.last_op_end
    FROM (SELECT trace_id, device, arg_max(end_ns, pos) AS last_end FROM _launch_queue GROUP BY ALL) q
    JOIN (SELECT trace_id, device, arg_max(end_ns, ts_ns) AS last_op_end FROM ops GROUP BY ALL) o
      ON o.trace_id = q.trace_id AND o.device = q.device
),
pieces AS (  -- the union of the idle intervals, and that of the falling phases, as disjoint pieces
    SELECT kind, trace_id, device, min(b) AS b, max(e) AS e FROM (
        SELECT *, sum(CASE WHEN pe IS NULL OR b > pe THEN 1 ELSE 0 END)
                      OVER (PARTITION BY kind, trace_id, device ORDER BY b, e ROWS UNBOUNDED PRECEDING) AS isl
        FROM (SELECT *, _tc_prev_end(b, e, kind, trace_id, device) AS pe
              FROM (SELECT 'idle' AS kind, trace_id, device, b, e FROM idle_iv
                    UNION ALL
                    SELECT 'falling', trace_id, device, b, e FROM falling)
              WHERE e > b))
    GROUP BY kind, trace_id, device, isl
),
idle_u AS (SELECT trace_id, device, b, e FROM pieces WHERE kind = 'idle'),
falling_u AS (SELECT trace_id, device, b, e FROM pieces WHERE kind = 'falling'),
cand AS (  -- the last falling piece starting before the op's end is the only one that can overlap it
    SELECT o.* FROM ops o ASOF JOIN falling_u f
      ON f.trace_id = o.trace_id AND f.device = o.device AND o.end_ns > f.b
    WHERE f.e > o.ts_ns
),
idle_cum AS (  -- idle pieces with the idle time before each
    SELECT *, coalesce(sum(e - b) OVER (PARTITION BY trace_id, device ORDER BY b
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM idle_u
),
sc AS (  -- idle time before t = before(last piece starting at or before t) + the part of it before t;
         -- the op's: that before its end less that before its start
    SELECT *, coalesce(idle, 0)::BIGINT AS idle_ns, coalesce(idle, 0) / nullif(dur_ns, 0)::DOUBLE AS frac
    FROM (SELECT c.*, (i2.before + least(c.end_ns, i2.e) - i2.b) - coalesce(i1.before + least(c.ts_ns, i1.e) - i1.b, 0) AS idle
          FROM cand c
          ASOF LEFT JOIN idle_cum i2 ON i2.trace_id = c.trace_id AND i2.device = c.device AND c.end_ns >= i2.b
          ASOF LEFT JOIN idle_cum i1 ON i1.trace_id = c.trace_id AND i1.device = c.device AND c.ts_ns >= i1.b)
),
z AS (
    SELECT *,
           coalesce((frac - avg(frac) OVER d) / nullif(stddev_samp(frac) OVER d, 0), 0)
           + 0.6 * coalesce((self_ns - avg(self_ns) OVER d) / nullif(stddev_samp(self_ns) OVER d, 0), 0) AS score
    FROM sc
    WINDOW d AS (PARTITION BY trace_id, device)
),
frames AS MATERIALIZED (  -- the Python frames of the candidates' threads: where their walks can go
    SELECT s.trace_id, s.uid, s.py_uid, s.name FROM slices s
    SEMI JOIN (SELECT DISTINCT trace_id, pid, tid FROM z) c ON c.trace_id = s.trace_id AND c.pid = s.pid AND c.tid = s.tid
    WHERE s.cat = 'python_function'
),
walk(trace_id, uid, frame) AS (  -- from each candidate up its Python frames (py_uid: the nearest one
                                 -- above a slice) to the first named like file.py(line); the name
                                 -- is tested once the join has found the frame (in a CASE over the
                                 -- walk's own column, which the planner cannot move down to the scan)
    SELECT trace_id, uid, py_uid FROM z WHERE py_uid IS NOT NULL
    UNION ALL
    SELECT w.trace_id, w.uid, f.py_uid
    FROM walk w JOIN frames f ON f.trace_id = w.trace_id AND f.uid = w.frame
    WHERE f.py_uid IS NOT NULL AND CASE WHEN w.uid IS NOT NULL THEN NOT regexp_matches(f.name, '\.py\(.*\)') END
),
src AS (
    SELECT w.trace_id, w.uid, f.name AS source
    FROM walk w JOIN frames f ON f.trace_id = w.trace_id AND f.uid = w.frame
    WHERE CASE WHEN w.uid IS NOT NULL THEN regexp_matches(f.name, '\.py\(.*\)') END
)
SELECT z.trace_id, t.rank, z.device,
       row_number() OVER (PARTITION BY z.trace_id, z.device ORDER BY score DESC, z.uid) AS score_rank,
       z.uid, z.name, z.pid, z.tid, z.ts_ns, z.dur_ns, z.self_ns, z.idle_ns, 100.0 * frac AS idle_pct, score,
       src.source
FROM z
LEFT JOIN src ON src.trace_id = z.trace_id AND src.uid = z.uid
LEFT JOIN traces t ON t.trace_id = z.trace_id
ORDER BY z.trace_id, z.device, score_rank;
