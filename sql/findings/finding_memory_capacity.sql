-- finding_memory_capacity: devices whose memory came close to their capacity.
-- Answers: did a device's allocator hold so much of its memory that a bigger batch, a longer
-- sequence or fragmentation would run out of memory?
-- depends: memory_summary, devices
-- uses: rules
-- Rule: memory_summary's peak of the bytes the caching allocator held (peak_reserved_bytes,
-- or peak_allocated_bytes when larger or alone) against the device's total_global_mem_bytes
-- (devices: deviceProperties); devices the trace gives no size for are not judged.
-- Threshold tc_threshold_memory_capacity, default 90: a peak of at least this % of the device's memory.
-- Time at stake: none (no time is lost until memory runs out); severity high from 95 %, else medium.
-- Columns (one row per device over the threshold): every column of findings but sources
CREATE OR REPLACE VIEW finding_memory_capacity AS
WITH m AS (
    SELECT s.trace_id, s.rank, s.device_id AS device,
           greatest(coalesce(s.peak_reserved_bytes, 0), coalesce(s.peak_allocated_bytes, 0)) AS peak,
           s.peak_allocated_bytes, d.total_global_mem_bytes AS cap
    FROM memory_summary s JOIN devices d ON d.trace_id = s.trace_id AND d.device = s.device_id
    WHERE s.device_id >= 0 AND d.total_global_mem_bytes > 0
)
SELECT 'memory_capacity' AS rule, CASE WHEN 100.0 * peak / cap >= 95 THEN 'high' ELSE 'medium' END AS severity,
       trace_id, rank, device, 'peak memory' AS kind, NULL::BIGINT AS stake_ns, NULL::DOUBLE AS stake_pct,
       printf('device %d peaked at %.2f GB held by the allocator (%.2f GB allocated) of its %.2f GB: %.1f %%',
              device, peak / 1e9, coalesce(peak_allocated_bytes, 0) / 1e9, cap / 1e9, 100.0 * peak / cap) AS summary,
       []::BIGINT[] AS uids, []::VARCHAR[] AS names,
       'Close to out of memory: activation checkpointing, smaller micro-batches, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation, or sharding (FSDP).' AS remedy
FROM m
WHERE 100.0 * peak / cap >= _tc_threshold('memory_capacity', 90.0)
ORDER BY peak / cap DESC, trace_id, device;
