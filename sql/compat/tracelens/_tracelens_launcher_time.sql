-- _tracelens_launcher_time: helper — every kernel launcher instance as TraceLens finds it, with
-- the busy time of the GPU events it launched and of those launched beneath it.
-- Answers: per launcher call, the two times TraceLens's per-op tables start from
-- (tracelens_ops_unique_args; the rules are those of tracelens_ops_summary).
-- depends: slices, _tracelens_gpu_events
-- uses: intervals, tracelens
-- GPU events: _tracelens_gpu_events with a launcher, communication kernels (name contains
-- nccl, rccl or cross_device_reduce) left out. Launcher: kernels.launcher_uid (docs/tree.md,
-- "TraceLens compatibility"). Direct = events whose launcher it is; subtree = events whose
-- op_path holds it, or, for a launch call that is its own launcher, its own events.
-- Columns (one row per launcher instance):
--   trace_id      INTEGER  trace
--   uid           BIGINT   the launcher slice
--   name          VARCHAR  launcher name (SGLang profiler ops without their numeric id suffix)
--   pid, tid      BIGINT   host process and thread
--   pre           BIGINT   pre-order number of the launcher (first instance = lowest)
--   direct_ns     BIGINT   ns, busy time (union) of the GPU events it launched
--   subtree_ns    BIGINT   ns, busy time (union) of the GPU events launched at or beneath it
CREATE OR REPLACE VIEW _tracelens_launcher_time AS
WITH gk AS (
    SELECT trace_id, uid AS kuid, ts_ns, end_ns, launcher_uid, op_path
    FROM _tracelens_gpu_events
    WHERE launcher_uid IS NOT NULL
      AND NOT (name ILIKE '%nccl%' OR name ILIKE '%rccl%' OR name ILIKE '%cross_device_reduce%')
),
iv AS (  -- (launcher, event) pairs; a launch call that launches for itself is in no op_path
    SELECT trace_id, launcher_uid AS luid, true AS direct, ts_ns, end_ns FROM gk
    UNION ALL
    SELECT trace_id, unnest(op_path), false, ts_ns, end_ns FROM gk
    UNION ALL
    SELECT trace_id, launcher_uid, false, ts_ns, end_ns FROM gk
    WHERE NOT list_contains(coalesce(op_path, []), launcher_uid)
),
launchers AS (SELECT DISTINCT trace_id, launcher_uid AS luid FROM gk),
g AS (  -- the ns each event adds to its launcher's union (sql/macros/intervals.sql)
    SELECT iv.trace_id, iv.luid, iv.direct,
           _tc_union_add(ts_ns, end_ns, iv.trace_id, iv.luid, iv.direct) AS c
    FROM iv JOIN launchers l ON l.trace_id = iv.trace_id AND l.luid = iv.luid
),
busy AS (
    SELECT trace_id, luid, coalesce(sum(c) FILTER (WHERE direct), 0)::BIGINT AS direct_ns,
           coalesce(sum(c) FILTER (WHERE NOT direct), 0)::BIGINT AS subtree_ns
    FROM g GROUP BY ALL
)
SELECT s.trace_id, s.uid, _tc_tl_name(s.name) AS name,
       s.pid, s.tid, s.pre, b.direct_ns, b.subtree_ns
FROM busy b JOIN slices s ON s.trace_id = b.trace_id AND s.uid = b.luid;
