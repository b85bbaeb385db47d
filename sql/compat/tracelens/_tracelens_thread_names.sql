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
-- Strides) as TraceLens prints it, ((512,), (141, 512)): from DuckDB's text of the list, its
-- brackets made parentheses and a comma put after a lone item (a list walked item by item
-- through JSON took 2.5x as long); a TensorList argument, which the promoted column cannot
-- hold, is read from the event's args under `key` and written as a tuple of tuples.
-- _tc_tl_arg_strs(list_col) writes a list of strings (Input type, Concrete Inputs) as
-- ('c10::BFloat16', ''). A null item is written None, as Python writes it; a null list stays null.
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
CREATE OR REPLACE MACRO _tc_py_int_lists(s) AS  -- DuckDB's text of an int list list, in Python's tuple form
    -- (a lone item inside: any but the outer tuple, which alone has no character before it)
    regexp_replace(replace(replace(replace(s, 'NULL', 'None'), '[', '('), ']', ')'),
                   '(.)\((-?\d+|None)\)', '\1(\2,)', 'g');
CREATE OR REPLACE MACRO _tc_tl_arg_dims(l, args, key) AS
    CASE WHEN l IS NULL THEN _tc_py_dims(json_extract(args, '$."' || key || '"'))
         WHEN len(l) = 1 THEN left(_tc_py_int_lists(CAST(l AS VARCHAR)), -1) || ',)'
         ELSE _tc_py_int_lists(CAST(l AS VARCHAR)) END;
CREATE OR REPLACE MACRO _tc_tl_arg_strs(l) AS
    CASE WHEN list_position(l, NULL) IS NOT NULL
             THEN _tc_py_tuple(list_transform(l, lambda t: coalesce('''' || t || '''', 'None')))
         WHEN len(l) = 0 THEN '()'
         ELSE '(''' || array_to_string(l, ''', ''') || CASE WHEN len(l) = 1 THEN ''',)' ELSE ''')' END END;
CREATE OR REPLACE VIEW _tracelens_thread_names AS
SELECT trace_id, pid, tid, name, arg_max(json_extract_string(args, '$.' || key), uid) AS v
FROM (SELECT *, CASE name WHEN 'process_labels' THEN 'labels' ELSE 'name' END AS key FROM events
      WHERE ph = 'M' AND name IN ('process_name', 'process_labels', 'thread_name'))
GROUP BY ALL;
