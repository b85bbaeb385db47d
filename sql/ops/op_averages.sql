-- op_averages: torch.profiler's key_averages() table — per event name: calls, self and total
-- CPU time, self and total device time, and the percentages its table() prints.
-- Answers, for people used to `prof.key_averages().table()`: the same rows from a saved trace.
-- depends: _op_time
-- Events: cpu_op, user_annotation and runtime-call (cuda_runtime, cuda_driver) slices, the
-- host events of torch's table; Python frames (with_stack) and device-side annotations are left
-- out (the latter would count device time twice). Per event, as torch defines it:
-- CPU total = its wall time, self CPU = wall time minus its children's, device total = the
-- device events launched in its subtree, self device = those it launched itself (_op_time).
-- Sums are over every event of the name, nested ones included: for aten::add inside aten::add
-- both count, so the inner one's time is in the name's CPU and device totals twice (torch
-- adds the same way); self times are counted once. The exception is torch's too: an event that
-- is its parent's only child and has its name is folded into the parent (_op_time), no call of
-- its own; ProfilerStep#N rows are one, ProfilerStep*. The % columns are of the trace's sum of
-- self CPU time / self device time over every row (the totals table() prints under the table),
-- so self_cpu_pct and self_device_pct each add up to 100 over a trace's rows.
-- Columns (one row per trace and name, sorted by device total, then CPU total, descending):
--   trace_id               INTEGER  trace
--   name                   VARCHAR  event name (every ProfilerStep#N is ProfilerStep*, as in torch's table)
--   cat                    VARCHAR  cpu_op, user_annotation, cuda_runtime or cuda_driver (a name seen with two gets a row for each)
--   calls                  BIGINT   number of events (torch: "# of Calls")
--   self_cpu_ns            BIGINT   ns, sum of self CPU time ("Self CPU")
--   cpu_total_ns           BIGINT   ns, sum of wall time ("CPU total")
--   cpu_avg_ns             DOUBLE   ns, cpu_total_ns / calls ("CPU time avg")
--   self_device_ns         BIGINT   ns, sum of durations of the device events the events launched ("Self CUDA")
--   device_total_ns        BIGINT   ns, sum of durations of the device events launched in their subtrees ("CUDA total")
--   device_avg_ns          DOUBLE   ns, device_total_ns / calls ("CUDA time avg")
--   self_cpu_pct           DOUBLE   % (0–100), self_cpu_ns / the trace's total self CPU time ("Self CPU %")
--   cpu_total_pct          DOUBLE   % (can exceed 100), cpu_total_ns / the trace's total self CPU time ("CPU total %")
--   self_device_pct        DOUBLE   % (0–100), self_device_ns / the trace's total self device time ("Self CUDA %"; null without device time)
CREATE OR REPLACE VIEW op_averages AS
SELECT trace_id, name, cat, count(*) FILTER (WHERE NOT folded)::BIGINT AS calls,
       sum(self_ns)::BIGINT AS self_cpu_ns, sum(dur_ns) FILTER (WHERE NOT folded)::BIGINT AS cpu_total_ns,
       sum(dur_ns) FILTER (WHERE NOT folded) / count(*) FILTER (WHERE NOT folded) AS cpu_avg_ns,
       sum(self_device_ns)::BIGINT AS self_device_ns, sum(device_ns) FILTER (WHERE NOT folded)::BIGINT AS device_total_ns,
       sum(device_ns) FILTER (WHERE NOT folded) / count(*) FILTER (WHERE NOT folded) AS device_avg_ns,
       100.0 * sum(self_ns) / nullif(sum(sum(self_ns)) OVER (PARTITION BY trace_id), 0) AS self_cpu_pct,
       100.0 * sum(dur_ns) FILTER (WHERE NOT folded) / nullif(sum(sum(self_ns)) OVER (PARTITION BY trace_id), 0) AS cpu_total_pct,
       100.0 * sum(self_device_ns) / nullif(sum(sum(self_device_ns)) OVER (PARTITION BY trace_id), 0)
           AS self_device_pct
FROM _op_time
GROUP BY trace_id, name, cat
ORDER BY trace_id, device_total_ns DESC, cpu_total_ns DESC, name, cat;
