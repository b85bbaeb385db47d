-- stacks: the host call tree folded into stacks — one row per distinct root-to-slice path of frame names, with the self time of the slices at exactly that path.
-- Answers: where does host time (or the device time it launched) go, by call stack: the rows of a flame graph (`tracecols stacks`).
-- depends: slices, kernels
-- Frames: every host slice (Python frames, cpu_ops, user annotations, runtime and driver calls,
-- …) except the profiler's own `Trace` span (it covers the whole capture; its self time is
-- not the program's). A slice of a left-out category adds no frame: its children hang from its
-- parent's path. Paths of different threads with the same names are one row.
-- Frame names: `;` becomes `,` and carriage returns and newlines become spaces (the folded
-- format splits frames on `;` and lines on newlines); a null or empty name is `(unnamed)`.
-- Device time: device events (kernels, memcpy, memset) count at the path of the slice that
-- launched them: their launch call (`kernels.launch_uid`, a runtime call), except in a replayed
-- CUDA/HIP graph, where they count at the op grafted under the graph launch (`op_uid` < 0: the
-- captured op matched with --capture, else the `graph replay @ …` op; docs/graphs.md). A sum of
-- durations: events overlapping on two streams both count. Device events without a launch call
-- in the trace are in no row.
-- How: a recursive walk down `parent_uid`, one step per tree level, gives each slice the id of
-- its path (the smallest uid among the slices one level down from the same path with the same
-- frame name), integers only; the path text is then built once per distinct path, so the
-- work is the number of slices times the depth plus the size of the answer, never a string per
-- slice.
-- Columns:
--   trace_id        INTEGER  trace
--   stack           VARCHAR  frame names from the root down, joined by `;`
--   frames          INTEGER  number of frames in the stack
--   slices          BIGINT   slices at exactly this path
--   self_cpu_ns     BIGINT   ns, sum of their self time (slices.self_ns)
--   device_events   BIGINT   device events launched directly by those slices
--   self_device_ns  BIGINT   ns, sum of those events' durations (kernels.dur_ns)
CREATE OR REPLACE VIEW stacks AS
WITH RECURSIVE s AS (
    SELECT trace_id, uid, parent_uid, cat IS DISTINCT FROM 'Trace' AS inc, self_ns,
           coalesce(nullif(translate(name, ';' || chr(13) || chr(10), ',  '), ''), '(unnamed)') AS frame
    FROM slices),
-- node: the path id of an included slice; an excluded one passes its parent's on
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
-- one path can get two ids when a left-out slice sits on it at one place and not at another
SELECT p.trace_id, p.stack, any_value(p.frames)::INTEGER AS frames, sum(n.slices)::BIGINT AS slices,
       sum(n.self_cpu_ns)::BIGINT AS self_cpu_ns, coalesce(sum(n.device_events), 0)::BIGINT AS device_events,
       coalesce(sum(n.self_device_ns), 0)::BIGINT AS self_device_ns
FROM paths p JOIN nodes n USING (trace_id, node)
GROUP BY p.trace_id, p.stack
ORDER BY p.trace_id, p.stack;
