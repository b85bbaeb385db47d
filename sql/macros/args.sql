-- args: fields of an events.args text, as macros.
-- _tc_arg(args, key): the JSON value of field `key` of an events.args text, or null; parsed only
--   where the text holds the quoted key (args is most often large, a call stack, and without the
--   field: ops_unique_args parsed 23k args texts of 578 bytes for nothing, 15 of its 57 ms on
--   resnet50). Exact: args is written with every key as it is, quoted.
CREATE OR REPLACE MACRO _tc_arg(args, key) AS
    CASE WHEN contains(args, '"' || key || '"') THEN json_extract(args, '$."' || key || '"') END;
