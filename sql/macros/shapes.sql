-- shapes: what an op's argument lists say (op_perf's FLOPs and bytes models), as macros.
-- _tc_dtype_bytes(t): bytes of one element of tensor type t (an `Input type` item), null when unknown.
-- _tc_precision(t): the precision (fp32, fp64, fp16, bf16, fp8, int8) of tensor type t, null otherwise.
-- _tc_numel(d): the number of elements of a tensor of dims d (1 for a scalar's empty list).
-- _tc_ints(s): the integers of a text such as '[1, 2]' or '(1, 2)' (an item that is none: null).
-- _tc_at(l, i): item i of list l (1-based), its last item when l is shorter.
-- _tc_true(s): whether a `Concrete Inputs` text says true ('True', 'true' or '1').
CREATE OR REPLACE MACRO _tc_dtype_bytes(t) AS CASE
    WHEN t IN ('float', 'int', 'unsigned int', 'c10::complex<c10::Half>') THEN 4
    WHEN t IN ('double', 'long int', 'long', 'c10::complex<float>', 'unsigned long') THEN 8
    WHEN t IN ('c10::Half', 'c10::BFloat16', 'short int', 'short', 'unsigned short') THEN 2
    WHEN t IN ('signed char', 'unsigned char', 'bool') OR t LIKE 'c10::Float8%' THEN 1
    WHEN t = 'c10::complex<double>' THEN 16
    END;
CREATE OR REPLACE MACRO _tc_precision(t) AS CASE
    WHEN t = 'float' THEN 'fp32' WHEN t = 'double' THEN 'fp64' WHEN t = 'c10::Half' THEN 'fp16'
    WHEN t = 'c10::BFloat16' THEN 'bf16' WHEN t LIKE 'c10::Float8%' THEN 'fp8'
    WHEN t IN ('signed char', 'unsigned char') THEN 'int8' END;
CREATE OR REPLACE MACRO _tc_numel(d) AS list_reduce(list_prepend(1::BIGINT, d), lambda a, b: a * b);
CREATE OR REPLACE MACRO _tc_ints(s) AS
    list_transform(string_split(trim(s, '[]() '), ','), lambda x: TRY_CAST(trim(x) AS BIGINT));
CREATE OR REPLACE MACRO _tc_at(l, i) AS l[least(i, len(l))];
CREATE OR REPLACE MACRO _tc_true(s) AS (lower(s) IN ('true', '1'));
