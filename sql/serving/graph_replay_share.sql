-- graph_replay_share: how much of the GPU busy time sits in graph replays whose ops are not known.
-- Answers: is this trace's op attribution hiding CUDA/HIP-graph work (docs/graphs.md)?
-- depends: graph_replays, gpu_timeline
-- A graph launch's kernels are known by op when they matched a capture trace (--capture);
-- the others sit on a `graph replay @ …` pseudo op. One row per trace that has graph launches.
-- Columns:
--   trace_id              INTEGER  trace
--   launches              BIGINT   graph launches
--   unmatched             BIGINT   graph launches without captured ops (no capture traces, or no match)
--   unmatched_kernel_ns   BIGINT   ns, summed duration of the device events of those launches
--   busy_ns               BIGINT   ns, GPU busy time of the trace (every device together)
--   unmatched_pct         DOUBLE   % (0–100), unmatched_kernel_ns / busy_ns (at most 100)
--   first_site            VARCHAR  the pseudo op name of the first unmatched launch
--   mismatched            BIGINT   unmatched launches that capture traces were given for but did not match
--   first_mismatch        VARCHAR  for the first of those: where the kernel sequences part
CREATE OR REPLACE VIEW graph_replay_share AS
SELECT g.trace_id, count(*) AS launches, count(*) FILTER (WHERE NOT g.matched) AS unmatched,
       coalesce(sum(g.kernel_sum_ns) FILTER (WHERE NOT g.matched), 0)::BIGINT AS unmatched_kernel_ns,
       any_value(b.busy_ns) AS busy_ns,
       least(100.0, 100.0 * coalesce(sum(g.kernel_sum_ns) FILTER (WHERE NOT g.matched), 0)
                    / nullif(any_value(b.busy_ns), 0)) AS unmatched_pct,
       arg_min(g.site, g.ts_ns) FILTER (WHERE NOT g.matched) AS first_site,
       count(*) FILTER (WHERE NOT g.matched AND g.mismatch_at IS NOT NULL) AS mismatched,
       arg_min('kernel ' || g.mismatch_at || ' of ' || g.kernels || ': replayed '
               || coalesce(g.mismatch_kernel, '?') || ', captured ' || coalesce(g.mismatch_captured, 'none'),
               g.ts_ns) FILTER (WHERE NOT g.matched AND g.mismatch_at IS NOT NULL) AS first_mismatch
FROM graph_replays g
JOIN gpu_timeline b ON b.trace_id = g.trace_id AND b.device IS NULL
GROUP BY g.trace_id;
