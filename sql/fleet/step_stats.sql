-- step_stats: one row per step (ProfilerStep#N, or serving iteration) with its time and where that time went.
-- Answers: how long was each step, how much of its window was the GPU busy, idle, communicating,
-- and how much of it did the host spend loading data or waiting on a synchronisation?
-- depends: inference_steps, kernels, slices
-- uses: intervals
-- The steps are inference_steps' (serving iterations where a trace has them, else ProfilerStep#N).
-- Wall-time figures (busy, idle, comm, data loading, sync) are taken inside the step's window
-- on the host, [ts_ns, end_ns): a device event or a host call counts for the part of it that
-- lies in the window (an event longer than a whole step counts in the windows where it starts
-- and ends, not in those it spans). GPU figures are over every device of the trace together: busy = union
-- of device events, comm = union of communication kernels, exposed comm = the part of busy
-- where only communication ran (busy minus the union of the other events).
-- Work figures (kernels, kernel_classes) count the device events the step launched (launch
-- call in the window, on any thread; an event without a launch by its start), whole: the GPU
-- runs behind the host, so a window holds the tail of the previous step's kernels, while every
-- step launches the same work.
-- A lake keeps this view's rows per trace as the table `step_stats`, written at ingest
-- (docs/fleet.md): run_trend and step_outliers read those rows, never the events.
-- Columns:
--   trace_id, rank      INTEGER  trace and its rank (null when unknown)
--   step                BIGINT   N of ProfilerStep#N; a serving iteration's 0-based index
--   phase               VARCHAR  prefill, decode, mixed or unknown (inference_steps; unknown for ProfilerStep)
--   name                VARCHAR  the step's annotation
--   uid                 BIGINT   the annotation's uid
--   ts_ns, end_ns       BIGINT   ns, the step's window on the host
--   dur_ns              BIGINT   ns, the step time (end_ns - ts_ns)
--   gpu_busy_ns         BIGINT   ns, union of device events in the window
--   gpu_idle_ns         BIGINT   ns, dur_ns - gpu_busy_ns
--   comm_ns             BIGINT   ns, union of communication kernels in the window
--   exposed_comm_ns     BIGINT   ns, time in the window when only communication ran
--   data_loading_ns     BIGINT   ns, host time in `enumerate(DataLoader)#…` annotations in the window
--   sync_ns             BIGINT   ns, host time in cuda/hip Device, Stream and Event Synchronize calls in the window
--   kernels             BIGINT   device events the step launched
--   kernel_classes      STRUCT(kernel_class VARCHAR, ns BIGINT)[]  ns, duration of those events by kernels.kernel_class (sum: overlaps count twice), longest first
CREATE OR REPLACE VIEW step_stats AS
WITH steps AS (
    SELECT trace_id, rank,
           coalesce(TRY_CAST(regexp_extract(name, '^ProfilerStep#([0-9]+)$', 1) AS BIGINT), step) AS step,
           phase, name, uid, ts_ns, ts_ns + dur_ns AS end_ns, dur_ns
    FROM inference_steps
),
dev_k AS (
    SELECT trace_id, uid AS k, ts_ns, end_ns, coalesce(kernel_class, 'other') AS kernel_class,
           coalesce(kernel_class = 'communication', false) AS comm
    FROM kernels
),
dev_in AS (  -- the step each device event starts in, and the one it ends in (steps do not overlap)
    SELECT d.*, s.uid, s.ts_ns AS wa, s.end_ns AS wb
    FROM dev_k d ASOF JOIN steps s ON s.trace_id = d.trace_id AND d.ts_ns >= s.ts_ns
    UNION
    SELECT d.*, s.uid, s.ts_ns AS wa, s.end_ns AS wb
    FROM dev_k d ASOF JOIN steps s ON s.trace_id = d.trace_id AND d.end_ns > s.ts_ns
),
dev AS (  -- each device event clipped to those windows
    SELECT trace_id, uid, kernel_class, comm, greatest(ts_ns, wa) AS a, least(end_ns, wb) AS b
    FROM dev_in WHERE ts_ns < wb AND end_ns > wa
),
dev_u AS (
    SELECT *, _tc_union_add(a, b, trace_id, uid) AS all_add, _tc_union_add(a, b, trace_id, uid, comm) AS side_add
    FROM dev
),
gpu AS (
    SELECT trace_id, uid, sum(all_add)::BIGINT AS busy,
           coalesce(sum(side_add) FILTER (WHERE comm), 0)::BIGINT AS comm_ns,
           coalesce(sum(side_add) FILTER (WHERE NOT comm), 0)::BIGINT AS other_ns
    FROM dev_u GROUP BY ALL
),
launched AS (  -- the device events each step launched, whole, wherever they ran
    SELECT trace_id, coalesce(launch_ts_ns, ts_ns) AS at, coalesce(kernel_class, 'other') AS kernel_class,
           end_ns - ts_ns AS d
    FROM kernels
),
by_class AS (
    SELECT s.trace_id, s.uid, l.kernel_class, count(*) AS n, sum(l.d)::BIGINT AS ns
    FROM launched l ASOF JOIN steps s ON s.trace_id = l.trace_id AND l.at >= s.ts_ns
    WHERE l.at < s.end_ns
    GROUP BY ALL
),
classes AS (
    SELECT trace_id, uid, sum(n)::BIGINT AS kernels,
           list({'kernel_class': kernel_class, 'ns': ns} ORDER BY ns DESC, kernel_class) AS kernel_classes
    FROM by_class GROUP BY ALL
),
host_h AS (
    SELECT trace_id, uid AS h, ts_ns, ts_ns + dur_ns AS end_ns,
           CASE WHEN name LIKE 'enumerate(DataLoader)#%' THEN 'data' ELSE 'sync' END AS kind
    FROM slices
    WHERE name LIKE 'enumerate(DataLoader)#%'
       OR name IN ('cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaEventSynchronize',
                   'hipDeviceSynchronize', 'hipStreamSynchronize', 'hipEventSynchronize')
),
host_in AS (
    SELECT h.*, s.uid, s.ts_ns AS wa, s.end_ns AS wb
    FROM host_h h ASOF JOIN steps s ON s.trace_id = h.trace_id AND h.ts_ns >= s.ts_ns
    UNION
    SELECT h.*, s.uid, s.ts_ns AS wa, s.end_ns AS wb
    FROM host_h h ASOF JOIN steps s ON s.trace_id = h.trace_id AND h.end_ns > s.ts_ns
),
host AS (  -- data loading and synchronisation calls clipped to the windows they overlap
    SELECT trace_id, uid, kind, greatest(ts_ns, wa) AS a, least(end_ns, wb) AS b
    FROM host_in WHERE ts_ns < wb AND end_ns > wa
),
host_u AS (
    SELECT trace_id, uid, kind, _tc_union_add(a, b, trace_id, uid, kind) AS add FROM host
),
hosts AS (
    SELECT trace_id, uid,
           coalesce(sum(add) FILTER (WHERE kind = 'data'), 0)::BIGINT AS data_loading_ns,
           coalesce(sum(add) FILTER (WHERE kind = 'sync'), 0)::BIGINT AS sync_ns
    FROM host_u GROUP BY ALL
)
SELECT s.trace_id, s.rank, s.step, s.phase, s.name, s.uid, s.ts_ns, s.end_ns, s.dur_ns,
       coalesce(g.busy, 0) AS gpu_busy_ns, s.dur_ns - coalesce(g.busy, 0) AS gpu_idle_ns,
       coalesce(g.comm_ns, 0) AS comm_ns, coalesce(g.busy - g.other_ns, 0) AS exposed_comm_ns,
       coalesce(h.data_loading_ns, 0) AS data_loading_ns, coalesce(h.sync_ns, 0) AS sync_ns,
       coalesce(c.kernels, 0) AS kernels,
       coalesce(c.kernel_classes, []::STRUCT(kernel_class VARCHAR, ns BIGINT)[]) AS kernel_classes
FROM steps s
LEFT JOIN gpu g ON g.trace_id = s.trace_id AND g.uid = s.uid
LEFT JOIN classes c ON c.trace_id = s.trace_id AND c.uid = s.uid
LEFT JOIN hosts h ON h.trace_id = s.trace_id AND h.uid = s.uid
ORDER BY s.trace_id, s.ts_ns, s.uid;
