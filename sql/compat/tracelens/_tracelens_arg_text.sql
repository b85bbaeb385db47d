-- _tracelens_arg_text: helper — the argument lists of TraceLens's op rows written as Python tuples.
-- Answers: what the four argument columns of tracelens_ops_unique_args and
-- tracelens_unified_perf_summary say, written once for both.
-- depends: events, _tracelens_launcher_time, _tracelens_unified_ops
-- uses: args, python_text
-- For the events of both views' instances (launchers and unified ops). Each distinct tuple of
-- the four lists is written once and joined back (resnet50's 7.6k launchers have 278: the
-- text was 17 of the 52 ms of tracelens_ops_unique_args, and the same again in the other).
-- Macros: _tc_tl_arg_dims and _tc_tl_arg_strs (sql/macros/python_text.sql).
-- Columns (one row per event of an instance):
--   trace_id  INTEGER  trace
--   uid       BIGINT   the op's event
--   dims, types, strides, concrete VARCHAR  Input Dims, Input type, Input Strides, Concrete Inputs
--                                           as TraceLens prints them (null where the trace has none)
CREATE OR REPLACE VIEW _tracelens_arg_text AS
WITH ev AS (  -- the lists; the JSON under Input Dims / Input Strides only where the list column is null
    SELECT e.trace_id, e.uid, e.input_dims AS d, e.input_types AS ty, e.input_strides AS st, e.concrete_inputs AS ci,
           CASE WHEN e.input_dims IS NULL THEN _tc_arg(e.args, 'Input Dims') END AS dj,
           CASE WHEN e.input_strides IS NULL THEN _tc_arg(e.args, 'Input Strides') END AS sj
    FROM events e
    SEMI JOIN (SELECT trace_id, uid FROM _tracelens_launcher_time
               UNION ALL SELECT trace_id, uid FROM _tracelens_unified_ops) x
      ON x.trace_id = e.trace_id AND x.uid = e.uid
),
txt AS MATERIALIZED (
    SELECT d, ty, st, ci, dj, sj, _tc_tl_arg_dims(d, dj) AS dims, _tc_tl_arg_strs(ty) AS types,
           _tc_tl_arg_dims(st, sj) AS strides, _tc_tl_arg_strs(ci) AS concrete
    FROM (SELECT DISTINCT d, ty, st, ci, dj, sj FROM ev)
)
SELECT e.trace_id, e.uid, t.dims, t.types, t.strides, t.concrete
FROM ev e
JOIN txt t ON t.d IS NOT DISTINCT FROM e.d AND t.ty IS NOT DISTINCT FROM e.ty AND t.st IS NOT DISTINCT FROM e.st
          AND t.ci IS NOT DISTINCT FROM e.ci AND t.dj IS NOT DISTINCT FROM e.dj AND t.sj IS NOT DISTINCT FROM e.sj;
