-- idle_gaps: every gap between consecutive device events on a stream, with its cause.
-- Answers: where exactly did a stream sit idle, for how long, and why — was it waiting for
-- the host to launch work, or a short kernel-to-kernel gap, or something else?
-- depends: _kernels_in_span, traces
-- An outlying device event (far from the rest of its trace: _kernels_in_span) is left out.
-- Rules (HTA's idle-time causes): the gap before an event is its start minus the latest end
-- of the earlier events on the same (trace_id, device, stream). Its cause is
--   host_wait    the launch call of the event started after the previous work had ended
--                (the device had nothing queued);
--   kernel_wait  otherwise, when the gap is shorter than 30 µs;
--   other        otherwise (including events without a launch call in the trace).
-- Columns (one row per gap > 0):
--   trace_id       INTEGER  trace
--   rank           INTEGER  rank (null when unknown)
--   device         BIGINT   device id
--   stream         BIGINT   stream id
--   uid            BIGINT   the device event after the gap
--   name           VARCHAR  its name
--   launch_uid     BIGINT   its launch call (null when not linked)
--   gap_start_ns   BIGINT   ns, end of the previous work on the stream
--   gap_end_ns     BIGINT   ns, start of this event
--   gap_ns         BIGINT   ns, gap_end_ns - gap_start_ns
--   cause          VARCHAR  host_wait, kernel_wait or other
CREATE OR REPLACE VIEW idle_gaps AS
WITH o AS (  -- _tc_prev_end (sql/macros/intervals.sql) written out with uid after (ts, end): of two
            -- events that start and end together, the gap before them goes to the lower uid
    SELECT trace_id, device, stream, uid, name, launch_uid, launch_ts_ns, ts_ns,
           max(end_ns) OVER (PARTITION BY trace_id, device, stream ORDER BY ts_ns, end_ns, uid
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM _kernels_in_span
)
SELECT o.trace_id, t.rank, device, stream, uid, name, launch_uid,
       prev_end AS gap_start_ns, ts_ns AS gap_end_ns, (ts_ns - prev_end)::BIGINT AS gap_ns,
       CASE WHEN launch_ts_ns IS NOT NULL AND launch_ts_ns > prev_end THEN 'host_wait'
            WHEN ts_ns - prev_end < 30000 THEN 'kernel_wait'
            ELSE 'other' END AS cause
FROM o LEFT JOIN traces t ON t.trace_id = o.trace_id
WHERE prev_end IS NOT NULL AND ts_ns > prev_end
ORDER BY o.trace_id, device, stream, gap_end_ns;
