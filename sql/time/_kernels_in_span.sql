-- _kernels_in_span: helper — the device events of each trace but the outlying ones (for gpu_timeline, idle_gaps).
-- Answers: which device events does a time-based view take, once an event with a broken
-- timestamp (far from the rest of its trace: traces.start_ns..end_ns leave it out, docs/schema.md)
-- is set aside? An event is left out when it lies wholly outside traces.start_ns..end_ns;
-- in a trace without outlying events that is none.
-- depends: kernels, traces
-- Columns (one row per device event kept; as in kernels):
--   trace_id INTEGER; device, stream, uid BIGINT; name VARCHAR; launch_uid BIGINT
--   launch_ts_ns, ts_ns, end_ns BIGINT  ns
--   kernel_class VARCHAR
CREATE OR REPLACE VIEW _kernels_in_span AS
SELECT k.trace_id, k.device, k.stream, k.uid, k.name, k.launch_uid, k.launch_ts_ns, k.ts_ns, k.end_ns, k.kernel_class
FROM kernels k
WHERE NOT EXISTS (SELECT 1 FROM traces t WHERE t.trace_id = k.trace_id AND (k.end_ns < t.start_ns OR k.ts_ns > t.end_ns));
