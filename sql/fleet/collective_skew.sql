-- collective_skew: each collective call matched across the ranks that took part, and how far
-- apart the ranks arrived and finished.
-- Answers: for every collective instance, which rank arrived last (the one the others waited
-- for), by how much the start times and the end times of its kernels differ across ranks.
-- depends: collectives
-- An instance is one (pg_key, collective, seq): where the traces record the process group's
-- sequence number of each call (paired_by = 'seq'), seq is that number, the same on every
-- rank whatever calls a rank skipped or issued in another order; otherwise (paired_by =
-- 'order') it is the seq-th call of that collective on that process group, counted on each
-- rank (see collectives: match_seq). Ranks arrive when their kernel starts
-- on the GPU; a rank that arrives early waits inside the kernel, so its kernel is longer.
-- Kernel timestamps of different ranks are compared as written: they are comparable when the
-- hosts' clocks are synchronised (one host, or NTP/PTP across hosts).
-- When a rank launched several kernels for one call (rare), its first start and last end count.
-- Columns:
--   pg_key             VARCHAR  process group (pg_name, or 'default')
--   collective         VARCHAR  allreduce, allgather, … (see collectives)
--   seq                BIGINT   the call's sequence number on that group as the traces record
--                               it (paired_by = 'seq'), else its 0-based call number
--   ranks              BIGINT   ranks seen in this instance
--   group_size         INTEGER  ranks in the group (max over the ranks' records)
--   complete           BOOLEAN  ranks = group_size (every member's trace is in the lake)
--   msg_bytes          BIGINT   bytes, largest message size reported by a rank
--   first_start_ns     BIGINT   ns, earliest kernel start (first arrival)
--   last_start_ns      BIGINT   ns, latest kernel start (last arrival)
--   start_skew_ns      BIGINT   ns, last_start_ns - first_start_ns
--   first_end_ns, last_end_ns BIGINT ns, earliest and latest kernel end
--   end_skew_ns        BIGINT   ns, last_end_ns - first_end_ns
--   first_rank         INTEGER  the rank that arrived first (ties: the lowest rank)
--   last_rank          INTEGER  the rank that arrived last (ties: the lowest rank)
--   min_dur_ns         BIGINT   ns, shortest kernel: close to the transfer time itself
--   max_dur_ns         BIGINT   ns, longest kernel: transfer plus the longest wait
--   paired_by          VARCHAR  'seq' (by the recorded sequence number) or 'order' (by call order)
CREATE OR REPLACE VIEW collective_skew AS
WITH per_rank AS (
    SELECT pg_key, collective, match_seq AS seq, paired_by, rank, trace_id,
           min(ts_ns) AS ts_ns, max(end_ns) AS end_ns, sum(dur_ns)::BIGINT AS dur_ns,
           max(msg_bytes) AS msg_bytes, max(group_size) AS group_size
    FROM collectives WHERE collective IS NOT NULL
    GROUP BY pg_key, collective, match_seq, paired_by, rank, trace_id
)
SELECT pg_key, collective, seq, count(*) AS ranks, max(group_size) AS group_size,
       count(*) = max(group_size) AS complete, max(msg_bytes) AS msg_bytes,
       min(ts_ns) AS first_start_ns, max(ts_ns) AS last_start_ns,
       max(ts_ns) - min(ts_ns) AS start_skew_ns,
       min(end_ns) AS first_end_ns, max(end_ns) AS last_end_ns,
       max(end_ns) - min(end_ns) AS end_skew_ns,
       arg_min(rank, (ts_ns, rank)) AS first_rank,
       arg_max(rank, (ts_ns, -rank)) AS last_rank,
       min(dur_ns)::BIGINT AS min_dur_ns, max(dur_ns)::BIGINT AS max_dur_ns, paired_by
FROM per_rank
GROUP BY pg_key, collective, seq, paired_by
ORDER BY first_start_ns, pg_key, collective, seq;
