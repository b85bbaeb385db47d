-- python_text: argument lists written as Python prints them (TraceLens's columns), as macros.
-- _tc_tl_arg_dims(list_col, json) writes a list of int lists (Input Dims, Input
-- Strides) as TraceLens prints it, ((512,), (141, 512)): from DuckDB's text of the list, its
-- brackets made parentheses and a comma put after a lone item (a list walked item by item
-- through JSON took 2.5x as long); a TensorList argument, which the promoted column cannot
-- hold, is read from `json` (the event's args under the same key) as a tuple of tuples.
-- _tc_tl_arg_strs(list_col) writes a list of strings (Input type, Concrete Inputs) as
-- ('c10::BFloat16', ''). A null item is written None, as Python writes it; a null list stays null.
-- _tc_py_ints, _tc_py_tuple, _tc_py_dims, _tc_py_int_lists are the pieces they are built of.
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
CREATE OR REPLACE MACRO _tc_tl_arg_dims(l, j) AS
    CASE WHEN l IS NULL THEN _tc_py_dims(j)
         WHEN len(l) = 1 THEN left(_tc_py_int_lists(CAST(l AS VARCHAR)), -1) || ',)'
         ELSE _tc_py_int_lists(CAST(l AS VARCHAR)) END;
CREATE OR REPLACE MACRO _tc_tl_arg_strs(l) AS
    CASE WHEN list_position(l, NULL) IS NOT NULL
             THEN _tc_py_tuple(list_transform(l, lambda t: coalesce('''' || t || '''', 'None')))
         WHEN len(l) = 0 THEN '()'
         ELSE '(''' || array_to_string(l, ''', ''') || CASE WHEN len(l) = 1 THEN ''',)' ELSE ''')' END END;
