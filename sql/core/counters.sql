-- counters: counter samples (ph 'C'), one row per sample, as written in the trace.
-- Answers: how a counter (memory, queue length, …) moves over time.
-- Columns:
--   trace_id INTEGER; rank INTEGER; uid BIGINT (position in traceEvents); name VARCHAR counter name;
--   cat VARCHAR; pid, tid BIGINT; ts_ns BIGINT (ns);
--   args VARCHAR JSON text of the counter's values (the series name → value object)
CREATE OR REPLACE VIEW counters AS
SELECT trace_id, rank, uid, name, cat, pid, tid, ts_ns, args
FROM events
WHERE ph = 'C'
ORDER BY trace_id, uid;
