"""The formulations some views had before they were rewritten for speed: plain, slower,
and kept here as the reference the rewritten views are checked against
(test_view_rewrites.py). Each is the query alone, without its header comment. `stacks` gave
the text of each path and now gives the tree: AS_PLAIN turns the tree back into those rows."""
import pyarrow as pa

PLAIN = {
    "memory_timeline": r"""
WITH RECURSIVE m AS (
    SELECT trace_id, uid, coalesce(pid, -1) AS pid, coalesce(tid, -1) AS tid, ts_ns, bytes,
           total_allocated_bytes, total_reserved_bytes, addr, device_type, device_id
    FROM events
    WHERE ph IN ('i', 'I') AND name = '[memory]' AND ts_ns IS NOT NULL
),
th AS (  -- slices of the threads that allocate; of those starting together, the deepest (last in pre-order)
    SELECT s.trace_id, s.pid, s.tid, s.ts_ns, arg_max(s.uid, s.pre) AS uid
    FROM slices s SEMI JOIN (SELECT DISTINCT trace_id, pid, tid FROM m) q
      ON q.trace_id = s.trace_id AND q.pid = s.pid AND q.tid = s.tid
    GROUP BY s.trace_id, s.pid, s.tid, s.ts_ns
),
climb(trace_id, uid, t, cur) AS (
    SELECT m.trace_id, m.uid, m.ts_ns, th.uid
    FROM m ASOF JOIN th ON th.trace_id = m.trace_id AND th.pid = m.pid AND th.tid = m.tid AND th.ts_ns <= m.ts_ns
    UNION ALL
    SELECT c.trace_id, c.uid, c.t, s.parent_uid
    FROM climb c JOIN slices s ON s.trace_id = c.trace_id AND s.uid = c.cur
    WHERE NOT (c.t < s.end_ns OR s.end_ns = s.ts_ns AND s.ts_ns = c.t) AND s.parent_uid IS NOT NULL
),
found AS (  -- the slice of the walk that holds the event's time
    SELECT c.trace_id, c.uid, s.op_uid
    FROM climb c JOIN slices s ON s.trace_id = c.trace_id AND s.uid = c.cur
    WHERE c.t < s.end_ns OR s.end_ns = s.ts_ns AND s.ts_ns = c.t
)
SELECT m.trace_id, t.rank, m.device_type,
       CASE m.device_type WHEN 0 THEN 'cpu' WHEN 1 THEN 'cuda' WHEN 6 THEN 'hip' WHEN 9 THEN 'xla'
            WHEN 12 THEN 'xpu' WHEN 13 THEN 'mps' WHEN 19 THEN 'mtia'
            ELSE 'type ' || m.device_type END AS device_kind,
       m.device_id, m.uid, m.pid, m.tid, m.ts_ns, m.bytes,
       m.total_allocated_bytes AS allocated_bytes, m.total_reserved_bytes AS reserved_bytes,
       sum(m.bytes) OVER (PARTITION BY m.trace_id, m.device_type, m.device_id ORDER BY m.ts_ns, m.uid
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS net_bytes,
       m.addr, o.uid AS op_uid, o.name AS op_name
FROM m
LEFT JOIN found f ON f.trace_id = m.trace_id AND f.uid = m.uid
LEFT JOIN slices o ON o.trace_id = f.trace_id AND o.uid = f.op_uid
LEFT JOIN traces t ON t.trace_id = m.trace_id
ORDER BY m.trace_id, m.device_type, m.device_id, m.ts_ns, m.uid
""",
    "_annotations": r"""
WITH host AS (
    SELECT trace_id, uid, name, ts_ns, end_ns, pre, subtree_end FROM slices WHERE cat = 'user_annotation'
),
dev AS (
    SELECT trace_id, uid, name, coalesce(pid, -1) AS device, coalesce(tid, -1) AS stream, ts_ns,
           coalesce(end_ns, ts_ns) AS end_ns
    FROM events WHERE ph = 'X' AND cat = 'gpu_user_annotation' AND ts_ns IS NOT NULL
),
launched AS (
    SELECT k.trace_id, k.uid, k.name, k.device, k.stream, k.ts_ns, k.end_ns, s.pre
    FROM kernels k JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
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
    UNION ALL SELECT trace_id, 'device', device, stream, ts_ns, 2, 0, uid, 0, 0, 'kernel' FROM kernels
),
swept AS (
    SELECT *, sum(delta) OVER w AS level, row_number() OVER w AS pos
    FROM marks
    WINDOW w AS (PARTITION BY trace_id, side, device, stream ORDER BY t, kind, tie, uid, sub
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
starts AS (SELECT trace_id, side, device, stream, level, pos, uid FROM swept WHERE delta = 1),
asked AS (SELECT trace_id, side, device, stream, level, pos, uid, q FROM swept WHERE q IS NOT NULL),
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
    UNION ALL SELECT trace_id, 'device', 'kernel', uid, name, device, stream, ts_ns, end_ns, NULL FROM kernels
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
WHERE kind = 'annotation' OR enclosing_uid IS NOT NULL
""",
    "_op_time": r"""
WITH ev AS (
    SELECT s.trace_id, s.uid, s.name, s.cat, s.pre, s.subtree_end, s.dur_ns, s.self_ns,
           -- a TensorList argument is one level deeper than events.input_dims holds: read it from args
           coalesce(CAST(e.input_dims AS VARCHAR),
                    regexp_replace(json_extract(e.args, '$."Input Dims"')::VARCHAR, ',', ', ', 'g')) AS input_shapes,
           coalesce(to_json(e.input_types)::VARCHAR, json_extract(e.args, '$."Input type"')::VARCHAR) AS input_types
    -- grafted graph nodes other than cpu_ops have no events row (docs/graphs.md)
    FROM slices s LEFT JOIN events e ON e.trace_id = s.trace_id AND e.uid = s.uid
    WHERE s.cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
),
ann AS (
    SELECT trace_id, uid, pre, subtree_end FROM ev WHERE cat = 'user_annotation'
),
kl AS (  -- device events with a launch call in the tree, placed at the deeper of the launch call
         -- and their op: a graph-replayed kernel's op is grafted beneath its graph launch
    SELECT k.trace_id, k.uid AS kuid, k.dur_ns, k.op_uid, k.op_path, greatest(l.pre, o.pre) AS lpre
    FROM kernels k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid
    LEFT JOIN slices o ON o.trace_id = k.trace_id AND o.uid = k.op_uid
),
in_ann AS (  -- each device event under each annotation around its launch call
    SELECT kl.trace_id, a.uid AS ouid, kl.dur_ns, kl.op_uid, a.pre,
           max(a.pre) OVER (PARTITION BY kl.trace_id, kl.kuid) AS inner_pre
    FROM kl JOIN ann a ON a.trace_id = kl.trace_id AND a.pre < kl.lpre AND kl.lpre <= a.subtree_end
),
per AS (
    SELECT trace_id, op_uid AS ouid, sum(dur_ns) AS self_dev, 0 AS dev FROM kl WHERE op_uid IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT trace_id, ouid, 0, sum(dur_ns) FROM (SELECT trace_id, unnest(op_path) AS ouid, dur_ns FROM kl) GROUP BY ALL
    UNION ALL
    SELECT trace_id, ouid, sum(dur_ns) FILTER (WHERE op_uid IS NULL AND pre = inner_pre), sum(dur_ns)
    FROM in_ann GROUP BY ALL
),
dev AS (
    SELECT trace_id, ouid, coalesce(sum(self_dev), 0) AS self_dev, coalesce(sum(dev), 0) AS dev FROM per GROUP BY ALL
)
SELECT ev.trace_id, ev.uid, ev.name, ev.cat, ev.input_shapes, ev.input_types, ev.dur_ns, ev.self_ns,
       coalesce(d.self_dev, 0)::BIGINT AS self_device_ns, coalesce(d.dev, 0)::BIGINT AS device_ns
FROM ev LEFT JOIN dev d ON d.trace_id = ev.trace_id AND d.ouid = ev.uid
""",
    "stacks": r"""
WITH RECURSIVE s AS (
    SELECT trace_id, uid, parent_uid, cat IS DISTINCT FROM 'Trace' AS inc, self_ns,
           coalesce(nullif(translate(name, ';' || chr(13) || chr(10), ',  '), ''), '(unnamed)') AS frame
    FROM slices),
walk(trace_id, uid, inc, self_ns, node, parent_node, frame) AS (
    SELECT trace_id, uid, inc, self_ns,
           CASE WHEN inc THEN min(uid) OVER (PARTITION BY trace_id, inc, frame) END, NULL::BIGINT, frame
    FROM s WHERE parent_uid IS NULL
    UNION ALL
    -- the window sees one level at a time: the rows of this step only
    SELECT c.trace_id, c.uid, c.inc, c.self_ns,
           CASE WHEN c.inc THEN min(c.uid) OVER (PARTITION BY c.trace_id, w.node, c.inc, c.frame) ELSE w.node END,
           w.node, c.frame
    FROM walk w JOIN s c ON c.trace_id = w.trace_id AND c.parent_uid = w.uid),
launched AS (
    SELECT trace_id, CASE WHEN op_uid < 0 THEN op_uid ELSE launch_uid END AS uid, count(*) AS n,
           sum(dur_ns) AS dur_ns
    FROM kernels WHERE launch_uid IS NOT NULL OR op_uid < 0 GROUP BY ALL),
nodes AS (
    SELECT w.trace_id, w.node, any_value(w.parent_node) AS parent_node, any_value(w.frame) AS frame,
           count(*) AS slices, sum(w.self_ns) AS self_cpu_ns, sum(l.n) AS device_events,
           sum(l.dur_ns) AS self_device_ns
    FROM walk w LEFT JOIN launched l ON l.trace_id = w.trace_id AND l.uid = w.uid
    WHERE w.inc
    GROUP BY w.trace_id, w.node),
paths(trace_id, node, stack, frames) AS (
    SELECT trace_id, node, frame, 1 FROM nodes WHERE parent_node IS NULL
    UNION ALL
    SELECT n.trace_id, n.node, p.stack || ';' || n.frame, p.frames + 1
    FROM paths p JOIN nodes n ON n.trace_id = p.trace_id AND n.parent_node = p.node)
SELECT p.trace_id, p.stack, any_value(p.frames)::INTEGER AS frames, sum(n.slices)::BIGINT AS slices,
       sum(n.self_cpu_ns)::BIGINT AS self_cpu_ns, coalesce(sum(n.device_events), 0)::BIGINT AS device_events,
       coalesce(sum(n.self_device_ns), 0)::BIGINT AS self_device_ns
FROM paths p JOIN nodes n USING (trace_id, node)
GROUP BY p.trace_id, p.stack
ORDER BY p.trace_id, p.stack
""",
    "optimizable_ops": r"""
WITH q AS (
    SELECT *, (depth <= 0)::INT AS z,
           sum((depth <= 0)::INT) OVER (PARTITION BY trace_id, device) AS nz,
           sum((depth <= 0)::INT) OVER (PARTITION BY trace_id, device ORDER BY pos ROWS UNBOUNDED PRECEDING) AS zc
    FROM _launch_queue
),
q2 AS (  -- zeros numbered from the latest (k = 0); a non-zero sample belongs to segment k
    SELECT *, nz - zc AS zeros_after,
           CASE WHEN z = 1 THEN nz - zc ELSE nz - zc - 1 END AS k
    FROM q
),
zeros AS (SELECT trace_id, device, k, ts_ns FROM q2 WHERE z = 1),
peaks AS (
    SELECT trace_id, device, k, ts_ns AS peak_ns, depth AS peak
    FROM (SELECT *, row_number() OVER (PARTITION BY trace_id, device, k ORDER BY depth DESC, pos DESC) AS rn
          FROM q2 WHERE z = 0 AND k >= 0)
    WHERE rn = 1
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
    SELECT h.device, s.trace_id, s.uid, s.name, s.pid, s.tid, s.ts_ns, s.end_ns, s.dur_ns, s.self_ns
    FROM slices s JOIN hostp h ON h.trace_id = s.trace_id AND h.pid = s.pid
    WHERE s.cat = 'cpu_op'
),
runs0 AS (  -- runs of equal (depth = 0) flags, for the idle intervals
    SELECT *, sum(chg) OVER (PARTITION BY trace_id, device ORDER BY pos ROWS UNBOUNDED PRECEDING) AS run
    FROM (SELECT *, CASE WHEN (depth = 0) IS DISTINCT FROM lag(depth = 0) OVER (PARTITION BY trace_id, device ORDER BY pos)
                         THEN 1 ELSE 0 END AS chg
          FROM _launch_queue)
),
runhead AS (
    SELECT trace_id, device, run, any_value(depth = 0) AS idle,
           arg_min(end_ns, pos) AS first_end, arg_min(ts_ns, pos) AS first_ts
    FROM runs0 GROUP BY ALL
),
idle_iv AS (
    SELECT trace_id, device, b, e FROM (
        SELECT trace_id, device, idle, first_end AS b,
               lead(first_ts) OVER (PARTITION BY trace_id, device ORDER BY run) AS e
        FROM runhead)
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
        FROM (SELECT *, max(e) OVER (PARTITION BY kind, trace_id, device ORDER BY b, e
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe
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
idle_of AS (  -- idle time before t = before(last piece starting at or before t) + the part of it before t
    SELECT c.trace_id, c.device, c.uid,
           (i2.before + least(c.end_ns, i2.e) - i2.b)
           - coalesce(i1.before + least(c.ts_ns, i1.e) - i1.b, 0) AS idle_ns
    FROM cand c
    ASOF LEFT JOIN idle_cum i2 ON i2.trace_id = c.trace_id AND i2.device = c.device AND c.end_ns >= i2.b
    ASOF LEFT JOIN idle_cum i1 ON i1.trace_id = c.trace_id AND i1.device = c.device AND c.ts_ns >= i1.b
),
sc AS (
    SELECT c.*, coalesce(i.idle_ns, 0)::BIGINT AS idle_ns,
           coalesce(i.idle_ns, 0) / nullif(c.dur_ns, 0)::DOUBLE AS frac
    FROM cand c LEFT JOIN idle_of i ON i.trace_id = c.trace_id AND i.device = c.device AND i.uid = c.uid
),
z AS (
    SELECT *,
           coalesce((frac - avg(frac) OVER d) / nullif(stddev_samp(frac) OVER d, 0), 0)
           + 0.6 * coalesce((self_ns - avg(self_ns) OVER d) / nullif(stddev_samp(self_ns) OVER d, 0), 0) AS score
    FROM sc
    WINDOW d AS (PARTITION BY trace_id, device)
),
frames AS (  -- python frames named like file.py(line): intervals [pre, subtree_end] of the pre-order
    SELECT trace_id, name, pre, subtree_end FROM slices
    WHERE cat = 'python_function' AND regexp_matches(name, '\.py\(.*\)')
),
cpos AS (SELECT DISTINCT z.trace_id, z.uid, 2 * s.pre AS x
         FROM z JOIN slices s ON s.trace_id = z.trace_id AND s.uid = z.uid),
marks AS (  -- in one pre-order stream: frame starts (+1, key 2·pre+1), frame ends (-1, key
            -- 2·subtree_end+1) and candidates (0, key 2·pre): a candidate lies strictly inside
            -- a frame exactly when the frame's start and not its end come before it
    SELECT trace_id, 2 * pre + 1 AS k, 1 AS delta, name, NULL::BIGINT AS uid FROM frames
    UNION ALL SELECT trace_id, 2 * subtree_end + 1, -1, NULL, NULL FROM frames
    UNION ALL SELECT trace_id, x, 0, NULL, uid FROM cpos
),
leveled AS (  -- frames open after each mark: a start's own level, a candidate's count of
              -- enclosing frames (at one key a leaf frame's start comes before its end)
    SELECT *, sum(delta) OVER (PARTITION BY trace_id ORDER BY k, delta DESC ROWS UNBOUNDED PRECEDING) AS level
    FROM marks
),
src AS (  -- frames nest, so the innermost one around a candidate is the last start before it
          -- at its level: any later start at that level had to close first
    SELECT trace_id, uid, source FROM (
        SELECT trace_id, uid, delta,
               last_value(name IGNORE NULLS) OVER (PARTITION BY trace_id, level ORDER BY k
                                                   ROWS UNBOUNDED PRECEDING) AS source
        FROM leveled WHERE delta >= 0)
    WHERE delta = 0
)
SELECT z.trace_id, t.rank, z.device,
       row_number() OVER (PARTITION BY z.trace_id, z.device ORDER BY score DESC, z.uid) AS score_rank,
       z.uid, z.name, z.pid, z.tid, z.ts_ns, z.dur_ns, z.self_ns, z.idle_ns, 100.0 * frac AS idle_pct, score,
       src.source
FROM z
LEFT JOIN src ON src.trace_id = z.trace_id AND src.uid = z.uid
LEFT JOIN traces t ON t.trace_id = z.trace_id
ORDER BY z.trace_id, z.device, score_rank
""",
    "inference_steps": r"""
WITH marks AS (
    SELECT s.trace_id, s.rank, s.uid, s.name, s.pid, s.tid, s.ts_ns, s.dur_ns, s.pre, s.subtree_end,
           regexp_matches(s.name, '^execute_[0-9]+_context_[0-9]+\(.*\)_generation_[0-9]+\(')
               OR regexp_matches(s.name, '^step\[[A-Za-z]+') AS serving
    FROM slices s
    WHERE (s.cat = 'user_annotation' OR (s.cat = 'cpu_op' AND s.name LIKE 'ProfilerStep#%'))  -- older torch: cpu_op
      AND (regexp_matches(s.name, '^execute_[0-9]+_context_[0-9]+\(.*\)_generation_[0-9]+\(')
           OR regexp_matches(s.name, '^step\[[A-Za-z]+') OR s.name LIKE 'ProfilerStep#%')
),
kind AS (  -- serving annotations where a trace has any, else ProfilerStep#N
    SELECT m.* FROM marks m
    WHERE m.serving = (SELECT bool_or(serving) FROM marks x WHERE x.trace_id = m.trace_id)
),
steps AS (  -- the outermost: no other chosen annotation of its thread encloses it
    SELECT k.* FROM kind k
    WHERE NOT EXISTS (SELECT 1 FROM kind o WHERE o.trace_id = k.trace_id AND o.pre < k.pre
                      AND k.pre <= o.subtree_end)
),
parsed AS (
    SELECT *,
           TRY_CAST(regexp_extract(name, '^execute_([0-9]+)_', 1) AS BIGINT) AS tokens,
           TRY_CAST(regexp_extract(name, '_context_([0-9]+)\(', 1) AS BIGINT) AS prefill_requests,
           coalesce(TRY_CAST(regexp_extract(name, '_generation_([0-9]+)\(', 1) AS BIGINT),
                    CASE WHEN regexp_matches(name, '^step\[DECODE')
                         THEN TRY_CAST(regexp_extract(name, 'bs=([0-9]+)', 1) AS BIGINT) END) AS decode_requests,
           upper(regexp_extract(name, '^step\[([A-Za-z]+)', 1)) AS word
    FROM steps
),
phased AS (
    SELECT *, CASE
        WHEN prefill_requests > 0 AND decode_requests > 0 THEN 'mixed'
        WHEN prefill_requests > 0 THEN 'prefill'
        WHEN decode_requests > 0 THEN 'decode'
        WHEN word IN ('PREFILL', 'EXTEND') THEN 'prefill'
        WHEN word = 'DECODE' THEN 'decode'
        WHEN word = 'MIXED' THEN 'mixed'
        ELSE 'unknown' END AS phase
    FROM parsed
),
dev AS (  -- each step's device events: their launch call lies in the step's subtree
    SELECT p.trace_id, p.uid AS step_uid, k.ts_ns, k.end_ns, k.dur_ns, k.launch_uid, k.launch_name
    FROM (SELECT k.trace_id, k.ts_ns, k.end_ns, k.dur_ns, k.launch_uid, k.launch_name, l.pre AS lpre
          FROM kernels k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid) k
    JOIN phased p ON p.trace_id = k.trace_id AND k.lpre > p.pre AND k.lpre <= p.subtree_end
),
g AS (  -- what each event adds to the union of its step's (sql/core/_macros.sql)
    SELECT *, _tc_covered(ts_ns, end_ns, max(end_ns) OVER (PARTITION BY trace_id, step_uid ORDER BY ts_ns, end_ns
                                                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS c
    FROM dev
),
per AS (
    SELECT trace_id, step_uid, count(*)::BIGINT AS kernels, sum(c)::BIGINT AS gpu_busy_ns,
           sum(dur_ns)::BIGINT AS gpu_kernel_sum_ns, min(ts_ns) AS gpu_start_ns, max(end_ns) AS gpu_end_ns
    FROM g GROUP BY ALL
),
graphs AS (
    SELECT trace_id, step_uid, count(DISTINCT launch_uid) AS graph_launches
    FROM dev WHERE launch_name LIKE '%GraphLaunch%' GROUP BY ALL
)
SELECT p.trace_id, p.rank,
       row_number() OVER (PARTITION BY p.trace_id ORDER BY p.ts_ns, p.uid) - 1 AS step,
       p.phase,
       row_number() OVER (PARTITION BY p.trace_id, p.phase ORDER BY p.ts_ns, p.uid) - 1 AS phase_step,
       p.uid, p.name, p.tokens, p.prefill_requests, p.decode_requests, p.ts_ns, p.dur_ns,
       coalesce(d.kernels, 0) AS kernels, coalesce(gr.graph_launches, 0) AS graph_launches,
       coalesce(d.gpu_busy_ns, 0) AS gpu_busy_ns, coalesce(d.gpu_kernel_sum_ns, 0) AS gpu_kernel_sum_ns,
       d.gpu_start_ns, d.gpu_end_ns
FROM phased p
LEFT JOIN per d ON d.trace_id = p.trace_id AND d.step_uid = p.uid
LEFT JOIN graphs gr ON gr.trace_id = p.trace_id AND gr.step_uid = p.uid
ORDER BY p.trace_id, p.ts_ns, p.uid
""",
    "tracelens_ops_summary": r"""
WITH launchers AS (  -- each launcher instance and its two busy times (_tracelens_launcher_time)
    SELECT t.trace_id, t.uid, t.pre, t.name, t.direct_ns, t.subtree_ns, s.is_recompute,
           regexp_replace(m.name, '_\d+$', '') AS parent_module
    FROM _tracelens_launcher_time t
    JOIN slices s ON s.trace_id = t.trace_id AND s.uid = t.uid
    LEFT JOIN slices m ON m.trace_id = s.trace_id AND m.uid = s.module_uid
),
per_name AS (
    SELECT trace_id, name, is_recompute, parent_module,
           sum(direct_ns) / 1000.0 AS total_direct_kernel_time_sum,
           sum(subtree_ns) / 1000.0 AS total_subtree_kernel_time_sum,
           count(*) FILTER (WHERE subtree_ns > 0 OR direct_ns > 0) AS total_subtree_kernel_time_count,
           count(*) AS "Count", arg_min(uid, pre) AS first_uid
    FROM launchers
    GROUP BY ALL
),
stack AS (  -- the first instance, then each nn.Module frame above it, outward
    SELECT trace_id, first_uid, '[' || string_agg('''' || frame || '''', ', ' ORDER BY lvl) || ']' AS call_stack_first
    FROM (
        WITH RECURSIVE up(trace_id, first_uid, lvl, frame, next_uid) AS (
            SELECT p.trace_id, p.first_uid, 0, p.name, s.module_uid
            FROM per_name p JOIN slices s ON s.trace_id = p.trace_id AND s.uid = p.first_uid
            UNION ALL
            SELECT up.trace_id, up.first_uid, up.lvl + 1, s.name, s.module_uid
            FROM up JOIN slices s ON s.trace_id = up.trace_id AND s.uid = up.next_uid
        )
        SELECT * FROM up)
    GROUP BY ALL
),
cat AS (  -- launch calls that launch for themselves are not in the category list: 'other'
    SELECT p.*, coalesce(c.category, 'other') AS op_category, st.call_stack_first
    FROM per_name p LEFT JOIN _tracelens_op_category c ON c.name = p.name
    LEFT JOIN stack st ON st.trace_id = p.trace_id AND st.first_uid = p.first_uid
)
SELECT trace_id, name, is_recompute, parent_module,
       total_direct_kernel_time_sum, total_subtree_kernel_time_sum, total_subtree_kernel_time_count,
       total_direct_kernel_time_sum / 1000.0 AS total_direct_kernel_time_ms,
       total_subtree_kernel_time_sum / 1000.0 AS total_subtree_kernel_time_ms,
       "Count",
       '[''' || op_category || ''']' AS "Categories", call_stack_first,
       100.0 * total_direct_kernel_time_sum
           / nullif(sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id), 0) AS "Percentage (%)",
       100.0 * sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id
                   ORDER BY total_direct_kernel_time_sum DESC, name, is_recompute, parent_module ROWS UNBOUNDED PRECEDING)
           / nullif(sum(total_direct_kernel_time_sum) OVER (PARTITION BY trace_id), 0) AS "Cumulative Percentage (%)"
FROM cat
ORDER BY trace_id, total_direct_kernel_time_sum DESC, name, is_recompute, parent_module
""",
}


def stack_texts(rows):
    """{(trace_id, node): stack text} for `stacks` rows (dicts): from each node, a walk up
    `parent` to the root, one row at a time."""
    by_node = {(r["trace_id"], r["node"]): r for r in rows}
    out = {}
    for key, r in by_node.items():
        frames = []
        while r is not None:
            frames.append(r["frame"])
            r = None if r["parent"] is None else by_node[key[0], r["parent"]]
        out[key] = ";".join(reversed(frames))
    return out


def _stacks_as_text(tree):
    """The rows of the `stacks` tree (an Arrow table) as the plain query gives them: the stack's
    text instead of node, parent and frame."""
    rows = tree.to_pylist()
    text = stack_texts(rows)
    cols = ("self_cpu_ns", "device_events", "self_device_ns")
    return pa.table({"trace_id": pa.array([r["trace_id"] for r in rows], pa.int32()),
                     "stack": pa.array([text[r["trace_id"], r["node"]] for r in rows], pa.string()),
                     "frames": pa.array([r["frames"] for r in rows], pa.int32()),
                     "slices": pa.array([r["slices"] for r in rows], pa.int64()),
                     **{c: pa.array([r[c] for r in rows], pa.int64()) for c in cols}})


# view -> its rows in the shape of the plain query
AS_PLAIN = {"stacks": _stacks_as_text}
