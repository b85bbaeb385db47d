-- _macros: the building blocks several views share, as DuckDB macros (this file defines no view).
-- _tc_covered(ts, e, prev_end): the ns that interval [ts, e) adds to the union of the intervals
--   before it, taken in (ts, e) order, where prev_end is the running maximum of their ends
--   (null for the first): greatest(0, e - greatest(ts, prev_end)). Summed over a set of
--   intervals it is the length of their union: the set's busy time.
--   Use: _tc_covered(ts_ns, end_ns, max(end_ns) OVER (PARTITION BY … ORDER BY ts_ns, end_ns
--        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)), then sum() in an outer query.
-- _tc_pos(trace_id, p): a pre-order position p (slices.pre, subtree_end; 0 <= p < 2^40) of one
--   trace as one number, ordered by (trace_id, p). A join on "p inside [pre, subtree_end]"
--   written with it alone, without `trace_id =`, is planned by DuckDB as a sort-based
--   inequality join (IEJoin); with `a.trace_id = b.trace_id AND …` it becomes a hash join on
--   trace_id that tests the inequalities on every pair of rows of a trace (quadratic). DuckDB
--   plans no IEJoin in a query that holds a materialised CTE (a CTE read twice is one unless
--   declared NOT MATERIALIZED).
CREATE OR REPLACE MACRO _tc_covered(ts, e, prev_end) AS greatest(0, e - greatest(ts, coalesce(prev_end, ts)));
CREATE OR REPLACE MACRO _tc_pos(trace_id, p) AS trace_id::BIGINT * 1099511627776 + p;
