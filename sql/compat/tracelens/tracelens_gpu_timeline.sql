-- tracelens_gpu_timeline: TraceLens's gpu_timeline.csv, same rows, columns and meaning.
-- Answers, for people coming from TraceLens: the GPU time breakdown in their units.
-- depends: _tracelens_gpu_events
-- uses: intervals
-- Rules (TraceLens): only device events linked to a launch call in the trace count, linked the
-- way TraceLens links them (_tracelens_gpu_events: through a complete ac2g flow pair; work
-- launched before the host-side window, or whose flow has no start, is left out); durations
-- as written (not clipped); devices and streams are not separated.
-- communication = kernels whose name contains nccl, rccl or cross_device_reduce;
-- memcpy = gpu_memcpy events; computation = the other kernels and the memsets.
-- exposed_comm = communication minus computation; exposed_memcpy = memcpy minus
-- computation and communication. Times are lengths of unions of intervals.
-- Columns (eight rows per trace, in TraceLens's order):
--   trace_id   INTEGER  trace (TraceLens has one trace per file)
--   type       VARCHAR  computation_time, exposed_comm_time, exposed_memcpy_time, busy_time,
--                       idle_time, total_time, total_comm_time, total_memcpy_time
--   "time ms"  DOUBLE   ms
--   percent    DOUBLE   % (0-100) of total_time
CREATE OR REPLACE VIEW tracelens_gpu_timeline AS
WITH ev AS (
    SELECT trace_id, ts_ns, end_ns,
           CASE WHEN cat = 'gpu_memcpy' THEN 2
                WHEN cat = 'kernel' AND (name ILIKE '%nccl%' OR name ILIKE '%rccl%'
                                         OR name ILIKE '%cross_device_reduce%') THEN 1
                ELSE 0 END AS kind
    FROM _tracelens_gpu_events WHERE launch_uid IS NOT NULL
),
tagged AS (
    SELECT trace_id, ts_ns, end_ns, kind AS s FROM ev
    UNION ALL SELECT trace_id, ts_ns, end_ns, 3 FROM ev WHERE kind < 2
    UNION ALL SELECT trace_id, ts_ns, end_ns, 4 FROM ev
),
contrib AS (
    SELECT trace_id, s, ts_ns, end_ns,
           _tc_union_add(ts_ns, end_ns, trace_id, s) AS c
    FROM tagged
),
u AS (
    SELECT trace_id,
           coalesce(sum(c) FILTER (WHERE s = 0), 0) AS comp, coalesce(sum(c) FILTER (WHERE s = 1), 0) AS comm,
           coalesce(sum(c) FILTER (WHERE s = 2), 0) AS mcpy, coalesce(sum(c) FILTER (WHERE s = 3), 0) AS cc,
           coalesce(sum(c) FILTER (WHERE s = 4), 0) AS busy,
           max(end_ns) FILTER (WHERE s = 4) - min(ts_ns) FILTER (WHERE s = 4) AS total
    FROM contrib GROUP BY trace_id
),
rows AS (
    SELECT trace_id, total, unnest([
        {'o': 1, 'type': 'computation_time', 'ns': comp},
        {'o': 2, 'type': 'exposed_comm_time', 'ns': cc - comp},
        {'o': 3, 'type': 'exposed_memcpy_time', 'ns': busy - cc},
        {'o': 4, 'type': 'busy_time', 'ns': busy},
        {'o': 5, 'type': 'idle_time', 'ns': total - busy},
        {'o': 6, 'type': 'total_time', 'ns': total},
        {'o': 7, 'type': 'total_comm_time', 'ns': comm},
        {'o': 8, 'type': 'total_memcpy_time', 'ns': mcpy}]) AS r
    FROM u
)
SELECT trace_id, r.type AS type, r.ns / 1e6 AS "time ms", 100.0 * r.ns / nullif(total, 0) AS percent
FROM rows
ORDER BY trace_id, r.o;
