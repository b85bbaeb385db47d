-- finding_host_idle: GPU idle time caused by host work, by what the host was doing.
-- Answers: how long did a device sit idle waiting for the host, and was the host loading data,
-- reading a device value (.item(), nonzero), copying from pageable memory, synchronising, or
-- just launching too slowly?
-- depends: _device_idle, kernels, slices, gpu_timeline
-- uses: rules
-- Rule: each host_wait gap of idle_gaps (the launch call of the event after it started after
-- the stream's previous work had ended) gets the host work of the thread that made that launch
-- call. Of the calls of each kind below on that thread, the last to start at or before the
-- launch call counts when it ends after the gap starts: any overlap, because a synchronising
-- call returns just after the stream drains, and the gap after it is the host relaunching the
-- work it could not queue ahead. When several kinds overlap, the first in this list wins (the
-- reason before the call it makes: .item() synchronises):
--   data_loading   the DataLoader's `enumerate(DataLoader)#…__next__` annotation
--   item           aten::item, aten::is_nonzero, aten::_local_scalar_dense outside those (the host reads a device scalar)
--   nonzero        aten::nonzero, nonzero_numpy, masked_select, _unique, _unique2, unique_dim,
--                  unique_consecutive (the host reads the size of the output)
--                  (item and nonzero ops count only when they made a runtime call, cuda_runtime
--                  or cuda_driver, beneath them: on a CPU tensor they wait for no device)
--   pageable_copy  the launch call of a copy from or to pageable host memory (`Memcpy HtoD (Pageable -> Device)`)
--   sync           cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cudaMemcpy
--                  (and their hip names, cuStreamSynchronize, cuCtxSynchronize, cuEventSynchronize; MTIA's synchronizeStream)
--   launch         none of those: the host was busy with other work (Python, the framework, launch calls)
-- Time at stake: of each such gap, the part in which the whole device was idle (_device_idle:
-- a stream waiting beside a busy stream costs nothing), summed per (trace, device, cause): the
-- host_wait gaps of idle_gaps counted where the device idled. The causes split that time
-- without overlap, and the devices are apart, so no two host_idle findings overlap.
-- Threshold tc_threshold_host_idle, default 1: a finding needs a time at stake of at least this
-- % of its trace's GPU span (below 1 % a fix is not worth a look first).
-- Evidence: uids of the host calls before the longest gaps (5, one each) (for launch: the device events
-- after them); names of the host calls (for launch: the ops that launched those events) with
-- the most gap time.
-- Columns (one row per (trace, device, cause) over the threshold): every column of findings but sources
CREATE OR REPLACE VIEW finding_host_idle AS
WITH g AS (
    SELECT i.trace_id, i.rank, i.device, i.stream, i.uid, i.gap_start_ns, i.device_idle_ns AS gap_ns,
           k.launch_ts_ns, k.launch_pid, k.launch_tid, k.op_uid, k.name AS kernel_name
    FROM _device_idle i JOIN kernels k ON k.trace_id = i.trace_id AND k.uid = i.uid
    WHERE i.cause = 'host_wait' AND i.device_idle_ns > 0
),
cls AS (  -- the host calls of each kind; prio is the kind's place in the list above
    SELECT trace_id, pid, tid, uid, name, ts_ns, end_ns,
           CASE WHEN name LIKE 'enumerate(DataLoader)%' THEN 1
                WHEN name IN ('aten::item', 'aten::_local_scalar_dense', 'aten::is_nonzero') THEN 2
                WHEN name IN ('aten::nonzero', 'aten::nonzero_numpy', 'aten::masked_select', 'aten::_unique',
                              'aten::_unique2', 'aten::unique_dim', 'aten::unique_consecutive') THEN 3
                ELSE 5 END AS prio
    FROM slices s
    WHERE (name LIKE 'enumerate(DataLoader)%'
       OR name IN ('aten::item', 'aten::_local_scalar_dense', 'aten::is_nonzero', 'aten::nonzero',
                   'aten::nonzero_numpy', 'aten::masked_select', 'aten::_unique', 'aten::_unique2',
                   'aten::unique_dim', 'aten::unique_consecutive')
       OR regexp_full_match(name, '(cuda|hip)(Stream|Device|Event)Synchronize|cu(Stream|Ctx|Event)Synchronize|(cuda|hip)Memcpy|synchronize(Stream|Device)'))
      -- the op the user called names the gap: a _local_scalar_dense inside aten::item is left to it
      AND NOT (name = 'aten::_local_scalar_dense' AND EXISTS (
          SELECT 1 FROM slices p WHERE p.trace_id = s.trace_id AND p.uid = s.parent_uid
                                   AND p.name IN ('aten::item', 'aten::is_nonzero')))
      -- an op on a CPU tensor (the optimizer's step counter) waits for no device: only one that
      -- made a runtime call (the copy of its result, the synchronisation) counts
      AND (name LIKE 'enumerate(DataLoader)%' OR name NOT LIKE 'aten::%' OR EXISTS (
          SELECT 1 FROM slices d WHERE d.trace_id = s.trace_id AND d.pre > s.pre AND d.pre <= s.subtree_end
                                   AND d.cat IN ('cuda_runtime', 'cuda_driver')))
    UNION ALL
    SELECT s.trace_id, s.pid, s.tid, s.uid, k.name, s.ts_ns, s.end_ns, 4
    FROM kernels k JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
    WHERE k.cat = 'gpu_memcpy' AND k.name LIKE '%Pageable%'
),
hits AS (  -- per gap and kind, the last call of that kind to start by the launch call
    SELECT g.trace_id, g.uid, c.prio, c.uid AS host_uid, c.name AS host_name
    FROM (SELECT g.*, p.prio FROM g CROSS JOIN range(1, 6) p(prio)) g
    ASOF JOIN cls c ON c.trace_id = g.trace_id AND c.pid = g.launch_pid AND c.tid = g.launch_tid
                   AND c.prio = g.prio AND g.launch_ts_ns >= c.ts_ns
    WHERE c.end_ns > g.gap_start_ns
),
best AS (
    SELECT trace_id, uid, min(prio) AS prio, arg_min(host_uid, prio) AS host_uid, arg_min(host_name, prio) AS host_name
    FROM hits GROUP BY trace_id, uid
),
gc AS (
    SELECT g.*, coalesce(b.prio, 6) AS prio,
           coalesce(b.host_uid, g.uid) AS ev_uid,
           coalesce(b.host_name, o.name, g.kernel_name) AS ev_name
    FROM g LEFT JOIN best b ON b.trace_id = g.trace_id AND b.uid = g.uid
    LEFT JOIN slices o ON b.prio IS NULL AND o.trace_id = g.trace_id AND o.uid = g.op_uid
),
by_name AS (
    SELECT trace_id, device, prio, list(ev_name ORDER BY ns DESC, ev_name)[1:5] AS names
    FROM (SELECT trace_id, device, prio, ev_name, sum(gap_ns) AS ns FROM gc GROUP BY ALL)
    GROUP BY ALL
),
grp AS (  -- uids: one per host call (two gaps can follow one call), by its longest gap
    SELECT trace_id, any_value(rank) AS rank, device, prio, sum(ns)::BIGINT AS stake_ns, sum(gaps) AS gaps,
           list(ev_uid ORDER BY longest DESC, ev_uid)[1:5] AS uids
    FROM (SELECT trace_id, any_value(rank) AS rank, device, prio, ev_uid, sum(gap_ns) AS ns, count(*) AS gaps,
                 max(gap_ns) AS longest
          FROM gc GROUP BY trace_id, device, prio, ev_uid)
    GROUP BY trace_id, device, prio
),
span AS (SELECT trace_id, total_ns FROM gpu_timeline WHERE device IS NULL),
k AS (
    SELECT * FROM (VALUES
        (1, 'data_loading', 'the DataLoader',
         'Load data ahead of the GPU: DataLoader(num_workers > 0, pin_memory=True, prefetch_factor), or preprocess on the GPU.'),
        (2, 'item', '.item() (the host read a device scalar)',
         'Keep the value on the device (no .item(), float(t) or `if t:` in the step), or read it once every N steps.'),
        (3, 'nonzero', 'nonzero-like ops (the host read an output size)',
         'Avoid data-dependent shapes in the step: masks instead of nonzero/masked_select, or torch.nonzero_static with a bound.'),
        (4, 'pageable_copy', 'copies from or to pageable host memory',
         'Copy from pinned memory (pin_memory=True, tensor.pin_memory()) with non_blocking=True.'),
        (5, 'sync', 'synchronising calls',
         'Remove explicit synchronisation from the step (torch.cuda.synchronize, event.synchronize, blocking copies) or move it to the end.'),
        (6, 'launch', 'other work (Python, framework, launch calls)',
         'The host launches slower than the device runs: cut host overhead with torch.compile, CUDA graphs or larger batches (see optimizable_ops).')
    ) t(prio, cause, what, remedy)
)
SELECT 'host_idle' AS rule, _tc_severity(100.0 * grp.stake_ns / s.total_ns) AS severity,
       grp.trace_id, grp.rank, grp.device, k.cause AS kind, grp.stake_ns,
       100.0 * grp.stake_ns / s.total_ns AS stake_pct,
       printf('device %d idle %.3f ms in %d gaps while the host ran %s', grp.device, grp.stake_ns / 1e6, grp.gaps, k.what) AS summary,
       grp.uids, n.names, k.remedy
FROM grp JOIN k ON k.prio = grp.prio JOIN span s ON s.trace_id = grp.trace_id
JOIN by_name n ON n.trace_id = grp.trace_id AND n.device = grp.device AND n.prio = grp.prio
WHERE 100.0 * grp.stake_ns / s.total_ns >= _tc_threshold('host_idle', 1.0)
ORDER BY grp.stake_ns DESC, grp.trace_id, grp.device, grp.prio;
