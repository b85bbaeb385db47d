-- finding_launch_bound: stretches of tiny kernels that the host cannot launch fast enough.
-- Answers: where does a stream run long runs of kernels each shorter than its own launch call,
-- so that launching, not the work, sets the pace — the candidates for fusion or a CUDA graph?
-- depends: kernels, kernel_launch_stats, _device_idle, gpu_timeline
-- uses: rules
-- Rule: on each (trace, device, stream), device events in start order; a kernel is launch-bound
-- when kernel_launch_stats.short holds (it ran for less time than its launch call took on the
-- CPU: HTA's short kernel). Copies and memsets, kernels launched by a graph launch (in a graph
-- already, and their launch call is the whole graph's) and unlinked events never are.
-- A stretch is a run of consecutive launch-bound events on the stream.
-- Threshold tc_threshold_launch_bound, default 16: a stretch needs at least this many events
-- (a handful of small kernels in a row is normal; dozens are a loop of tiny ops).
-- Time at stake: before each event of a stretch but the first, the device's idle time
-- (_device_idle.device_idle_ns) up to the duration of the event's launch call — the idle time
-- the launch itself explains, which one launch of the fused work, or of a graph, would remove
-- (a longer gap has another cause: host_idle). Those gaps are host_wait gaps, mostly, and
-- host_idle counts them too (cause launch): the two findings overlap and are not to be added.
-- One finding per stream with at least one stretch and idle time in it.
-- Evidence: uids of the first events of the 5 stretches with the most gap time; the kernel
-- names most often in stretches.
-- Columns (one row per (trace, device, stream) with stretches): every column of findings but sources
CREATE OR REPLACE VIEW finding_launch_bound AS
WITH ev AS (
    SELECT k.trace_id, k.rank, k.device, k.stream, k.uid, k.name, k.dur_ns,
           coalesce(k.cat = 'kernel' AND l.short AND l.launch_name NOT ILIKE '%GraphLaunch%', false) AS lb,
           l.cpu_dur_ns,
           row_number() OVER w AS pos
    FROM kernels k LEFT JOIN kernel_launch_stats l ON l.trace_id = k.trace_id AND l.uid = k.uid
    WINDOW w AS (PARTITION BY k.trace_id, k.device, k.stream ORDER BY k.ts_ns, k.end_ns, k.uid)
),
runs AS (  -- a run of launch-bound events: pos minus its place among the launch-bound ones
    SELECT *, pos - row_number() OVER (PARTITION BY trace_id, device, stream ORDER BY pos) AS run,
    FROM ev WHERE lb
),
stretch AS (
    SELECT *, count(*) OVER (PARTITION BY trace_id, device, stream, run) AS n,
           min(pos) OVER (PARTITION BY trace_id, device, stream, run) AS first_pos
    FROM runs
),
inside AS (  -- events of long stretches, with the gap before each but the first
    SELECT s.*, CASE WHEN s.pos > s.first_pos THEN least(coalesce(i.device_idle_ns, 0), s.cpu_dur_ns) ELSE 0 END AS gap_ns
    FROM stretch s LEFT JOIN _device_idle i ON i.trace_id = s.trace_id AND i.uid = s.uid
    WHERE s.n >= _tc_threshold('launch_bound', 16)
),
per_stretch AS (
    SELECT trace_id, device, stream, run, arg_min(uid, pos) AS first_uid, sum(gap_ns) AS gap_ns
    FROM inside GROUP BY ALL
),
top_names AS (
    SELECT trace_id, device, stream, list(name ORDER BY c DESC, name)[1:5] AS names
    FROM (SELECT trace_id, device, stream, name, count(*) AS c FROM inside GROUP BY ALL) GROUP BY ALL
),
grp AS (
    SELECT i.trace_id, any_value(i.rank) AS rank, i.device, i.stream, sum(i.gap_ns)::BIGINT AS stake_ns,
           count(*) AS events, count(DISTINCT i.run) AS stretches, sum(i.dur_ns) AS kernel_ns,
           min(i.n) AS shortest, max(i.n) AS longest,
           (SELECT list(first_uid ORDER BY gap_ns DESC, first_uid)[1:5] FROM per_stretch p
            WHERE p.trace_id = i.trace_id AND p.device = i.device AND p.stream = i.stream) AS uids
    FROM inside i GROUP BY i.trace_id, i.device, i.stream
),
span AS (SELECT trace_id, total_ns FROM gpu_timeline WHERE device IS NULL)
SELECT 'launch_bound' AS rule, _tc_severity(100.0 * g.stake_ns / s.total_ns) AS severity,
       g.trace_id, g.rank, g.device, printf('stream %d', g.stream) AS kind, g.stake_ns,
       100.0 * g.stake_ns / s.total_ns AS stake_pct,
       printf('%d stretch(es) of %d to %d kernels each shorter than its launch call (%d kernels, %.3f ms of work) and %.3f ms of device idle time between them that their launches explain',
              g.stretches, g.shortest, g.longest, g.events, g.kernel_ns / 1e6, g.stake_ns / 1e6) AS summary,
       g.uids, n.names,
       'Fuse the small ops (torch.compile) or capture the stretch in a CUDA graph, so that one launch replaces many.' AS remedy
FROM grp g JOIN span s ON s.trace_id = g.trace_id
JOIN top_names n ON n.trace_id = g.trace_id AND n.device = g.device AND n.stream = g.stream
WHERE g.stake_ns > 0
ORDER BY g.stake_ns DESC, g.trace_id, g.device, g.stream;
