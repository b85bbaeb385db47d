-- cupti_counters: the hardware counters of CUPTI's range profiler, per kernel, with the op that
-- launched it (HTA's CUPTI counter analysis).
-- Answers: what did each kernel's counters read (instructions by type, bytes, cycles, …), and
-- which PyTorch op (innermost and top-level) launched that kernel?
-- depends: kernels, slices, events
-- In range-profiler mode the profiler writes each kernel as a `cuda_profiler_range` event whose
-- args are its counters, and without a correlation id, so the kernel cannot be linked to its
-- launch by id. The profiler replays and serialises the kernels one at a time, in launch
-- order: the n-th range event of a trace is paired with its n-th kernel launch call
-- (cudaLaunchKernel*, cuLaunchKernel*, hipLaunchKernel*, in (ts, uid) order). When the two counts
-- differ the pairing cannot be trusted and the launch and op columns are null for every row of
-- that trace (`paired` = false).
-- One row per (range event, counter) — a counter that a kernel lacks has no row.
-- Columns:
--   trace_id      INTEGER  trace
--   rank          INTEGER  rank (null when unknown)
--   uid           BIGINT   the range event (one kernel)
--   kernel_name   VARCHAR  kernel name as written
--   ts_ns         BIGINT   ns, start of the range
--   dur_ns        BIGINT   ns, its duration (the profiler's replay, not the kernel's normal run time)
--   paired        BOOLEAN  whether the trace's range events and launch calls are equally many
--   launch_uid    BIGINT   the launch call paired with it (null when not paired)
--   op_uid        BIGINT   the innermost cpu_op around that call
--   op_name       VARCHAR  its name
--   top_op_uid    BIGINT   the outermost cpu_op around that call
--   top_op_name   VARCHAR  its name
--   counter       VARCHAR  counter name as written (e.g. smsp__sass_thread_inst_executed_op_ffma_pred_on.sum)
--   value         DOUBLE   its value (counts are exact up to 2^53)
CREATE OR REPLACE VIEW cupti_counters AS
WITH ranges AS (
    SELECT e.trace_id, e.rank, e.uid, e.name, e.ts_ns, k.dur_ns, e.args,
           row_number() OVER (PARTITION BY e.trace_id ORDER BY e.ts_ns, e.uid) AS n,
           count(*) OVER (PARTITION BY e.trace_id) AS total
    FROM events e JOIN kernels k ON k.trace_id = e.trace_id AND k.uid = e.uid
    WHERE e.cat_raw = 'cuda_profiler_range'
), launches AS (
    SELECT s.trace_id, s.uid, s.op_uid, s.top_op_uid,
           row_number() OVER (PARTITION BY s.trace_id ORDER BY s.ts_ns, s.uid) AS n,
           count(*) OVER (PARTITION BY s.trace_id) AS total
    FROM slices s
    WHERE s.trace_id IN (SELECT trace_id FROM ranges)
      AND regexp_matches(s.name, '^(cudaLaunchKernel|cuLaunchKernel|hipLaunchKernel)')
), paired AS (
    SELECT r.*, coalesce(r.total = (SELECT max(l.total) FROM launches l WHERE l.trace_id = r.trace_id), false) AS paired
    FROM ranges r
)
SELECT p.trace_id, p.rank, p.uid, p.name AS kernel_name, p.ts_ns, p.dur_ns, p.paired,
       l.uid AS launch_uid, l.op_uid, o.name AS op_name, l.top_op_uid, t.name AS top_op_name,
       c.key AS counter, c.value::DOUBLE AS value
FROM paired p
CROSS JOIN json_each(p.args) c
LEFT JOIN launches l ON p.paired AND l.trace_id = p.trace_id AND l.n = p.n
LEFT JOIN slices o ON o.trace_id = l.trace_id AND o.uid = l.op_uid
LEFT JOIN slices t ON t.trace_id = l.trace_id AND t.uid = l.top_op_uid
WHERE json_type(c.value) IN ('UBIGINT', 'BIGINT', 'DOUBLE', 'HUGEINT')
ORDER BY p.trace_id, p.ts_ns, p.uid, c.key;
