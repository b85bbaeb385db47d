-- finding_exposed_comm: communication the device waited for, not hidden behind computation.
-- Answers: on which device does communication run with no computation beside it, and for how long?
-- depends: gpu_timeline, kernels
-- uses: rules
-- Rule: gpu_timeline's exposed_comm_ns of each device (communication kernels' union less the
-- part covered by computation kernels).
-- Time at stake: that exposed_comm_ns: the most that overlapping the communication with
-- computation, or removing it, could give back on that device.
-- Threshold tc_threshold_exposed_comm, default 1: exposed communication of at least this % of
-- the trace's GPU span.
-- Evidence: the 5 longest communication kernels of the device and the names with the most time.
-- Columns (one row per device over the threshold): every column of findings but sources
CREATE OR REPLACE VIEW finding_exposed_comm AS
WITH span AS (SELECT trace_id, total_ns FROM gpu_timeline WHERE device IS NULL),
d AS (
    SELECT g.trace_id, g.rank, g.device, g.exposed_comm_ns AS stake_ns, g.total_comm_ns,
           100.0 * g.exposed_comm_ns / s.total_ns AS stake_pct
    FROM gpu_timeline g JOIN span s ON s.trace_id = g.trace_id
    WHERE g.device IS NOT NULL AND g.exposed_comm_ns > 0
),
comm AS (
    SELECT trace_id, device, list(uid ORDER BY dur_ns DESC, uid)[1:5] AS uids
    FROM kernels WHERE kernel_class = 'communication' GROUP BY ALL
),
comm_names AS (
    SELECT trace_id, device, list(name ORDER BY ns DESC, name)[1:5] AS names
    FROM (SELECT trace_id, device, name, sum(dur_ns) AS ns FROM kernels WHERE kernel_class = 'communication' GROUP BY ALL)
    GROUP BY ALL
)
SELECT 'exposed_comm' AS rule, _tc_severity(d.stake_pct) AS severity, d.trace_id, d.rank, d.device,
       'communication' AS kind, d.stake_ns, d.stake_pct,
       printf('device %d waited %.3f ms on communication with no computation beside it (%.0f %% of its %.3f ms of communication)',
              d.device, d.stake_ns / 1e6, 100.0 * d.stake_ns / d.total_comm_ns, d.total_comm_ns / 1e6) AS summary,
       c.uids, n.names,
       'Overlap communication with computation (DDP bucket_cap_mb, FSDP prefetch, async collectives) or move less data (fewer, larger collectives; lower precision).' AS remedy
FROM d JOIN comm c ON c.trace_id = d.trace_id AND c.device = d.device
JOIN comm_names n ON n.trace_id = d.trace_id AND n.device = d.device
WHERE d.stake_pct >= _tc_threshold('exposed_comm', 1.0)
ORDER BY d.stake_ns DESC, d.trace_id, d.device;
