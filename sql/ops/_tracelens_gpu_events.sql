-- _tracelens_gpu_events: helper — the GPU events (kernels, memcpy, memset) as TraceLens sees them:
-- linked to a launch call only through a complete ac2g flow pair, durations as written.
-- Answers: which device events TraceLens counts as launched, by which runtime call and under
-- which ops, so that the tracelens_* views reproduce its numbers (docs/tree.md, "TraceLens
-- compatibility").
-- depends: kernels, slices
-- Link rule (TraceLens): a launch call (cuda_runtime / cuda_driver slice) with correlation c
-- links when the trace holds an ac2g flow start ('s') with id c and a flow finish ('f') with
-- id c; the last such finish in file order says where the device event sits (pid, tid), and
-- the device event is the last event in file order at that pid and tid whose correlation is
-- c. No flow start, no link, even when a launch call with that correlation exists (the
-- memsets of perf_model/normalization/normalization_layer_test carry two finishes and no
-- start). A graph launch (cudaGraphLaunch / hipGraphLaunch) owns every device event with its
-- correlation, flows or not. Where several launch calls reach one device event, the last in
-- file order wins. Flow categories are the normalised ones (ac2g, also the older async and
-- async_cpu_to_gpu names). kernels (tracecols' own link) links by correlation within one
-- process and by flows; it keeps the links that this rule drops.
-- Durations: TraceLens takes `dur` as written; kernels.dur_ns is cut where a device event
-- runs past the start of the next one on its stream, so dur_ns here is kernels.dur_raw_ns
-- (but never negative: a negative duration as written is taken as 0, as in kernels.dur_ns).
-- Columns (one row per row of kernels):
--   trace_id      INTEGER   trace
--   uid           BIGINT    the device event (position in traceEvents)
--   cat           VARCHAR   kernel, gpu_memcpy or gpu_memset
--   name          VARCHAR   device event name
--   device        BIGINT    device id
--   stream        BIGINT    stream id
--   correlation   BIGINT    correlation id of the device event
--   kernel_class  VARCHAR   as in kernels (communication, memcpy, memset, gemm, …)
--   ts_ns         BIGINT    ns, start
--   dur_ns        BIGINT    ns, duration as written (not clipped; a negative one taken as 0)
--   end_ns        BIGINT    ns, ts_ns + dur_ns
--   dur_raw_ns    BIGINT    ns, kernels.dur_raw_ns: as written, negative values kept
--   launch_uid    BIGINT    the launch call TraceLens links the event to (null: unlinked)
--   op_uid        BIGINT    nearest cpu_op above that launch call (kernel_summary's "Parent cpu_op")
--   launcher_uid  BIGINT    the launcher of ops_summary (kernels.launcher_uid's rule: python frames
--                           and cpu_ops named execute passed over, the launch call itself when the
--                           walk meets another kind of slice); null when unlinked
--   op_path       BIGINT[]  op_uid and every cpu_op above it, nearest first; null when unlinked
CREATE OR REPLACE VIEW _tracelens_gpu_events AS
WITH fl AS (
    SELECT trace_id, uid, ph, flow_id, pid, pid_str, tid, tid_str
    FROM events
    WHERE ph IN ('s', 'f') AND cat = 'ac2g' AND flow_id IS NOT NULL
),
started AS (SELECT DISTINCT trace_id, flow_id FROM fl WHERE ph = 's'),
finish AS (  -- the last finish of each id, in file order
    SELECT trace_id, flow_id, pid, pid_str, tid, tid_str
    FROM fl WHERE ph = 'f'
    QUALIFY row_number() OVER (PARTITION BY trace_id, flow_id ORDER BY uid DESC) = 1
),
at_corr AS (  -- the last event in file order at each (pid, tid, correlation), flows aside
    SELECT trace_id, uid, pid, pid_str, tid, tid_str, correlation
    FROM events  -- a flow finishes on a device event: only those can be found there
    WHERE correlation IS NOT NULL AND ph = 'X' AND cat IN ('kernel', 'gpu_memcpy', 'gpu_memset')
    QUALIFY row_number() OVER (PARTITION BY trace_id, pid, pid_str, tid, tid_str, correlation
                               ORDER BY uid DESC) = 1
),
launch AS (
    SELECT trace_id, uid, correlation, name IN ('cudaGraphLaunch', 'hipGraphLaunch') AS graph
    FROM slices
    WHERE cat IN ('cuda_runtime', 'cuda_driver') AND correlation IS NOT NULL
),
via_flow AS (
    SELECT l.trace_id, a.uid, l.uid AS launch_uid
    FROM launch l
    JOIN started s ON s.trace_id = l.trace_id AND s.flow_id = l.correlation
    JOIN finish f ON f.trace_id = l.trace_id AND f.flow_id = l.correlation
    JOIN at_corr a ON a.trace_id = l.trace_id AND a.correlation = l.correlation
                  AND a.pid IS NOT DISTINCT FROM f.pid AND a.pid_str IS NOT DISTINCT FROM f.pid_str
                  AND a.tid IS NOT DISTINCT FROM f.tid AND a.tid_str IS NOT DISTINCT FROM f.tid_str
    WHERE NOT l.graph
),
via_graph AS (
    SELECT l.trace_id, k.uid, l.uid AS launch_uid
    FROM launch l JOIN kernels k ON k.trace_id = l.trace_id AND k.correlation = l.correlation
    WHERE l.graph
),
link AS (
    SELECT trace_id, uid, max(launch_uid) AS launch_uid
    FROM (SELECT * FROM via_flow UNION ALL SELECT * FROM via_graph)
    GROUP BY trace_id, uid
),
kl AS (  -- each device event with TraceLens's launch call
    SELECT k.*, ln.launch_uid AS tl_launch_uid
    FROM kernels k LEFT JOIN link ln ON ln.trace_id = k.trace_id AND ln.uid = k.uid
),
other AS (  -- the launch calls TraceLens finds where kernels has another (or none): rare
    SELECT DISTINCT trace_id, tl_launch_uid AS launch_uid FROM kl
    WHERE tl_launch_uid IS NOT NULL AND tl_launch_uid IS DISTINCT FROM launch_uid
),
by_launch AS (  -- the op, launcher and op path of those launch calls, from any device event each launched
    SELECT o.trace_id, o.launch_uid, any_value(ls.op_uid) AS op_uid,
           any_value(k.launcher_uid) AS launcher_uid, any_value(k.op_path) AS op_path
    FROM other o
    LEFT JOIN slices ls ON ls.trace_id = o.trace_id AND ls.uid = o.launch_uid
    LEFT JOIN kernels k ON k.trace_id = o.trace_id AND k.launch_uid = o.launch_uid
    GROUP BY o.trace_id, o.launch_uid
)
SELECT k.trace_id, k.uid, k.cat, k.name, k.device, k.stream, k.correlation, k.kernel_class,
       k.ts_ns, greatest(k.dur_raw_ns, 0) AS dur_ns, k.ts_ns + greatest(k.dur_raw_ns, 0) AS end_ns, k.dur_raw_ns,
       k.tl_launch_uid AS launch_uid,
       -- the same launch call as kernels: that row's own attribution; else the launch call's
       CASE WHEN k.tl_launch_uid = k.launch_uid THEN k.op_uid ELSE b.op_uid END AS op_uid,
       CASE WHEN k.tl_launch_uid = k.launch_uid THEN k.launcher_uid ELSE b.launcher_uid END AS launcher_uid,
       CASE WHEN k.tl_launch_uid = k.launch_uid THEN k.op_path ELSE b.op_path END AS op_path
FROM kl k
LEFT JOIN by_launch b ON b.trace_id = k.trace_id AND b.launch_uid = k.tl_launch_uid;
