-- annotation_breakdown: time per user annotation name, on the host and on each device.
-- Answers: how long did each record_function range (a phase, a layer, a custom region) take,
-- how much of the trace does it cover, and how much device time did the work launched inside
-- it take?
-- depends: _annotations, kernels, traces
-- uses: intervals
-- Rules: host rows come from `user_annotation` slices, device rows from `gpu_user_annotation`
-- events (one row per device: Kineto writes them on each stream the range's work ran on).
-- total_ns adds the instances' durations; busy_ns is the union of their intervals, so nested
-- or overlapping instances of one name (recursion, two threads, two streams) count once.
-- gpu_busy_ns is the union, on each device, of the device events inside any instance — for a
-- host row those launched from its subtree, for a device row those it encloses on its stream or
-- in a nested annotation — added over devices; a kernel under two instances counts once.
-- ProfilerStep#N annotations are kept, folded into one row named `ProfilerStep#*` (the steps
-- one by one are in rank_summary / _profiler_steps): its busy_ns is the profiled steps' time,
-- the yardstick for the other rows.
-- Columns (one row per (trace_id, side, device, name)):
--   trace_id     INTEGER  trace
--   rank         INTEGER  rank (null when unknown)
--   side         VARCHAR  'host' or 'device'
--   device       BIGINT   device id of a device row (null for host rows)
--   name         VARCHAR  annotation name (ProfilerStep#N folded into ProfilerStep#*)
--   count        BIGINT   number of instances
--   total_ns     BIGINT   ns, summed duration of the instances
--   busy_ns      BIGINT   ns, union of the instances' intervals
--   span_pct     DOUBLE   % (0-100) of the trace's span (traces.span_ns) covered by busy_ns
--   gpu_busy_ns  BIGINT   ns, union per device of the device events inside, summed over devices (0 when none)
CREATE OR REPLACE VIEW annotation_breakdown AS
WITH RECURSIVE ann AS (
    SELECT trace_id, side, uid, device, ts_ns, end_ns, enclosing_uid,
           CASE WHEN regexp_matches(name, '^ProfilerStep#[0-9]+$') THEN 'ProfilerStep#*' ELSE name END AS name
    FROM _annotations WHERE kind = 'annotation'
),
-- every annotation with itself and each annotation enclosing it
up(trace_id, side, uid, anc_uid) AS (
    SELECT trace_id, side, uid, uid FROM ann
    UNION ALL
    SELECT u.trace_id, u.side, u.uid, a.enclosing_uid
    FROM up u JOIN ann a ON a.trace_id = u.trace_id AND a.side = u.side AND a.uid = u.anc_uid
    WHERE a.enclosing_uid IS NOT NULL
),
inst AS (
    SELECT trace_id, side, coalesce(device, -1) AS dev, name, dur, 
           _tc_union_add(ts_ns, end_ns, trace_id, side, device, name) AS cov
    FROM (SELECT *, end_ns - ts_ns AS dur FROM ann)
),
per_name AS (
    SELECT trace_id, side, dev, name, count(*) AS count, sum(dur) AS total_ns, sum(cov) AS busy_ns
    FROM inst GROUP BY trace_id, side, dev, name
),
under AS (  -- each (annotation name, device event) once
    SELECT DISTINCT k.trace_id, k.side, coalesce(a.device, -1) AS dev, a.name, k.uid, kk.device AS kdev,
           kk.ts_ns, kk.end_ns
    FROM _annotations k
    JOIN up ON up.trace_id = k.trace_id AND up.side = k.side AND up.uid = k.enclosing_uid
    JOIN ann a ON a.trace_id = up.trace_id AND a.side = up.side AND a.uid = up.anc_uid
    JOIN kernels kk ON kk.trace_id = k.trace_id AND kk.uid = k.uid
    WHERE k.kind = 'kernel'
),
gpu AS (
    SELECT trace_id, side, dev, name, sum(cov) AS gpu_busy_ns
    FROM (SELECT *, _tc_union_add(ts_ns, end_ns, trace_id, side, dev, name, kdev) AS cov
          FROM under)
    GROUP BY trace_id, side, dev, name
)
SELECT p.trace_id, t.rank, p.side, CASE WHEN p.side = 'device' THEN p.dev END AS device, p.name,
       p.count, p.total_ns::BIGINT AS total_ns, p.busy_ns::BIGINT AS busy_ns,
       100.0 * p.busy_ns / nullif(t.span_ns, 0) AS span_pct,
       coalesce(g.gpu_busy_ns, 0)::BIGINT AS gpu_busy_ns
FROM per_name p
LEFT JOIN gpu g ON g.trace_id = p.trace_id AND g.side = p.side AND g.dev = p.dev AND g.name = p.name
LEFT JOIN traces t ON t.trace_id = p.trace_id
ORDER BY p.trace_id, p.side DESC, device, p.busy_ns DESC, p.name;
