-- finding_recompute: device time spent running forward work again under activation checkpointing.
-- Answers: how much GPU time does activation checkpointing (torch.utils.checkpoint) cost in
-- recomputation, and which ops does it re-run?
-- depends: kernels, slices, gpu_timeline
-- uses: rules
-- Rule: device events whose launch call runs inside a `torch/utils/checkpoint.py(…):
-- recompute_fn` frame (slices.is_recompute): the forward of a checkpointed segment re-run in the
-- backward pass to rebuild the activations it did not keep.
-- Threshold tc_threshold_recompute, default 2: recomputed device time of at least this % of the
-- trace's GPU busy time; below it the recompute costs less than two runs of one job differ.
-- Time at stake: the recomputed events' summed duration, the most that checkpointing fewer
-- segments (where memory allows) gives back; events of two streams running at once count twice.
-- Evidence: the ops that launched the most recomputed time (up to 5) and their longest events.
-- Columns (one row per trace over the threshold): every column of findings but sources
CREATE OR REPLACE VIEW finding_recompute AS
WITH span AS (SELECT trace_id, rank, total_ns, busy_ns FROM gpu_timeline WHERE device IS NULL),
rc AS (
    SELECT k.trace_id, k.uid, k.dur_ns, coalesce(o.name, s.name) AS op
    FROM kernels k
    JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
    LEFT JOIN slices o ON o.trace_id = s.trace_id AND o.uid = s.op_uid
    WHERE s.is_recompute
),
per_trace AS (
    SELECT trace_id, sum(dur_ns)::BIGINT AS ns, count(*) AS n, list(uid ORDER BY dur_ns DESC, uid)[1:5] AS uids
    FROM rc GROUP BY trace_id
),
per_op AS (
    SELECT trace_id, list(op ORDER BY ns DESC, op)[1:5] AS names
    FROM (SELECT trace_id, op, sum(dur_ns) AS ns FROM rc GROUP BY ALL) GROUP BY trace_id
)
SELECT 'recompute' AS rule, _tc_severity(100.0 * p.ns / s.total_ns) AS severity, p.trace_id, s.rank,
       NULL::BIGINT AS device, 'activation checkpointing' AS kind, p.ns AS stake_ns,
       100.0 * p.ns / s.total_ns AS stake_pct,
       printf('%d device events (%.3f ms, %.1f %% of the GPU busy time) re-ran forward work under activation checkpointing',
              p.n, p.ns / 1e6, 100.0 * p.ns / s.busy_ns) AS summary,
       p.uids, o.names,
       'Checkpoint fewer or smaller segments where memory allows (or use selective checkpointing of cheap ops): each recomputed ms is a ms of the step.' AS remedy
FROM per_trace p JOIN span s ON s.trace_id = p.trace_id JOIN per_op o ON o.trace_id = p.trace_id
WHERE s.busy_ns > 0 AND 100.0 * p.ns / s.busy_ns >= _tc_threshold('recompute', 2.0)
ORDER BY p.ns DESC, p.trace_id;
