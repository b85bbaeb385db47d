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
-- How: on the host side the tree already knows it: slices.annotation_uid is the nearest
-- user_annotation strictly above a slice (model/tree.py), for an annotation its enclosing one
-- and for a launch call the innermost annotation holding its kernels. On the device side, without
-- a per-row lookup: one sweep per (trace, device, stream) over starts (+1), ends (-1) and the
-- points asked about. The running sum at a point is the number of annotations open there, d; on
-- a stack the innermost open one is the latest start that reached level d — an ASOF join on
-- (level, position). Annotations of one stream nest (a stream runs its work in order); should two
-- overlap without nesting, a point whose candidate does not hold it gets none rather than a wrong
-- one. Kernels are swept only on the (device, stream)s with device annotations.
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
WITH dev AS (
    SELECT trace_id, uid, name, coalesce(pid, -1) AS device, coalesce(tid, -1) AS stream, ts_ns,
           coalesce(end_ns, ts_ns) AS end_ns
    FROM events WHERE ph = 'X' AND cat = 'gpu_user_annotation' AND ts_ns IS NOT NULL
),
on_dev AS (  -- the kernels of the (device, stream)s with device annotations: nowhere else can one be inside
    SELECT k.trace_id, k.uid, k.name, k.device, k.stream, k.ts_ns, k.end_ns
    FROM kernels k SEMI JOIN (SELECT DISTINCT trace_id, device, stream FROM dev) g
      ON g.trace_id = k.trace_id AND g.device = k.device AND g.stream = k.stream
),
-- marks: (group, position key t, kind, tie, uid, sub) orders the sweep; delta moves the level:
-- ends of non-empty annotations first, then starts (longer first), each preceded by the point
-- asking for its enclosing one, then kernels, then ends of empty annotations.
marks AS (
    SELECT trace_id, device, stream, ts_ns AS t, 1 AS kind, -end_ns AS tie, uid, 0 AS sub, 0 AS delta,
           'annotation' AS q FROM dev
    UNION ALL SELECT trace_id, device, stream, ts_ns, 1, -end_ns, uid, 1, 1, NULL FROM dev
    UNION ALL SELECT trace_id, device, stream, end_ns, CASE WHEN end_ns > ts_ns THEN 0 ELSE 3 END, 0, uid, 0, -1,
                     NULL FROM dev
    UNION ALL SELECT trace_id, device, stream, ts_ns, 2, 0, uid, 0, 0, 'kernel' FROM on_dev
),
swept AS (
    SELECT *, sum(delta) OVER w AS level, row_number() OVER w AS pos
    FROM marks
    WINDOW w AS (PARTITION BY trace_id, device, stream ORDER BY t, kind, tie, uid, sub
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
starts AS (SELECT trace_id, device, stream, level, pos, uid FROM swept WHERE delta = 1),
found AS (
    SELECT a.trace_id, a.q, a.uid, s.uid AS enclosing_uid
    FROM (SELECT * FROM swept WHERE q IS NOT NULL) a ASOF LEFT JOIN starts s
      ON s.trace_id = a.trace_id AND s.device = a.device AND s.stream = a.stream AND s.level = a.level
     AND s.pos < a.pos
),
items AS (
    SELECT trace_id, 'device' AS side, 'annotation' AS kind, uid, name, device, stream, ts_ns, end_ns FROM dev
    UNION ALL SELECT trace_id, 'device', 'kernel', uid, name, device, stream, ts_ns, end_ns FROM on_dev
),
device_side AS (
    -- the sweep's candidate, kept only where it really holds the item (see the header)
    SELECT i.trace_id, i.side, i.kind, i.uid, i.name, i.device, i.stream, i.ts_ns, i.end_ns,
           CASE WHEN d.ts_ns <= i.ts_ns AND (i.ts_ns < d.end_ns OR (d.end_ns = d.ts_ns AND i.ts_ns = d.ts_ns))
                THEN f.enclosing_uid END AS enclosing_uid
    FROM items i
    JOIN found f ON f.trace_id = i.trace_id AND f.q = i.kind AND f.uid = i.uid
    LEFT JOIN dev d ON d.trace_id = i.trace_id AND d.uid = f.enclosing_uid
)
SELECT trace_id, 'host' AS side, 'annotation' AS kind, uid, name, NULL::BIGINT AS device, NULL::BIGINT AS stream,
       ts_ns, end_ns, annotation_uid AS enclosing_uid
FROM slices WHERE cat = 'user_annotation'
UNION ALL
SELECT k.trace_id, 'host', 'kernel', k.uid, k.name, k.device, k.stream, k.ts_ns, k.end_ns, s.annotation_uid
FROM kernels k JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
WHERE s.annotation_uid IS NOT NULL
UNION ALL
SELECT * FROM device_side WHERE kind = 'annotation' OR enclosing_uid IS NOT NULL;
