-- finding_data_quality: what makes other numbers of this trace unreliable.
-- Answers: did the reader have to work around broken or missing data, or do modelled ops run
-- faster than the device can, so that some figures are not measurements?
-- depends: traces, op_perf
-- Rule: each of the reader's warnings (traces.warnings: clipped overlaps, outlying timestamps,
-- …) is one finding (kind reader); and a trace with op_perf rows marked above_peak gets one
-- (kind above_peak), with the 5 such ops with the most device time as evidence.
-- No threshold: every warning counts. Time at stake: none; severity medium.
-- Columns (one row per warning): every column of findings but sources
CREATE OR REPLACE VIEW finding_data_quality AS
WITH w AS (
    SELECT trace_id, rank, unnest(warnings) AS warning FROM traces
),
p AS (
    SELECT trace_id, any_value(rank) AS rank, count(*) AS ops,
           list(uid ORDER BY gpu_ns DESC, uid)[1:5] AS uids,
           list(DISTINCT name ORDER BY name)[1:5] AS names
    FROM op_perf WHERE above_peak GROUP BY trace_id
)
SELECT 'data_quality' AS rule, 'medium' AS severity, trace_id, rank, NULL::BIGINT AS device, 'reader' AS kind,
       NULL::BIGINT AS stake_ns, NULL::DOUBLE AS stake_pct, warning AS summary,
       []::BIGINT[] AS uids, []::VARCHAR[] AS names,
       'Read the figures this warning touches with care (docs/schema.md, traces.warnings); a fresh capture may avoid it.' AS remedy
FROM w
UNION ALL
SELECT 'data_quality', 'medium', trace_id, rank, NULL, 'above_peak', NULL, NULL,
       printf('%d modelled ops ran faster than the device''s peak: their FLOPs or bytes model, or their time, is wrong, and their roofline figures are not measurements', ops),
       uids, names,
       'Do not trust op_perf/kernel_perf percentages for these ops; check their shapes and whether kernels are missing from their time.'
FROM p
ORDER BY trace_id, kind, summary;
