-- intervals: the union of intervals (busy time), as macros; every view that unions intervals
-- goes through _tc_union_add or, to find where the union's pieces start, _tc_prev_end.
-- _tc_prev_end(ts, e, k1[, k2 … k5]): the running maximum of the ends e of the intervals before
--   this one, taken in (ts, e) order among the rows with the same keys k1 … k5 (null for the
--   first): where the union of those before it ends. An interval with ts > prev_end starts a
--   new piece of the union.
-- _tc_union_add(ts, e, k1[, k2 … k5]): the ns that interval [ts, e) adds to that union:
--   greatest(0, e - greatest(ts, prev_end)) (_tc_covered). Summed over the rows of one key it
--   is the length of their union: the set's busy time. Use: sum() of it in an outer query (a
--   window function cannot sit inside an aggregate).
-- _tc_covered(ts, e, prev_end): the arithmetic of _tc_union_add, for a prev_end found otherwise.
-- The overloads differ only in the number of keys (DuckDB macros take no list of columns to
-- partition by).
CREATE OR REPLACE MACRO _tc_covered(ts, e, prev_end) AS greatest(0, e - greatest(ts, coalesce(prev_end, ts)));
CREATE OR REPLACE MACRO _tc_prev_end
    (ts, e, k1) AS max(e) OVER (PARTITION BY k1 ORDER BY ts, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
    (ts, e, k1, k2) AS max(e) OVER (PARTITION BY k1, k2 ORDER BY ts, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
    (ts, e, k1, k2, k3) AS
        max(e) OVER (PARTITION BY k1, k2, k3 ORDER BY ts, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
    (ts, e, k1, k2, k3, k4) AS
        max(e) OVER (PARTITION BY k1, k2, k3, k4 ORDER BY ts, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
    (ts, e, k1, k2, k3, k4, k5) AS
        max(e) OVER (PARTITION BY k1, k2, k3, k4, k5 ORDER BY ts, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING);
CREATE OR REPLACE MACRO _tc_union_add
    (ts, e, k1) AS _tc_covered(ts, e, _tc_prev_end(ts, e, k1)),
    (ts, e, k1, k2) AS _tc_covered(ts, e, _tc_prev_end(ts, e, k1, k2)),
    (ts, e, k1, k2, k3) AS _tc_covered(ts, e, _tc_prev_end(ts, e, k1, k2, k3)),
    (ts, e, k1, k2, k3, k4) AS _tc_covered(ts, e, _tc_prev_end(ts, e, k1, k2, k3, k4)),
    (ts, e, k1, k2, k3, k4, k5) AS _tc_covered(ts, e, _tc_prev_end(ts, e, k1, k2, k3, k4, k5));
