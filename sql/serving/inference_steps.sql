-- inference_steps: the iterations of a serving trace (vLLM, SGLang …), each with its phase and GPU time.
-- Answers: how long does one prefill, decode or mixed step take on the GPU — e.g. the
-- steady-state decode step: `WHERE phase = 'decode' AND phase_step >= 2`.
-- depends: slices, kernels
-- uses: intervals
-- A step is a host annotation the serving framework writes around one forward pass:
--   execute_<T>_context_<P>(…)_generation_<D>(…)   T tokens, P prefill and D decode requests
--   step[DECODE bs=N] / step[PREFILL …] / step[EXTEND …] / step[MIXED …]   (SGLang; EXTEND is a prefill)
-- the outermost such annotation on its thread; a trace with none falls back to ProfilerStep#N.
-- Phase: prefill when only prefill requests ran, decode when only decode requests, mixed
-- when both; from the annotation's own words where it has no counts; else unknown.
-- A step's device work is every device event whose launch call lies in the annotation's
-- subtree (graph replays included: their kernels belong to the graph launch call).
-- Columns (one row per step, in time order):
--   trace_id          INTEGER  trace
--   rank              INTEGER  its rank (null when unknown)
--   step              BIGINT   0-based index of the step in the trace
--   phase             VARCHAR  prefill, decode, mixed or unknown
--   phase_step        BIGINT   0-based index among the trace's steps of the same phase (skip the first few for steady state)
--   uid               BIGINT   the annotation's uid
--   name              VARCHAR  the annotation
--   tokens            BIGINT   tokens in the step (execute_<T>_…; null otherwise)
--   prefill_requests  BIGINT   prefill (context) requests (null when not written)
--   decode_requests   BIGINT   decode (generation) requests, or SGLang's bs for a decode step (null when not written)
--   ts_ns, dur_ns     BIGINT   ns, the annotation's start and host duration
--   kernels           BIGINT   device events launched in the step
--   graph_launches    BIGINT   CUDA/HIP graph launches among their launch calls
--   gpu_busy_ns       BIGINT   ns, union length of those events (every device and stream together)
--   gpu_kernel_sum_ns BIGINT   ns, sum of their durations
--   gpu_start_ns      BIGINT   ns, start of the first of them
--   gpu_end_ns        BIGINT   ns, end of the last of them
CREATE OR REPLACE VIEW inference_steps AS
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
steps AS (  -- the outermost: no other chosen annotation of its thread encloses it, that is no
            -- earlier one in pre-order has its subtree reach this one
    SELECT * EXCLUDE (reach) FROM (
        SELECT *, _tc_prev_end(pre, subtree_end, trace_id) AS reach  -- pre is unique in a trace
        FROM kind)
    WHERE reach IS NULL OR reach < pre
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
dev AS (  -- each step's device events: their launch call lies in the step's subtree; steps do
          -- not nest, so the only step that can hold it is the last one starting before it
    SELECT p.trace_id, p.uid AS step_uid, k.ts_ns, k.end_ns, k.dur_ns, k.launch_uid, k.launch_name
    FROM (SELECT k.trace_id, k.ts_ns, k.end_ns, k.dur_ns, k.launch_uid, k.launch_name, l.pre AS lpre
          FROM kernels k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid) k
    ASOF JOIN phased p ON p.trace_id = k.trace_id AND k.lpre > p.pre
    WHERE k.lpre <= p.subtree_end
),
g AS (  -- what each event adds to the union of its step's (sql/macros/intervals.sql)
    SELECT *, _tc_union_add(ts_ns, end_ns, trace_id, step_uid) AS c
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
ORDER BY p.trace_id, p.ts_ns, p.uid;
