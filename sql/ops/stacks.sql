-- stacks: the host call tree folded into a calling-context tree — one row per distinct root-to-slice path of frame names, with the self time of the slices at exactly that path and the path one frame up.
-- Answers: where does host time (or the device time it launched) go, by call stack: the nodes of a flame graph (`tracecols stacks` writes them as folded lines).
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
-- How: slices.stack_id already names each slice's path (computed with the tree, model/tree.py:
-- a running XOR in pre-order of 64 bits per frame, md5 of its name mixed with its level; equal
-- for two slices exactly when their paths are, up to a probability of 2^-64 a pair); a path's slices are grouped by it, and the path
-- one frame up is the stack_id of the slice above any of them (the same for all: the slices of a
-- path have parents of one path). The level of a frame is its depth less the left-out slices
-- above it. The work is linear in the number of slices (the SGLang capture trace's 59k slices:
-- 64 -> 49 ms, the vLLM capture trace's 127k: 97 -> 36 ms, against the running XOR in SQL). The
-- text of a path is not built here: it would be most of the answer on deep Python stacks (tens
-- of MB); walk up `parent` for it (`tracecols stacks`, or the recursive query in docs/analyses.md).
-- Columns:
--   trace_id        INTEGER  trace
--   node            BIGINT   the path's id within its trace: the smallest slices.uid of its slices
--   parent          BIGINT   node of the path one frame up (the same trace); null for a root
--   frame           VARCHAR  the path's last frame name
--   frames          INTEGER  number of frames in the path (1 for a root)
--   slices          BIGINT   slices at exactly this path
--   self_cpu_ns     BIGINT   ns, sum of their self time (slices.self_ns)
--   device_events   BIGINT   device events launched directly by those slices
--   self_device_ns  BIGINT   ns, sum of those events' durations (kernels.dur_ns)
CREATE OR REPLACE VIEW stacks AS
WITH s AS (SELECT trace_id, uid, parent_uid, stack_id, self_ns FROM slices WHERE cat IS DISTINCT FROM 'Trace'),
launched AS (
    SELECT trace_id, CASE WHEN op_uid < 0 THEN op_uid ELSE launch_uid END AS uid, count(*) AS n,
           sum(dur_ns) AS dur_ns
    FROM kernels WHERE launch_uid IS NOT NULL OR op_uid < 0 GROUP BY ALL),
nodes AS (  -- one row per path: its slices, their times, and a slice above them (up)
    SELECT s.trace_id, s.stack_id, min(s.uid) AS nid, any_value(s.parent_uid) AS up, count(*) AS slices,
           sum(s.self_ns) AS self_cpu_ns, sum(l.n) AS device_events, sum(l.dur_ns) AS self_device_ns
    FROM s LEFT JOIN launched l ON l.trace_id = s.trace_id AND l.uid = s.uid
    GROUP BY s.trace_id, s.stack_id),
under_out AS (  -- included slices under left-out ones (in practice the profiler's span has none under it)
    SELECT c.trace_id, c.uid, count(*) AS n
    FROM slices c JOIN (SELECT * FROM slices WHERE cat = 'Trace' AND subtree_end > pre) o
      ON o.trace_id = c.trace_id AND o.pre < c.pre AND c.pre <= o.subtree_end
    WHERE c.cat IS DISTINCT FROM 'Trace' GROUP BY ALL)
SELECT n.trace_id, n.nid::BIGINT AS node, p.nid::BIGINT AS parent,
       CASE WHEN f.name IS NULL OR f.name = '' THEN '(unnamed)'
            WHEN contains(f.name, ';') OR contains(f.name, chr(13)) OR contains(f.name, chr(10))  -- seldom
            THEN replace(replace(replace(f.name, ';', ','), chr(13), ' '), chr(10), ' ')
            ELSE f.name END AS frame,
       (f.depth - coalesce(o.n, 0) + 1)::INTEGER AS frames,
       n.slices::BIGINT AS slices, n.self_cpu_ns::BIGINT AS self_cpu_ns,
       coalesce(n.device_events, 0)::BIGINT AS device_events, coalesce(n.self_device_ns, 0)::BIGINT AS self_device_ns
FROM nodes n JOIN slices f ON f.trace_id = n.trace_id AND f.uid = n.nid  -- the frame: that of any of its slices
LEFT JOIN under_out o ON o.trace_id = n.trace_id AND o.uid = n.nid
LEFT JOIN (SELECT trace_id, uid, stack_id FROM slices WHERE n_children > 0) u  -- the path one frame up: the slice above's
  ON u.trace_id = n.trace_id AND u.uid = n.up
LEFT JOIN nodes p ON p.trace_id = n.trace_id AND p.stack_id = u.stack_id
ORDER BY n.trace_id, node;
