-- finding_low_roofline: big GEMMs and attention calls that run far below the device's roofline.
-- Answers: which large matrix multiplications and attention calls leave most of the device's
-- capability unused, and how much time would running them at the roofline give back?
-- depends: op_perf, gpu_timeline
-- uses: rules
-- Rule: op_perf's innermost modelled ops of category gemm (kind gemm) or sdpa_fwd / sdpa_bwd
-- (kind attention) that are big — 50 µs or more of device time (gpu_ns), where launch and
-- tail effects no longer excuse a low figure (fixed) — whose roofline_pct is known and below the
-- threshold. Ops marked above_peak are left out: their figures are not a measurement.
-- Threshold tc_threshold_low_roofline, default 50: roofline_pct below this % (half of what the
-- device can do at the op's arithmetic intensity).
-- Time at stake: per op, gpu_ns × (1 - roofline_pct / 100), the time beyond what the roofline
-- allows; summed over the ops of one (trace, device, kind). Innermost ops do not nest, so the
-- sum counts no time twice on one stream (ops on concurrent streams can overlap).
-- Evidence: the 5 ops with the most time at stake; names as `name [shapes]`.
-- Columns (one row per (trace, device, kind) with such ops): every column of findings but sources
CREATE OR REPLACE VIEW finding_low_roofline AS
WITH o AS (
    SELECT trace_id, rank, device, uid, name, shapes, gpu_ns, roofline_pct,
           CASE WHEN category = 'gemm' THEN 'gemm' ELSE 'attention' END AS kind,
           gpu_ns * (1 - roofline_pct / 100.0) AS stake
    FROM op_perf
    WHERE innermost AND category IN ('gemm', 'sdpa_fwd', 'sdpa_bwd') AND gpu_ns >= 50000
      AND roofline_pct IS NOT NULL AND NOT coalesce(above_peak, false)
      AND roofline_pct < _tc_threshold('low_roofline', 50.0)
),
grp AS (
    SELECT trace_id, any_value(rank) AS rank, device, kind, round(sum(stake))::BIGINT AS stake_ns,
           count(*) AS ops, sum(gpu_ns) AS gpu_ns, sum(gpu_ns * roofline_pct) / sum(gpu_ns) AS pct,
           list(uid ORDER BY stake DESC, uid)[1:5] AS uids,
           list(name || ' ' || coalesce(shapes, '') ORDER BY stake DESC, uid)[1:5] AS names
    FROM o GROUP BY trace_id, device, kind
),
span AS (SELECT trace_id, total_ns FROM gpu_timeline WHERE device IS NULL)
SELECT 'low_roofline' AS rule, _tc_severity(100.0 * g.stake_ns / s.total_ns) AS severity,
       g.trace_id, g.rank, g.device, g.kind, g.stake_ns, 100.0 * g.stake_ns / s.total_ns AS stake_pct,
       printf('%d %s calls of 50 µs or more ran at %.0f %% of the roofline (time-weighted): %.3f ms of their %.3f ms is beyond it',
              g.ops, CASE g.kind WHEN 'gemm' THEN 'GEMM' ELSE 'attention' END, g.pct, g.stake_ns / 1e6, g.gpu_ns / 1e6) AS summary,
       g.uids, g.names,
       CASE g.kind WHEN 'gemm'
            THEN 'Check the dtype (bf16/fp16, or TF32 via torch.backends.cuda.matmul.allow_tf32), sizes that are multiples of 16 and batching small GEMMs; then tuned kernels (torch.compile mode="max-autotune").'
            ELSE 'Use a fused attention kernel (scaled_dot_product_attention with the flash or cuDNN backend) in bf16/fp16, with head sizes a multiple of 8.'
       END AS remedy
FROM grp g JOIN span s ON s.trace_id = g.trace_id
ORDER BY g.stake_ns DESC, g.trace_id, g.device, g.kind;
