-- finding_unattributed_replay: GPU time in CUDA/HIP-graph replays whose ops are not known.
-- Answers: how much of the GPU's work does this trace's op attribution hide inside graph replays?
-- depends: graph_replay_share, gpu_timeline
-- uses: rules
-- Rule: graph_replay_share's unmatched launches (no captured ops: no capture trace given, or
-- none matched); their kernels sit on `graph replay @ …` pseudo ops in the op views.
-- Threshold tc_threshold_unattributed_replay, default 5: unmatched_pct (of the GPU busy time)
-- of at least this %: below it the op views are nearly whole.
-- Time at stake: unmatched_kernel_ns, the device time the op views cannot attribute (not time
-- to win back: time whose cause the other findings cannot see).
-- Evidence: the pseudo op of the first unmatched launch.
-- Columns (one row per trace over the threshold): every column of findings but sources
CREATE OR REPLACE VIEW finding_unattributed_replay AS
WITH span AS (SELECT trace_id, rank, total_ns FROM gpu_timeline WHERE device IS NULL)
SELECT 'unattributed_replay' AS rule, _tc_severity(100.0 * r.unmatched_kernel_ns / s.total_ns) AS severity,
       r.trace_id, s.rank, NULL::BIGINT AS device, 'graph replay' AS kind, r.unmatched_kernel_ns AS stake_ns,
       100.0 * r.unmatched_kernel_ns / s.total_ns AS stake_pct,
       printf('%d of %d graph launches have no captured ops: %.3f ms of device time (%.0f %% of the busy time) is not attributed to ops',
              r.unmatched, r.launches, r.unmatched_kernel_ns / 1e6, r.unmatched_pct) AS summary,
       []::BIGINT[] AS uids, [r.first_site] AS names,
       'Profile the graph capture too and pass that trace with --capture (docs/graphs.md), so that replayed kernels get their ops.' AS remedy
FROM graph_replay_share r JOIN span s ON s.trace_id = r.trace_id
WHERE r.unmatched > 0 AND r.unmatched_pct >= _tc_threshold('unattributed_replay', 5.0)
ORDER BY r.unmatched_kernel_ns DESC, r.trace_id;
