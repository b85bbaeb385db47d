-- collectives: every NCCL/RCCL collective kernel, what it moved and how fast.
-- Answers: for each communication kernel on each rank — which collective, how many bytes,
-- of what dtype, over which process group — and its algorithm and bus bandwidth.
-- depends: kernels, slices, traces, events
-- uses: args
-- Kernels are those with kernels.kernel_class = 'communication'. Where each fact comes from,
-- first found wins (collective_source names the first):
--   'kernel args'        the kernel's own args (Collective name, In/Out msg nelems, dtype,
--                        Group size, Process Group Name/Description/Ranks; torch >= 2.1)
--   'record_param_comms' the same args on the enclosing record_param_comms cpu_op (op_uid)
--   'annotation'         the `nccl:<collective>` annotation around the launch (older torch):
--                        name after the colon, size from its first input's dims and type
--   'kernel name'        ncclKernel_AllReduce_… / ncclDevKernel_SendRecv_… (no size known)
-- Message size follows nccl-tests: msg_bytes = max(in, out) elements × element size, i.e.
-- the whole buffer (allgather: the gathered output; reducescatter: the full input). With the
-- annotation only the input is known; for allgather it is one rank's part, so × group size.
-- group_size: from the args, else the length of pg_ranks, else the trace's world size
-- (group_size_source says which).
-- algbw = msg_bytes / dur; busbw = algbw × bus factor (nccl-tests): allreduce 2(n-1)/n;
-- allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce, send, recv, sendrecv 1;
-- n = group_size. 1 byte/ns = 1 GB/s (10^9 bytes per second).
-- seq numbers a rank's kernels of one collective on one process group in time order, so that
-- (pg_key, collective, seq) names the same collective call on every rank of the group
-- (collectives on a communicator are issued in the same order by every member).
-- Recent PyTorch also records the process group's own sequence number of the call (`Seq`, or
-- `seq`, in the args of the kernel or of record_param_comms): where every call of a process
-- group (pg_key) carries one, calls are paired across ranks by it (paired_by = 'seq'), which
-- stays right when a rank skipped or reordered a call; otherwise by call order ('order').
-- Columns:
--   trace_id, rank        INTEGER  trace and its rank (null when unknown)
--   uid                   BIGINT   the kernel's event uid
--   kernel_name           VARCHAR  kernel name
--   device, stream        BIGINT   where it ran
--   ts_ns, dur_ns, end_ns BIGINT   ns, kernel start, duration, end
--   collective            VARCHAR  allreduce, allgather, reducescatter, alltoall, broadcast,
--                                  reduce, send, recv, sendrecv, barrier, … (lower case, no '_')
--   collective_source     VARCHAR  see above
--   dtype                 VARCHAR  element type as written (Float, BFloat16, float, …)
--   elem_bytes            INTEGER  bytes per element (null when the dtype is not known)
--   in_nelems, out_nelems BIGINT   elements in / out on this rank
--   msg_bytes             BIGINT   bytes, nccl-tests message size (see above)
--   group_size            INTEGER  ranks in the process group
--   group_size_source     VARCHAR  'args', 'pg_ranks' or 'world_size'
--   pg_name, pg_desc      VARCHAR  process group name and description (null on older torch)
--   pg_ranks              VARCHAR  process group ranks as written, e.g. "[0, 1, 2, 3]"
--   pg_key                VARCHAR  pg_name, or 'default' when the trace does not say
--   bus_factor            DOUBLE   nccl-tests bus bandwidth factor for this collective and n
--   algbw_gb_per_s        DOUBLE   GB/s, msg_bytes / dur_ns
--   busbw_gb_per_s        DOUBLE   GB/s, algbw × bus_factor
--   seq                   BIGINT   0-based call number of (trace, pg_key, collective)
--   trace_seq             BIGINT   the process group's sequence number of the call as the
--                                  trace records it (args Seq or seq); null when it does not
--   paired_by             VARCHAR  'seq' when every call of this pg_key has a trace_seq, else
--                                  'order': how collective_skew pairs the call across ranks
--   match_seq             BIGINT   the number that pairs the call across ranks: trace_seq
--                                  when paired_by = 'seq', else seq
CREATE OR REPLACE VIEW collectives AS
WITH k AS (
    SELECT trace_id, rank, uid, name, device, stream, ts_ns, dur_ns, end_ns, launch_uid, op_uid
    FROM kernels WHERE kernel_class = 'communication'
),
ke AS (  -- the kernel's own collective args
    SELECT e.trace_id, e.uid, e.collective_name, e.in_msg_nelems, e.out_msg_nelems, e.group_size,
           e.dtype, e.pg_name, e.pg_desc, e.pg_ranks,
           TRY_CAST(coalesce(_tc_arg(e.args, 'Seq'), _tc_arg(e.args, 'seq')) AS BIGINT) AS trace_seq
    FROM events e SEMI JOIN k ON e.trace_id = k.trace_id AND e.uid = k.uid
),
op AS (  -- the enclosing record_param_comms (or any op carrying the args)
    SELECT e.trace_id, e.uid, e.collective_name, e.in_msg_nelems, e.out_msg_nelems, e.group_size,
           e.dtype, e.pg_name, e.pg_desc, e.pg_ranks,
           TRY_CAST(coalesce(_tc_arg(e.args, 'Seq'), _tc_arg(e.args, 'seq')) AS BIGINT) AS trace_seq
    FROM events e SEMI JOIN k ON e.trace_id = k.trace_id AND e.uid = k.op_uid
    WHERE e.collective_name IS NOT NULL
),
anc AS (  -- the launch's parent and grandparent: where `nccl:<collective>` sits
    SELECT k.trace_id, k.uid AS kuid, p1.uid AS a1, p1.parent_uid AS a2
    FROM k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid
    LEFT JOIN slices p1 ON p1.trace_id = k.trace_id AND p1.uid = l.parent_uid
),
ann_ev AS (
    SELECT e.trace_id, e.uid, e.name, e.input_dims, e.input_types
    FROM events e
    WHERE e.name LIKE 'nccl:%' OR e.name LIKE 'rccl:%'
),
ann AS (
    SELECT a.trace_id, a.kuid,
           coalesce(e1.name, e2.name) AS name,
           coalesce(e1.input_dims, e2.input_dims) AS dims,
           coalesce(e1.input_types, e2.input_types) AS types
    FROM anc a
    LEFT JOIN ann_ev e1 ON e1.trace_id = a.trace_id AND e1.uid = a.a1
    LEFT JOIN ann_ev e2 ON e2.trace_id = a.trace_id AND e2.uid = a.a2
),
j AS (
    SELECT k.*, t.world_size,
           ke.collective_name AS k_name, op.collective_name AS o_name,
           regexp_replace(ann.name, '^[a-z]ccl:', '') AS a_name,
           regexp_extract(k.name, '^[nr]ccl(?:Dev)?Kernel_([A-Za-z]+)_', 1) AS n_name,
           coalesce(ke.in_msg_nelems, op.in_msg_nelems) AS args_in,
           coalesce(ke.out_msg_nelems, op.out_msg_nelems) AS args_out,
           coalesce(ke.dtype, op.dtype) AS args_dtype,
           coalesce(ke.group_size, op.group_size) AS args_group,
           coalesce(ke.pg_name, op.pg_name) AS pg_name,
           coalesce(ke.pg_desc, op.pg_desc) AS pg_desc,
           coalesce(ke.pg_ranks, op.pg_ranks) AS pg_ranks,
           coalesce(ke.trace_seq, op.trace_seq) AS trace_seq,
           CASE WHEN ann.dims IS NULL OR len(ann.dims) = 0 THEN NULL
                WHEN len(ann.dims[1]) = 0 THEN 1
                ELSE list_product(ann.dims[1])::BIGINT END AS ann_nelems,
           ann.types[1] AS ann_dtype
    FROM k
    LEFT JOIN ke ON ke.trace_id = k.trace_id AND ke.uid = k.uid
    LEFT JOIN op ON op.trace_id = k.trace_id AND op.uid = k.op_uid
    LEFT JOIN ann ON ann.trace_id = k.trace_id AND ann.kuid = k.uid
    LEFT JOIN traces t ON t.trace_id = k.trace_id
),
named AS (
    SELECT *,
           CASE WHEN k_name IS NOT NULL THEN 'kernel args'
                WHEN o_name IS NOT NULL THEN 'record_param_comms'
                WHEN a_name IS NOT NULL AND a_name <> '' THEN 'annotation'
                WHEN n_name IS NOT NULL AND n_name <> '' AND lower(n_name) <> 'generic' THEN 'kernel name'
           END AS collective_source,
           lower(replace(coalesce(k_name, o_name, nullif(a_name, ''),
                                  CASE WHEN lower(n_name) <> 'generic' THEN nullif(n_name, '') END), '_', '')) AS raw
    FROM j
),
norm AS (
    SELECT *,
           CASE WHEN raw IS NULL THEN NULL
                WHEN raw LIKE '%allreduce%' THEN 'allreduce'
                WHEN raw LIKE '%allgather%' THEN 'allgather'
                WHEN raw LIKE '%reducescatter%' THEN 'reducescatter'
                WHEN raw LIKE '%alltoall%' THEN 'alltoall'
                WHEN raw LIKE '%broadcast%' THEN 'broadcast'
                WHEN raw LIKE '%sendrecv%' THEN 'sendrecv'
                WHEN raw LIKE '%barrier%' THEN 'barrier'
                WHEN raw LIKE '%reduce%' THEN 'reduce'
                WHEN raw LIKE '%send%' THEN 'send'
                WHEN raw LIKE '%recv%' THEN 'recv'
                ELSE raw END AS collective,
           CASE WHEN k_name IS NOT NULL OR o_name IS NOT NULL THEN args_dtype ELSE ann_dtype END AS dtype_,
           CASE WHEN k_name IS NOT NULL OR o_name IS NOT NULL THEN args_in ELSE ann_nelems END AS in_nelems,
           CASE WHEN k_name IS NOT NULL OR o_name IS NOT NULL THEN args_out END AS out_nelems_args,
           CASE WHEN args_group IS NOT NULL AND args_group > 0 THEN args_group::INTEGER
                WHEN pg_ranks IS NOT NULL AND pg_ranks LIKE '[%]' AND pg_ranks <> '[]'
                     THEN len(string_split(trim(pg_ranks, '[] '), ','))::INTEGER
                ELSE world_size END AS group_size,
           CASE WHEN args_group IS NOT NULL AND args_group > 0 THEN 'args'
                WHEN pg_ranks IS NOT NULL AND pg_ranks LIKE '[%]' AND pg_ranks <> '[]' THEN 'pg_ranks'
                WHEN world_size IS NOT NULL THEN 'world_size' END AS group_size_source
    FROM named
),
sized AS (
    SELECT *,
           CASE regexp_replace(lower(dtype_), '^(c10::|torch\.)', '')
                WHEN 'float' THEN 4 WHEN 'float32' THEN 4 WHEN 'double' THEN 8 WHEN 'float64' THEN 8
                WHEN 'half' THEN 2 WHEN 'float16' THEN 2 WHEN 'bfloat16' THEN 2
                WHEN 'long' THEN 8 WHEN 'int64' THEN 8 WHEN 'long int' THEN 8 WHEN 'long long' THEN 8
                WHEN 'int' THEN 4 WHEN 'int32' THEN 4 WHEN 'short' THEN 2 WHEN 'int16' THEN 2
                WHEN 'byte' THEN 1 WHEN 'char' THEN 1 WHEN 'int8' THEN 1 WHEN 'uint8' THEN 1
                WHEN 'unsigned char' THEN 1 WHEN 'signed char' THEN 1 WHEN 'bool' THEN 1
                WHEN 'float8_e4m3fn' THEN 1 WHEN 'float8_e5m2' THEN 1 WHEN 'float8_e4m3fnuz' THEN 1
                WHEN 'float8_e5m2fnuz' THEN 1 WHEN 'complexfloat' THEN 8 WHEN 'complexdouble' THEN 16
           END AS elem_bytes,
           CASE WHEN out_nelems_args IS NOT NULL THEN out_nelems_args
                WHEN collective = 'allgather' AND in_nelems IS NOT NULL THEN in_nelems * group_size
                ELSE in_nelems END AS out_nelems
    FROM norm
),
bw AS (
    SELECT *,
           (greatest(coalesce(in_nelems, 0), coalesce(out_nelems, 0)) * elem_bytes)::BIGINT AS msg_bytes_,
           CASE WHEN group_size IS NULL OR group_size < 1 THEN NULL
                WHEN collective = 'allreduce' THEN 2.0 * (group_size - 1) / group_size
                WHEN collective IN ('allgather', 'reducescatter', 'alltoall') THEN (group_size - 1) * 1.0 / group_size
                WHEN collective IN ('broadcast', 'reduce', 'send', 'recv', 'sendrecv') THEN 1.0
           END AS bus_factor
    FROM sized
),
numbered AS (
    SELECT *, coalesce(pg_name, 'default') AS pg_key,
           row_number() OVER (PARTITION BY trace_id, coalesce(pg_name, 'default'), collective
                              ORDER BY ts_ns, uid) - 1 AS seq,
           CASE WHEN bool_and(trace_seq IS NOT NULL) OVER (PARTITION BY coalesce(pg_name, 'default'))
                THEN 'seq' ELSE 'order' END AS paired_by
    FROM bw
)
SELECT trace_id, rank, uid, name AS kernel_name, device, stream, ts_ns, dur_ns, end_ns,
       collective, collective_source, dtype_ AS dtype, elem_bytes::INTEGER AS elem_bytes,
       in_nelems::BIGINT AS in_nelems, out_nelems::BIGINT AS out_nelems,
       nullif(msg_bytes_, 0) AS msg_bytes, group_size, group_size_source,
       pg_name, pg_desc, pg_ranks, pg_key, bus_factor,
       nullif(msg_bytes_, 0) / nullif(dur_ns, 0) AS algbw_gb_per_s,
       nullif(msg_bytes_, 0) / nullif(dur_ns, 0) * bus_factor AS busbw_gb_per_s,
       seq, trace_seq, paired_by,
       CASE WHEN paired_by = 'seq' THEN trace_seq ELSE seq END AS match_seq
FROM numbered
ORDER BY trace_id, ts_ns, uid;
