-- kernel_sequences: the sequences of kernels that top-level ops launch, most frequent first
-- (HTA's frequent CUDA kernel patterns).
-- Answers: for each op name, which exact series of kernels do its instances run, how many
-- instances run each series, and what does each series cost on the device?
-- depends: kernels, slices
-- An op instance is a top-level cpu_op (`kernels.top_op_uid`, the outermost cpu_op above the
-- launch call); its sequence is the names of the device events (kernels, memcpy, memset) it
-- launched on one device, in start order (ts_ns, then uid). Device events without a cpu_op
-- above their launch call are left out; an instance that launched onto two devices has one
-- sequence per device. Identical sequences of one op name are grouped; the 5 most frequent per
-- (trace_id, device, op name) are kept (ties: more total GPU time first, then the sequence).
-- GPU time is the summed duration of the sequence's device events (not their union).
-- Columns:
--   trace_id       INTEGER    trace
--   rank           INTEGER    rank (null when unknown)
--   device         BIGINT     device id
--   op_name        VARCHAR    name of the top-level cpu_op
--   seq_rank       BIGINT     1 = most frequent sequence of that op name (1-5)
--   sequence       VARCHAR[]  device event names in start order
--   length         BIGINT     number of device events in the sequence
--   instances      BIGINT     op instances that ran exactly this sequence
--   instances_pct  DOUBLE     % (0-100) of the op name's instances (with device work on that device)
--   total_gpu_ns   BIGINT     ns, summed duration of the device events over those instances
--   mean_gpu_ns    DOUBLE     ns, total_gpu_ns / instances
CREATE OR REPLACE VIEW kernel_sequences AS
WITH inst AS (
    SELECT trace_id, any_value(rank) AS rank, device, top_op_uid,
           list(name ORDER BY ts_ns, uid) AS sequence,
           sum(dur_ns) AS gpu_ns
    FROM kernels
    WHERE top_op_uid IS NOT NULL
    GROUP BY trace_id, device, top_op_uid
),
g AS (
    SELECT i.trace_id, any_value(i.rank) AS rank, i.device, s.name AS op_name, i.sequence,
           count(*) AS instances, sum(i.gpu_ns)::BIGINT AS total_gpu_ns
    FROM inst i JOIN slices s ON s.trace_id = i.trace_id AND s.uid = i.top_op_uid
    GROUP BY i.trace_id, i.device, s.name, i.sequence
),
r AS (
    SELECT *,
           row_number() OVER (PARTITION BY trace_id, device, op_name
                              ORDER BY instances DESC, total_gpu_ns DESC, sequence) AS seq_rank,
           100.0 * instances / sum(instances) OVER (PARTITION BY trace_id, device, op_name) AS instances_pct
    FROM g
)
SELECT trace_id, rank, device, op_name, seq_rank, sequence, len(sequence) AS length, instances,
       instances_pct, total_gpu_ns, total_gpu_ns / instances AS mean_gpu_ns
FROM r
WHERE seq_rank <= 5
ORDER BY trace_id, device, op_name, seq_rank;
