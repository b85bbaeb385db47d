-- idle_time: idle time of every stream, split by cause.
-- Answers: how much of each stream's active span was idle, and was that the host not
-- launching fast enough (host_wait), short gaps between kernels (kernel_wait), or other?
-- depends: kernels, idle_gaps, traces
-- Causes as in idle_gaps. The span of a stream runs from the start of its first device event
-- to the end of its last; idle_ns = span_ns - busy_ns = the sum of the gaps.
-- Columns (one row per (trace_id, device, stream)):
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank (null when unknown)
--   device           BIGINT   device id
--   stream           BIGINT   stream id
--   events           BIGINT   device events on the stream
--   span_ns          BIGINT   ns, first start to last end
--   busy_ns          BIGINT   ns, span_ns - idle_ns
--   idle_ns          BIGINT   ns, sum of the gaps
--   host_wait_ns     BIGINT   ns, gaps caused by the host
--   kernel_wait_ns   BIGINT   ns, short (< 30 µs) kernel-to-kernel gaps
--   other_ns         BIGINT   ns, the remaining gaps
--   gaps             BIGINT   number of gaps
--   host_wait_gaps, kernel_wait_gaps, other_gaps  BIGINT  number of gaps of each cause
--   idle_pct         DOUBLE   % (0-100) of span_ns
--   host_wait_pct, kernel_wait_pct, other_pct     DOUBLE  % (0-100) of idle_ns (sum to 100)
CREATE OR REPLACE VIEW idle_time AS
WITH s AS (
    SELECT trace_id, device, stream, count(*) AS events, max(end_ns) - min(ts_ns) AS span_ns
    FROM kernels GROUP BY ALL
),
g AS (
    SELECT trace_id, device, stream, sum(gap_ns) AS idle_ns, count(*) AS gaps,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'host_wait'), 0) AS hw,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'kernel_wait'), 0) AS kw,
           coalesce(sum(gap_ns) FILTER (WHERE cause = 'other'), 0) AS ot,
           count(*) FILTER (WHERE cause = 'host_wait') AS hwn,
           count(*) FILTER (WHERE cause = 'kernel_wait') AS kwn,
           count(*) FILTER (WHERE cause = 'other') AS otn
    FROM idle_gaps GROUP BY ALL
)
SELECT s.trace_id, t.rank, s.device, s.stream, s.events, s.span_ns::BIGINT AS span_ns,
       (s.span_ns - coalesce(g.idle_ns, 0))::BIGINT AS busy_ns,
       coalesce(g.idle_ns, 0)::BIGINT AS idle_ns,
       coalesce(hw, 0)::BIGINT AS host_wait_ns, coalesce(kw, 0)::BIGINT AS kernel_wait_ns,
       coalesce(ot, 0)::BIGINT AS other_ns,
       coalesce(gaps, 0) AS gaps, coalesce(hwn, 0) AS host_wait_gaps,
       coalesce(kwn, 0) AS kernel_wait_gaps, coalesce(otn, 0) AS other_gaps,
       100.0 * coalesce(g.idle_ns, 0) / nullif(s.span_ns, 0) AS idle_pct,
       100.0 * hw / nullif(g.idle_ns, 0) AS host_wait_pct,
       100.0 * kw / nullif(g.idle_ns, 0) AS kernel_wait_pct,
       100.0 * ot / nullif(g.idle_ns, 0) AS other_pct
FROM s LEFT JOIN g ON g.trace_id = s.trace_id AND g.device = s.device AND g.stream = s.stream
LEFT JOIN traces t ON t.trace_id = s.trace_id
ORDER BY s.trace_id, s.device, s.stream;
