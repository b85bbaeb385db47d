-- kernel_perf: FLOPs and bytes of every device event, from the op that launched it (op_perf).
-- Answers: how many FLOPs and bytes did this kernel do, and how close to the device's peak did it run?
-- depends: op_perf, kernels
-- A device event belongs to the innermost modelled op (op_perf.innermost) whose subtree holds its
-- launch call (the first modelled op in kernels.op_path, nearest first). The op's FLOPs and bytes are split over the
-- op's device events in proportion to their durations (an op with one kernel gives it all; the
-- memset before a GEMM gets its small share), so per-kernel values add up to the op's.
-- Device events without a modelled op are not listed.
-- Columns:
--   trace_id          INTEGER
--   uid               BIGINT   the device event's uid
--   name              VARCHAR  kernel name
--   device, stream    BIGINT
--   dur_ns            BIGINT   ns
--   op_uid            BIGINT   the modelled op (op_perf.uid)
--   op_name           VARCHAR  its name
--   share             DOUBLE   this event's part of the op's device time (0-1)
--   kernel_flop       DOUBLE   FLOPs (null for bytes-only ops)
--   kernel_bytes      DOUBLE   bytes read and written
--   kernel_num_gb     DOUBLE   kernel_bytes / 1e9 (the unit of Inductor's kernel_num_gb arg)
--   device_model      VARCHAR  the op's device model (op_perf; null when unknown)
--   device_model_source VARCHAR 'listed' or 'assumed: only device type in the trace' (op_perf)
--   peak_tflops_per_s, peak_tb_per_s DOUBLE  the op's device peaks (op_perf; null when unknown)
--   achieved_tflops_per_s, achieved_tb_per_s DOUBLE  kernel_flop, kernel_bytes over dur_ns, in 1e12 per s
CREATE OR REPLACE VIEW kernel_perf AS
WITH ops AS (
    SELECT p.trace_id, p.uid, p.name, p.flops, p.bytes, p.device_model, p.device_model_source,
           p.peak_tflops_per_s, p.peak_tb_per_s
    FROM op_perf p
    WHERE p.innermost
),
k AS (
    SELECT k.trace_id, k.uid, k.name, k.device, k.stream, k.dur_ns,
           unnest(k.op_path) AS ouid
    FROM kernels k
),
owned AS (
    SELECT k.* EXCLUDE (ouid), o.uid AS op_uid, o.name AS op_name, o.flops, o.bytes,
           o.device_model, o.device_model_source, o.peak_tflops_per_s, o.peak_tb_per_s
    -- at most one match per device event: its op_path is a chain of ops each above the next, and
    -- of two modelled ops one above the other the upper is not innermost, so no match needs
    -- ranking (with a window that ranked them the view took 1.4 s at 1 GB, without it 0.6 s)
    FROM k JOIN ops o ON o.trace_id = k.trace_id AND o.uid = k.ouid
),
per_op AS (  -- an aggregate joined back: cheaper than a window partitioned by op (666 against 800 ms at 1 GB)
    SELECT trace_id, op_uid, sum(dur_ns) AS total, count(*) AS n FROM owned GROUP BY ALL
),
shared AS (
    SELECT o.*, CASE WHEN p.total > 0 THEN o.dur_ns::DOUBLE / p.total ELSE 1.0 / p.n END AS share
    FROM owned o JOIN per_op p ON p.trace_id = o.trace_id AND p.op_uid = o.op_uid
)
SELECT trace_id, uid, name, device, stream, dur_ns, op_uid, op_name, share,
       flops * share AS kernel_flop, bytes * share AS kernel_bytes, bytes * share / 1e9 AS kernel_num_gb,
       device_model, device_model_source, peak_tflops_per_s, peak_tb_per_s,
       flops * share / nullif(dur_ns, 0) / 1e3 AS achieved_tflops_per_s,
       bytes * share / nullif(dur_ns, 0) / 1e3 AS achieved_tb_per_s
FROM shared
ORDER BY trace_id, uid;
