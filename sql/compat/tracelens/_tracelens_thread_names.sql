-- _tracelens_thread_names: helper — how TraceLens labels an op row: the names of its host
-- process and thread (this view) and its argument lists written as Python tuples (the macros).
-- Answers: what the process_name, process_label, thread_name and the four argument columns of
-- tracelens_ops_unique_args and tracelens_unified_perf_summary say, written once for both.
-- depends: events
-- Names come from the metadata events process_name (args.name), process_labels (args.labels)
-- and thread_name (args.name); where one is written twice for a process or thread the later
-- one (in file order) wins. Join process names on (trace_id, pid), thread names on
-- (trace_id, pid, tid).
-- Macros: _tc_tl_arg_dims(list_col, args, key) writes a list of int lists (Input Dims, Input
-- Strides) as TraceLens prints it, ((512,), (141, 512)); a TensorList argument, which the
-- promoted column cannot hold, is read from the event's args under `key` and written as a
-- tuple of tuples. _tc_tl_arg_strs(list_col) writes a list of strings (Input type, Concrete
-- Inputs) as ('c10::BFloat16', ''). A null list stays null.
-- Columns (one row per (trace, pid, tid, metadata name)):
--   trace_id  INTEGER  trace
--   pid, tid  BIGINT   host process and thread of the metadata event
--   name      VARCHAR  process_name, process_labels or thread_name
--   v         VARCHAR  the name or label it gives
CREATE OR REPLACE MACRO _tc_py_ints(l) AS
    '(' || array_to_string(l, ', ') || CASE WHEN len(l) = 1 THEN ',)' ELSE ')' END;
CREATE OR REPLACE MACRO _tc_py_tuple(items) AS
    '(' || array_to_string(items, ', ') || CASE WHEN len(items) = 1 THEN ',)' ELSE ')' END;
CREATE OR REPLACE MACRO _tc_py_dims(j) AS  -- a JSON list of int lists, or of TensorLists of them
    _tc_py_tuple(list_transform(json_extract(j, '$[*]'), lambda x:
        CASE WHEN json_type(x, '$[0]') = 'ARRAY'
             THEN _tc_py_tuple(list_transform(json_extract(x, '$[*]'), lambda y: _tc_py_ints(y::BIGINT[])))
             ELSE _tc_py_ints(x::BIGINT[]) END));
CREATE OR REPLACE MACRO _tc_tl_arg_dims(l, args, key) AS
    _tc_py_dims(coalesce(to_json(l), json_extract(args, '$."' || key || '"')));
CREATE OR REPLACE MACRO _tc_tl_arg_strs(l) AS _tc_py_tuple(list_transform(l, lambda t: '''' || t || ''''));
CREATE OR REPLACE VIEW _tracelens_thread_names AS
SELECT trace_id, pid, tid, name, arg_max(json_extract_string(args, '$.' || key), uid) AS v
FROM (SELECT *, CASE name WHEN 'process_labels' THEN 'labels' ELSE 'name' END AS key FROM events
      WHERE ph = 'M' AND name IN ('process_name', 'process_labels', 'thread_name'))
GROUP BY ALL;
