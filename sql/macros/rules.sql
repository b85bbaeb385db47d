-- rules: what the rules of sql/findings/ share, as macros.
-- _tc_threshold(rule, default): the threshold of rule `rule`: the DuckDB variable
--   tc_threshold_<rule> when it is set (Face.findings sets it from its `thresholds` dict, and
--   `SET VARIABLE tc_threshold_host_idle = 5` does in a session of SQL), else `default`.
-- _tc_severity(pct): high when the time at stake is 10 % or more of the trace's GPU span,
--   medium from 2 %, low below: a finding's rank among the others is its time at stake; the
--   severity is that time in three words.
CREATE OR REPLACE MACRO _tc_threshold(rule, dflt) AS coalesce(TRY_CAST(getvariable('tc_threshold_' || rule) AS DOUBLE), dflt);
CREATE OR REPLACE MACRO _tc_severity(pct) AS
    CASE WHEN pct >= 10 THEN 'high' WHEN pct >= 2 THEN 'medium' ELSE 'low' END;
