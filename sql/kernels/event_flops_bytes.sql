-- event_flops_bytes: the FLOPs and bytes of each event, as the trace carries them or as the model gives them.
-- Answers: which events get Inductor's kernel_flop / kernel_num_gb args (`tracecols augment`), with
-- what values, and which carry them already?
-- depends: kernel_perf, op_perf
-- An event that carries either arg (events.kernel_flop, events.kernel_num_gb: traces written by
-- Inductor) has one row of source 'trace' with those values, and no other. Every other device
-- event with a modelled op has one row of source 'kernel_perf' (its share of the op's FLOPs and
-- bytes), and each such op one row of source 'op_perf' (its whole FLOPs and bytes). Modelled
-- rows with neither value are left out. docs/augment.md.
-- Columns (one per event; by trace and uid):
--   trace_id  INTEGER  trace
--   uid       BIGINT   the event (position in traceEvents)
--   source    VARCHAR  'trace' (the event's own args), 'kernel_perf' (a device event) or 'op_perf' (its op)
--   flops     DOUBLE   floating-point operations (null when unknown or bytes-only)
--   bytes     DOUBLE   bytes read and written (for 'trace': kernel_num_gb × 1e9; null when unknown)
CREATE OR REPLACE VIEW event_flops_bytes AS
WITH carried AS (
    SELECT trace_id, uid, 'trace' AS source, kernel_flop::DOUBLE AS flops, kernel_num_gb * 1e9 AS bytes
    FROM events
    WHERE kernel_flop IS NOT NULL OR kernel_num_gb IS NOT NULL
),
modelled AS (
    SELECT trace_id, uid, 'kernel_perf' AS source, kernel_flop AS flops, kernel_bytes AS bytes
    FROM kernel_perf
    UNION ALL
    SELECT DISTINCT p.trace_id, p.uid, 'op_perf', p.flops, p.bytes
    FROM op_perf p JOIN kernel_perf kp ON kp.trace_id = p.trace_id AND kp.op_uid = p.uid
)
SELECT * FROM carried
UNION ALL
SELECT m.* FROM modelled m ANTI JOIN carried c ON c.trace_id = m.trace_id AND c.uid = m.uid
WHERE m.flops IS NOT NULL OR m.bytes IS NOT NULL
ORDER BY trace_id, uid, source;
