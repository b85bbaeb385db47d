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
-- How: a path is identified without walking the tree: each included slice's level (its depth less
-- the left-out slices above it) and frame name are hashed (md5, 128 bits), and the XOR of those
-- hashes over a slice's included ancestors-or-self, a running XOR over their starts and ends in
-- pre-order (an end undoes its start), is the id of its path (a path holds each level once, so
-- no hash cancels another; two different paths share an id with a probability of about 2^-128
-- per pair); the id XOR the slice's own hash is the id of the path one frame up, which gives
-- `parent` by a join. XOR rather than a sum: one 128-bit column and no overflow to avoid
-- (87-92 -> 80-82 ms on the vLLM capture trace against two 64-bit halves summed). Each distinct
-- (level, name) is hashed once, and leaves, which are nobody's ancestors, stay out of the running
-- XOR (53 -> 42 ms on the SGLang capture trace). The work is linear in the number of slices. The text of a path is not built here: it would be most of the
-- answer on deep Python stacks (tens of MB); walk up `parent` for it (`tracecols stacks`, or the
-- recursive query in docs/analyses.md).
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
WITH s AS (
    SELECT trace_id, uid, pre, subtree_end, depth, cat IS DISTINCT FROM 'Trace' AS inc, self_ns,
           coalesce(nullif(replace(replace(replace(name, ';', ','), chr(13), ' '), chr(10), ' '), ''),
                    '(unnamed)') AS frame
    FROM slices),
under_out AS (  -- included slices under left-out ones (in practice the profiler's span has none under it)
    SELECT c.trace_id, c.uid, count(*) AS n
    FROM s c JOIN (SELECT * FROM s WHERE NOT inc AND subtree_end > pre) o
      ON o.trace_id = c.trace_id AND o.pre < c.pre AND c.pre <= o.subtree_end
    WHERE c.inc GROUP BY ALL),
lv AS (  -- the included slices and their level: the depth less the left-out slices above
    SELECT s.trace_id, s.uid, s.pre, s.subtree_end, s.self_ns, s.frame, s.subtree_end = s.pre AS leaf,
           s.depth - coalesce(u.n, 0) AS level
    FROM s LEFT JOIN under_out u ON u.trace_id = s.trace_id AND u.uid = s.uid
    WHERE s.inc),
hc AS MATERIALIZED (  -- c: md5(level;frame), once per distinct pair (a trace repeats few); materialised,
                     -- or DuckDB computes it after the join, once per slice again
    SELECT level, frame, md5_number(level || ';' || frame) AS c FROM (SELECT DISTINCT level, frame FROM lv)),
h AS (SELECT lv.*, hc.c FROM lv JOIN hc ON hc.level = lv.level AND hc.frame = lv.frame),
ids AS (  -- path id p: the XOR over the included ancestors-or-self, a running XOR over their starts
          -- (at 2·pre) and ends (at 2·subtree_end+1) in pre-order; q: the path one frame up. A leaf
          -- (no slice under it) is the ancestor of nothing: its start adds nothing to the running
          -- XOR and it has no end, and its own hash goes into its p alone
    SELECT trace_id, uid, self_ns, level, p, xor(p, c) AS q FROM (
        SELECT *, CASE WHEN leaf THEN xor(x, c) ELSE x END AS p
        FROM (SELECT *, bit_xor(CASE WHEN leaf THEN 0::UHUGEINT ELSE c END) OVER w AS x
              FROM (SELECT trace_id, uid, self_ns, level, 2 * pre AS k, true AS start, leaf, c FROM h
                    UNION ALL SELECT trace_id, NULL, NULL, NULL, 2 * subtree_end + 1, false, false, c
                    FROM h WHERE NOT leaf)
              WINDOW w AS (PARTITION BY trace_id ORDER BY k ROWS UNBOUNDED PRECEDING)))
    WHERE start),
launched AS (
    SELECT trace_id, CASE WHEN op_uid < 0 THEN op_uid ELSE launch_uid END AS uid, count(*) AS n,
           sum(dur_ns) AS dur_ns
    FROM kernels WHERE launch_uid IS NOT NULL OR op_uid < 0 GROUP BY ALL),
nodes AS (  -- one row per path: its slices, their times, and the path one frame up (q)
    SELECT i.trace_id, i.p, any_value(i.q) AS q, min(i.uid) AS nid,
           any_value(i.level) AS level, count(*) AS slices, sum(i.self_ns) AS self_cpu_ns,
           sum(l.n) AS device_events, sum(l.dur_ns) AS self_device_ns
    FROM ids i LEFT JOIN launched l ON l.trace_id = i.trace_id AND l.uid = i.uid
    GROUP BY i.trace_id, i.p)
SELECT n.trace_id, n.nid::BIGINT AS node, p.nid::BIGINT AS parent, s.frame, (n.level + 1)::INTEGER AS frames,
       n.slices::BIGINT AS slices, n.self_cpu_ns::BIGINT AS self_cpu_ns,
       coalesce(n.device_events, 0)::BIGINT AS device_events, coalesce(n.self_device_ns, 0)::BIGINT AS self_device_ns
FROM nodes n JOIN s ON s.trace_id = n.trace_id AND s.uid = n.nid  -- the frame: that of any of its slices
LEFT JOIN nodes p ON p.trace_id = n.trace_id AND p.p = n.q  -- the path one frame up
ORDER BY n.trace_id, node;
