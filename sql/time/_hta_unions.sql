-- _hta_unions: helper — busy time of HTA's kernel types per device, for temporal_breakdown
-- and comm_compute_overlap.
-- Answers: how long the device was covered by computation kernels, by communication
-- kernels, by either, and by any device event at all.
-- depends: kernels
-- uses: intervals
-- HTA's kernel types, by name (every device event with a stream counts):
--   communication = name starts with nccl / hccl, or contains ncclKernel (any case)
--   memory        = gpu_memcpy / gpu_memset events, or name starts with Memcpy / Memset / dma
--   computation   = the rest
-- Columns (one row per (trace_id, device), plus device NULL for each trace's devices together):
--   trace_id      INTEGER  trace
--   device        BIGINT   device id; NULL = all devices of the trace
--   first_ns      BIGINT   ns, start of the first device event
--   last_ns       BIGINT   ns, end of the last device event
--   compute_ns    BIGINT   ns, union of computation kernels
--   comm_ns       BIGINT   ns, union of communication kernels
--   compute_or_comm_ns BIGINT ns, union of both
--   busy_ns       BIGINT   ns, union of every device event
CREATE OR REPLACE VIEW _hta_unions AS
WITH ev AS (
    SELECT trace_id, device, ts_ns, end_ns,
           CASE WHEN name ILIKE 'nccl%' OR name ILIKE 'hccl%' OR name ILIKE '%ncclKernel%' THEN 1
                WHEN cat IN ('gpu_memcpy', 'gpu_memset') OR name ILIKE 'memcpy%' OR name ILIKE 'memset%'
                     OR name ILIKE 'dma%' THEN 2
                ELSE 0 END AS kind
    FROM kernels
),
scoped AS (
    SELECT trace_id, device, ts_ns, end_ns, kind FROM ev
    UNION ALL
    SELECT trace_id, NULL, ts_ns, end_ns, kind FROM ev
),
tagged AS (  -- 0 computation, 1 communication, 3 either, 4 all
    SELECT trace_id, device, ts_ns, end_ns, kind AS s FROM scoped WHERE kind < 2
    UNION ALL SELECT trace_id, device, ts_ns, end_ns, 3 FROM scoped WHERE kind < 2
    UNION ALL SELECT trace_id, device, ts_ns, end_ns, 4 FROM scoped
),
contrib AS (
    SELECT trace_id, device, s, ts_ns, end_ns,
           _tc_union_add(ts_ns, end_ns, trace_id, device, s) AS c
    FROM tagged
)
SELECT trace_id, device,
       min(ts_ns) FILTER (WHERE s = 4) AS first_ns,
       max(end_ns) FILTER (WHERE s = 4) AS last_ns,
       coalesce(sum(c) FILTER (WHERE s = 0), 0)::BIGINT AS compute_ns,
       coalesce(sum(c) FILTER (WHERE s = 1), 0)::BIGINT AS comm_ns,
       coalesce(sum(c) FILTER (WHERE s = 3), 0)::BIGINT AS compute_or_comm_ns,
       coalesce(sum(c) FILTER (WHERE s = 4), 0)::BIGINT AS busy_ns
FROM contrib
GROUP BY trace_id, device;
