-- intervals: the length of a union of intervals (busy time), as macros.
-- _tc_covered(ts, e, prev_end): the ns that interval [ts, e) adds to the union of the intervals
--   before it, taken in (ts, e) order, where prev_end is the running maximum of their ends
--   (null for the first): greatest(0, e - greatest(ts, prev_end)). Summed over a set of
--   intervals it is the length of their union: the set's busy time.
--   Use: _tc_covered(ts_ns, end_ns, max(end_ns) OVER (PARTITION BY … ORDER BY ts_ns, end_ns
--        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)), then sum() in an outer query.
CREATE OR REPLACE MACRO _tc_covered(ts, e, prev_end) AS greatest(0, e - greatest(ts, coalesce(prev_end, ts)));
