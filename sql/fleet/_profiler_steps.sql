-- _profiler_steps: the ProfilerStep#N annotations of each trace (helper for rank_summary, stragglers).
-- Answers: when did each profiled training step start and end on each rank?
-- Host-side events named `ProfilerStep#<N>` (torch.profiler's step annotation; cat
-- user_annotation, or cpu_op/Operator on older torch); the device-side copies
-- (gpu_user_annotation) are left out. A step's time is the annotation's duration on the host.
-- Columns:
--   trace_id, rank   INTEGER  trace and its rank
--   step             BIGINT   N of ProfilerStep#N
--   uid              BIGINT   the annotation's event uid
--   ts_ns, end_ns    BIGINT   ns, start and end of the step
--   dur_ns           BIGINT   ns, the step time
CREATE OR REPLACE VIEW _profiler_steps AS
SELECT trace_id, rank, TRY_CAST(regexp_extract(name, '^ProfilerStep#([0-9]+)$', 1) AS BIGINT) AS step,
       uid, ts_ns, end_ns, dur_ns
FROM events
WHERE ph = 'X' AND name LIKE 'ProfilerStep#%' AND cat IN ('user_annotation', 'cpu_op')
  AND dur_ns IS NOT NULL;
