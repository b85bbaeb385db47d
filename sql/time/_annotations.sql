-- _annotations: helper — every user annotation, host and device, with the annotation that
-- encloses it and the innermost one enclosing each kernel (for annotation_breakdown, kernel_annotations).
-- Answers: which record_function range (torch.profiler.record_function, ProfilerStep#N, …)
-- holds each annotation and each kernel?
-- depends: slices, kernels
-- Host annotations are the `user_annotation` slices; they nest as the host tree does, so
-- "inside" is a pre-order interval: X is inside U when U.pre < X.pre <= U.subtree_end (a
-- kernel counts at the pre of its launch call). Device annotations are the `gpu_user_annotation`
-- events: Kineto writes each over the device work of one host range, with pid = device and
-- tid = stream; X is inside U, on the same (device, stream), when U.ts <= X.ts < U.end, or
-- U.ts = U.end = X.ts (a zero-length annotation holds what starts at its point); of two
-- annotations starting together the longer is the outer.
-- How, without a per-row lookup: one sweep per (trace, device, stream) (per trace for the host
-- side) over starts (+1), ends (-1) and the points asked about. The running sum at a point is
-- the number of annotations open there, d; on a stack the innermost open one is the latest
-- start that reached level d — an ASOF join on (level, position). Annotations of one stream
-- nest (a stream runs its work in order); should two overlap without nesting, a point whose
-- candidate does not hold it gets none rather than a wrong one. Kernels are marked only where an
-- annotation could hold them: on the host side in traces with host annotations, on the device
-- side on the (device, stream)s with device annotations.
-- Columns (one row per annotation and per kernel inside at least one annotation):
--   trace_id        INTEGER  trace
--   side            VARCHAR  'host' (user_annotation) or 'device' (gpu_user_annotation)
--   kind            VARCHAR  'annotation' or 'kernel': what uid is
--   uid             BIGINT   the annotation's or the kernel's event uid
--   name            VARCHAR  its name
--   device          BIGINT   device (null for host annotations)
--   stream          BIGINT   stream (null for host annotations)
--   ts_ns           BIGINT   ns, start
--   end_ns          BIGINT   ns, end
--   enclosing_uid   BIGINT   the innermost annotation of that side enclosing it (null for none)
CREATE OR REPLACE VIEW _annotations AS
WITH host AS (
    SELECT trace_id, uid, name, ts_ns, end_ns, pre, subtree_end FROM slices WHERE cat = 'user_annotation'
),
dev AS (
    SELECT trace_id, uid, name, coalesce(pid, -1) AS device, coalesce(tid, -1) AS stream, ts_ns,
           coalesce(end_ns, ts_ns) AS end_ns
    FROM events WHERE ph = 'X' AND cat = 'gpu_user_annotation' AND ts_ns IS NOT NULL
),
launched AS (  -- the kernels of traces with host annotations: nowhere else can one be inside
    SELECT k.trace_id, k.uid, k.name, k.device, k.stream, k.ts_ns, k.end_ns, s.pre
    FROM kernels k JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
    SEMI JOIN (SELECT DISTINCT trace_id FROM host) h ON h.trace_id = k.trace_id
),
on_dev AS (  -- the kernels of the (device, stream)s with device annotations, likewise
    SELECT k.trace_id, k.uid, k.name, k.device, k.stream, k.ts_ns, k.end_ns
    FROM kernels k SEMI JOIN (SELECT DISTINCT trace_id, device, stream FROM dev) g
      ON g.trace_id = k.trace_id AND g.device = k.device AND g.stream = k.stream
),
-- marks: (group, position key t, kind, tie, uid, sub) orders the sweep; delta moves the level.
-- Host: at each pre, the point asked about (sub 0) before the annotation's own start (sub 1);
-- ends after the last pre of the subtree. Device: ends of non-empty annotations first, then
-- starts (longer first), each preceded by the point asking for its enclosing one, then kernels,
-- then ends of empty annotations.
marks AS (
    SELECT trace_id, 'host' AS side, -1::BIGINT AS device, -1::BIGINT AS stream, pre AS t, 1 AS kind,
           0::BIGINT AS tie, uid, 0 AS sub, 0 AS delta, 'annotation' AS q FROM host
    UNION ALL SELECT trace_id, 'host', -1, -1, pre, 1, 0, uid, 1, 1, NULL FROM host
    UNION ALL SELECT trace_id, 'host', -1, -1, subtree_end, 2, 0, uid, 0, -1, NULL FROM host
    UNION ALL SELECT trace_id, 'host', -1, -1, pre, 1, 0, uid, 0, 0, 'kernel' FROM launched
    UNION ALL SELECT trace_id, 'device', device, stream, ts_ns, 1, -end_ns, uid, 0, 0, 'annotation' FROM dev
    UNION ALL SELECT trace_id, 'device', device, stream, ts_ns, 1, -end_ns, uid, 1, 1, NULL FROM dev
    UNION ALL SELECT trace_id, 'device', device, stream, end_ns, CASE WHEN end_ns > ts_ns THEN 0 ELSE 3 END,
                     0, uid, 0, -1, NULL FROM dev
    UNION ALL SELECT trace_id, 'device', device, stream, ts_ns, 2, 0, uid, 0, 0, 'kernel' FROM on_dev
),
swept AS (
    SELECT *, sum(delta) OVER w AS level, row_number() OVER w AS pos
    FROM marks
    WINDOW w AS (PARTITION BY trace_id, side, device, stream ORDER BY t, kind, tie, uid, sub
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
starts AS (SELECT trace_id, side, device, stream, level, pos, uid FROM swept WHERE delta = 1),
asked AS (  -- a kernel at host level 0 is under no annotation (host starts are at level 1 or more)
    SELECT trace_id, side, device, stream, level, pos, uid, q FROM swept
    WHERE q = 'annotation' OR q = 'kernel' AND (side = 'device' OR level > 0)
),
found AS (
    SELECT a.trace_id, a.side, a.q, a.uid, s.uid AS enclosing_uid
    FROM asked a ASOF LEFT JOIN starts s
      ON s.trace_id = a.trace_id AND s.side = a.side AND s.device = a.device AND s.stream = a.stream
     AND s.level = a.level AND s.pos < a.pos
),
items AS (
    SELECT trace_id, 'host' AS side, 'annotation' AS kind, uid, name, NULL::BIGINT AS device,
           NULL::BIGINT AS stream, ts_ns, end_ns, pre AS p FROM host
    UNION ALL SELECT trace_id, 'device', 'annotation', uid, name, device, stream, ts_ns, end_ns, NULL FROM dev
    UNION ALL SELECT trace_id, 'host', 'kernel', uid, name, device, stream, ts_ns, end_ns, pre FROM launched
    UNION ALL SELECT trace_id, 'device', 'kernel', uid, name, device, stream, ts_ns, end_ns, NULL FROM on_dev
),
checked AS (
    -- the sweep's candidate, kept only where it really holds the item (see the header)
    SELECT i.trace_id, i.side, i.kind, i.uid, i.name, i.device, i.stream, i.ts_ns, i.end_ns,
           CASE WHEN i.side = 'host' AND h.pre < i.p AND i.p <= h.subtree_end THEN f.enclosing_uid
                WHEN i.side = 'device' AND d.ts_ns <= i.ts_ns
                     AND (i.ts_ns < d.end_ns OR (d.end_ns = d.ts_ns AND i.ts_ns = d.ts_ns))
                THEN f.enclosing_uid END AS enclosing_uid
    FROM items i
    JOIN found f ON f.trace_id = i.trace_id AND f.side = i.side AND f.q = i.kind AND f.uid = i.uid
    LEFT JOIN host h ON i.side = 'host' AND h.trace_id = i.trace_id AND h.uid = f.enclosing_uid
    LEFT JOIN dev d ON i.side = 'device' AND d.trace_id = i.trace_id AND d.uid = f.enclosing_uid
)
SELECT trace_id, side, kind, uid, name, device, stream, ts_ns, end_ns, enclosing_uid
FROM checked
WHERE kind = 'annotation' OR enclosing_uid IS NOT NULL;
