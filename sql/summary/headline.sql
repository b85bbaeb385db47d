-- headline: one line per trace for the top of a summary.
-- Answers: how long is the trace, how many steps did it record and how long is one, how busy
-- was the GPU, how much of the GPU's time no CPU op accounts for, and what did the reader
-- have to work around?
-- depends: traces, gpu_timeline, top_ops, inference_steps
-- Steps: the serving iterations of inference_steps, which are the ProfilerStep#N annotations
-- when a trace has no serving annotations; their time is the annotation's host duration.
-- Events far from the rest of their trace (a broken timestamp, e.g. one device event at ts 0)
-- are left out of the span and the GPU figures, and counted in `warnings` (docs/schema.md, traces).
-- Columns (one row per trace):
--   trace_id, rank     INTEGER  trace and its rank (null when unknown)
--   span_ns            BIGINT   ns, first to last event of the trace (traces.span_ns: outlying events left out)
--   steps              BIGINT   steps recorded (0 when the trace marks none)
--   step_kind          VARCHAR  'ProfilerStep' or 'serving step' (null without steps)
--   mean_step_ns       BIGINT   ns, mean host duration of a step (null without steps)
--   gpu_span_ns        BIGINT   ns, first to last device event (null without device events)
--   gpu_busy_pct       DOUBLE   % (0-100) of gpu_span_ns with a device event running, every device together
--   no_op_gpu_pct      DOUBLE   % (0-100) of the GPU busy time that no CPU op accounts for (top_ops' '(no op)' row)
--   warnings           VARCHAR[] the reader's counted warnings (traces.warnings; empty when none)
CREATE OR REPLACE VIEW headline AS
WITH steps AS (
    SELECT trace_id, count(*) AS steps,
           CASE WHEN bool_and(name LIKE 'ProfilerStep#%') THEN 'ProfilerStep' ELSE 'serving step' END AS step_kind,
           round(avg(dur_ns))::BIGINT AS mean_step_ns
    FROM inference_steps GROUP BY trace_id
),
gpu AS (SELECT trace_id, total_ns, busy_pct FROM gpu_timeline WHERE device IS NULL),
no_op AS (SELECT trace_id, share_pct FROM top_ops WHERE name = '(no op)')
SELECT t.trace_id, t.rank, t.span_ns, coalesce(s.steps, 0)::BIGINT AS steps, s.step_kind, s.mean_step_ns,
       g.total_ns AS gpu_span_ns, g.busy_pct AS gpu_busy_pct,
       CASE WHEN g.total_ns IS NULL THEN NULL ELSE coalesce(n.share_pct, 0.0) END AS no_op_gpu_pct,
       coalesce(t.warnings, []::VARCHAR[]) AS warnings
FROM traces t
LEFT JOIN steps s ON s.trace_id = t.trace_id
LEFT JOIN gpu g ON g.trace_id = t.trace_id
LEFT JOIN no_op n ON n.trace_id = t.trace_id
ORDER BY t.trace_id;
