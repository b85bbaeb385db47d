-- _macros: the building blocks several views share, as DuckDB macros (this file defines no view).
-- _tc_covered(ts, e, prev_end): the ns that interval [ts, e) adds to the union of the intervals
--   before it, taken in (ts, e) order, where prev_end is the running maximum of their ends
--   (null for the first): greatest(0, e - greatest(ts, prev_end)). Summed over a set of
--   intervals it is the length of their union: the set's busy time.
--   Use: _tc_covered(ts_ns, end_ns, max(end_ns) OVER (PARTITION BY … ORDER BY ts_ns, end_ns
--        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)), then sum() in an outer query.
-- _tc_arg(args, key): the JSON value of field `key` of an events.args text, or null; parsed only
--   where the text holds the quoted key (args is most often large, a call stack, and without the
--   field: ops_unique_args parsed 23k args texts of 578 bytes for nothing, 15 of its 57 ms on
--   resnet50). Exact: args is written with every key as it is, quoted.
CREATE OR REPLACE MACRO _tc_covered(ts, e, prev_end) AS greatest(0, e - greatest(ts, coalesce(prev_end, ts)));
CREATE OR REPLACE MACRO _tc_arg(args, key) AS
    CASE WHEN contains(args, '"' || key || '"') THEN json_extract(args, '$."' || key || '"') END;
