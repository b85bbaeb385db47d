"""The fixed Arrow schema of raw events, and which args are promoted to typed columns.

Losslessness rule: an arg is moved into its typed column only when its JSON value has
that column's type (an int for int64, a string for string, a list of strings for
list<string>, …). Anything else — a stream written as "0x0", a grid written as text, a
u64 beyond int64 — stays in `args` (JSON text) and the column is null. So
`promoted columns ∪ args` always reconstructs the original args object exactly.
"""

import pyarrow as pa

# (arg key in the trace, column name, kind). kind: "int" (int64), "str", "float"
# (decimal128(38, 18): exact for the decimal text the profiler wrote), "strlist",
# "intlist", "dims" (list<list<int64>>: a shape per input; TensorList inputs nest one
# level deeper and so stay in `args`).
PROMOTED = [
    ("External id", "external_id", "int"),
    ("correlation", "correlation", "int"),
    ("Record function id", "record_function_id", "int"),
    ("Sequence number", "sequence_number", "int"),
    ("Fwd thread id", "fwd_thread_id", "int"),
    ("Ev Idx", "ev_idx", "int"),
    ("Python id", "python_id", "int"),
    ("Python parent id", "python_parent_id", "int"),
    ("Python thread", "python_thread", "int"),
    ("device", "device", "int"),
    ("stream", "stream", "int"),
    ("context", "context", "int"),
    ("queued", "queued", "int"),
    ("cbid", "cbid", "int"),
    ("Input Dims", "input_dims", "dims"),
    ("Input type", "input_types", "strlist"),
    ("Input Strides", "input_strides", "dims"),
    ("Concrete Inputs", "concrete_inputs", "strlist"),
    ("grid", "grid", "intlist"),
    ("block", "block", "intlist"),
    ("registers per thread", "registers_per_thread", "int"),
    ("shared memory", "shared_memory_bytes", "int"),
    ("blocks per SM", "blocks_per_sm", "float"),
    ("warps per SM", "warps_per_sm", "float"),
    ("est. achieved occupancy %", "est_achieved_occupancy_pct", "int"),
    ("flops", "flops", "int"),
    ("kernel_flop", "kernel_flop", "int"),
    ("kernel_num_gb", "kernel_num_gb", "float"),
    ("Collective name", "collective_name", "str"),
    ("In msg nelems", "in_msg_nelems", "int"),
    ("Out msg nelems", "out_msg_nelems", "int"),
    ("Group size", "group_size", "int"),
    ("dtype", "dtype", "str"),
    ("Process Group Name", "pg_name", "str"),
    ("Process Group Description", "pg_desc", "str"),
    ("Process Group Ranks", "pg_ranks", "str"),
    ("In split size", "in_split_size", "str"),
    ("Out split size", "out_split_size", "str"),
    ("Global rank start", "global_rank_start", "int"),
    ("Global rank stride", "global_rank_stride", "int"),
    ("Bytes", "bytes", "int"),
    ("bytes", "bytes_moved", "int"),
    ("memory bandwidth (GB/s)", "memory_bandwidth_gb_per_s", "float"),
    ("Total Allocated", "total_allocated_bytes", "int"),
    ("Total Reserved", "total_reserved_bytes", "int"),
    ("Addr", "addr", "int"),
    ("Device Type", "device_type", "int"),
    ("Device Id", "device_id", "int"),
]

ARROW_KIND = {
    "int": pa.int64(),
    "str": pa.string(),
    "float": pa.decimal128(38, 18),
    "strlist": pa.list_(pa.string()),
    "intlist": pa.list_(pa.int64()),
    "dims": pa.list_(pa.list_(pa.int64())),
}

# Raw columns, in order. `args` holds the JSON text of the args that were not promoted
# (null when none are left); `extra` holds the JSON text of event keys outside the
# Chrome-trace core and of core fields whose value could not take the column's type.
CORE = [
    ("uid", pa.int64()),
    ("ph", pa.string()),
    ("cat_raw", pa.string()),
    ("name", pa.string()),
    ("pid", pa.int64()),
    ("tid", pa.int64()),
    ("pid_str", pa.string()),
    ("tid_str", pa.string()),
    ("ts_ns", pa.int64()),
    ("dur_ns", pa.int64()),
    ("flow_id", pa.int64()),
    ("flow_id_str", pa.string()),
    ("bp", pa.string()),
    ("scope", pa.string()),
]
TAIL = [("args", pa.string()), ("extra", pa.string())]

RAW_SCHEMA = pa.schema(CORE + [(col, ARROW_KIND[kind]) for _, col, kind in PROMOTED] + TAIL)
