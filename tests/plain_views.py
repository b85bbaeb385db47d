"""The formulations some views had before they were rewritten for speed: plain, slower,
and kept here as the reference the rewritten views are checked against
(test_view_rewrites.py). A view rewritten through and through is kept whole, the query alone,
without its header comment; one whose rewrite changed a few steps is today's query with those
steps (common table expressions) as they were, so that the steps it shares with its plain
formulation are written once. `stacks` gave the text of each path and now gives the tree:
AS_PLAIN turns the tree back into those rows."""

import re

import pyarrow as pa

from tracecols.engine import sqlfiles

PLAIN = {
    "memory_timeline": r"""
WITH RECURSIVE m AS (
    SELECT trace_id, uid, coalesce(pid, -1) AS pid, coalesce(tid, -1) AS tid, ts_ns, bytes,
           total_allocated_bytes, total_reserved_bytes, addr, device_type, device_id
    FROM events
    WHERE ph IN ('i', 'I') AND name = '[memory]' AND ts_ns IS NOT NULL
),
th AS (  -- slices of the threads that allocate; of those starting together, the deepest (last in pre-order)
    SELECT s.trace_id, s.pid, s.tid, s.ts_ns, arg_max(s.uid, s.pre) AS uid
    FROM slices s SEMI JOIN (SELECT DISTINCT trace_id, pid, tid FROM m) q
      ON q.trace_id = s.trace_id AND q.pid = s.pid AND q.tid = s.tid
    GROUP BY s.trace_id, s.pid, s.tid, s.ts_ns
),
climb(trace_id, uid, t, cur) AS (
    SELECT m.trace_id, m.uid, m.ts_ns, th.uid
    FROM m ASOF JOIN th ON th.trace_id = m.trace_id AND th.pid = m.pid AND th.tid = m.tid AND th.ts_ns <= m.ts_ns
    UNION ALL
    SELECT c.trace_id, c.uid, c.t, s.parent_uid
    FROM climb c JOIN slices s ON s.trace_id = c.trace_id AND s.uid = c.cur
    WHERE NOT (c.t < s.end_ns OR s.end_ns = s.ts_ns AND s.ts_ns = c.t) AND s.parent_uid IS NOT NULL
),
found AS (  -- the slice of the walk that holds the event's time
    SELECT c.trace_id, c.uid, s.op_uid
    FROM climb c JOIN slices s ON s.trace_id = c.trace_id AND s.uid = c.cur
    WHERE c.t < s.end_ns OR s.end_ns = s.ts_ns AND s.ts_ns = c.t
)
SELECT m.trace_id, t.rank, m.device_type,
       CASE m.device_type WHEN 0 THEN 'cpu' WHEN 1 THEN 'cuda' WHEN 6 THEN 'hip' WHEN 9 THEN 'xla'
            WHEN 12 THEN 'xpu' WHEN 13 THEN 'mps' WHEN 19 THEN 'mtia'
            ELSE 'type ' || m.device_type END AS device_kind,
       m.device_id, m.uid, m.pid, m.tid, m.ts_ns, m.bytes,
       m.total_allocated_bytes AS allocated_bytes, m.total_reserved_bytes AS reserved_bytes,
       sum(m.bytes) OVER (PARTITION BY m.trace_id, m.device_type, m.device_id ORDER BY m.ts_ns, m.uid
                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS net_bytes,
       m.addr, o.uid AS op_uid, o.name AS op_name
FROM m
LEFT JOIN found f ON f.trace_id = m.trace_id AND f.uid = m.uid
LEFT JOIN slices o ON o.trace_id = f.trace_id AND o.uid = f.op_uid
LEFT JOIN traces t ON t.trace_id = m.trace_id
ORDER BY m.trace_id, m.device_type, m.device_id, m.ts_ns, m.uid
""",
    "_op_time": r"""
WITH RECURSIVE ev AS (
    SELECT s.trace_id, s.uid, s.name, s.cat, s.pre, s.subtree_end, s.dur_ns, s.self_ns,
           -- a TensorList argument is one level deeper than events.input_dims holds: read it from args
           coalesce(CAST(e.input_dims AS VARCHAR),
                    regexp_replace(json_extract(e.args, '$."Input Dims"')::VARCHAR, ',', ', ', 'g')) AS input_shapes,
           coalesce(to_json(e.input_types)::VARCHAR, json_extract(e.args, '$."Input type"')::VARCHAR) AS input_types
    -- grafted graph nodes other than cpu_ops have no events row (docs/graphs.md)
    FROM slices s LEFT JOIN events e ON e.trace_id = s.trace_id AND e.uid = s.uid
    WHERE s.cat IN ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
),
ann AS (
    SELECT trace_id, uid, pre, subtree_end FROM ev WHERE cat = 'user_annotation'
),
kl AS (  -- device events with a launch call in the tree, placed at the deeper of the launch call
         -- and their op: a graph-replayed kernel's op is grafted beneath its graph launch
    SELECT k.trace_id, k.uid AS kuid, k.dur_ns, k.op_uid, k.op_path, greatest(l.pre, o.pre) AS lpre
    FROM kernels k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid
    LEFT JOIN slices o ON o.trace_id = k.trace_id AND o.uid = k.op_uid
),
in_ann AS (  -- each device event under each annotation around its launch call
    SELECT kl.trace_id, a.uid AS ouid, kl.dur_ns, kl.op_uid, a.pre,
           max(a.pre) OVER (PARTITION BY kl.trace_id, kl.kuid) AS inner_pre
    FROM kl JOIN ann a ON a.trace_id = kl.trace_id AND a.pre < kl.lpre AND kl.lpre <= a.subtree_end
),
per AS (
    SELECT trace_id, op_uid AS ouid, sum(dur_ns) AS self_dev, 0 AS dev FROM kl WHERE op_uid IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT trace_id, ouid, 0, sum(dur_ns) FROM (SELECT trace_id, unnest(op_path) AS ouid, dur_ns FROM kl) GROUP BY ALL
    UNION ALL
    SELECT trace_id, ouid, sum(dur_ns) FILTER (WHERE op_uid IS NULL AND pre = inner_pre), sum(dur_ns)
    FROM in_ann GROUP BY ALL
),
dev AS (
    SELECT trace_id, ouid, coalesce(sum(self_dev), 0) AS self_dev, coalesce(sum(dev), 0) AS dev FROM per GROUP BY ALL
),
folded AS (  -- torch folds an only child of a parent of the same name into the parent
    SELECT c.trace_id, c.uid, p.uid AS parent_uid FROM ev c JOIN slices p ON p.trace_id = c.trace_id AND p.uid = (
        SELECT parent_uid FROM slices x WHERE x.trace_id = c.trace_id AND x.uid = c.uid)
    WHERE p.name = c.name AND (SELECT count(*) FROM slices k WHERE k.trace_id = p.trace_id AND k.parent_uid = p.uid) = 1
),
up AS (  -- climb while the event reached is folded too
    SELECT trace_id, uid, parent_uid AS top FROM folded
    UNION ALL SELECT u.trace_id, u.uid, f.parent_uid FROM up u JOIN folded f ON f.trace_id = u.trace_id AND f.uid = u.top
),
tops AS (SELECT * FROM up u WHERE NOT EXISTS (SELECT 1 FROM folded f WHERE f.trace_id = u.trace_id AND f.uid = u.top))
SELECT ev.trace_id, ev.uid, regexp_replace(ev.name, '^ProfilerStep#.*$', 'ProfilerStep*') AS name, ev.cat,
       coalesce(te.input_shapes, CASE WHEN t.top IS NULL THEN ev.input_shapes END) AS input_shapes,
       coalesce(te.input_types, CASE WHEN t.top IS NULL THEN ev.input_types END) AS input_types,
       t.top IS NOT NULL AS folded, ev.dur_ns, ev.self_ns,
       coalesce(d.self_dev, 0)::BIGINT AS self_device_ns, coalesce(d.dev, 0)::BIGINT AS device_ns
FROM ev LEFT JOIN dev d ON d.trace_id = ev.trace_id AND d.ouid = ev.uid
LEFT JOIN tops t ON t.trace_id = ev.trace_id AND t.uid = ev.uid
LEFT JOIN ev te ON te.trace_id = t.trace_id AND te.uid = t.top
""",
    "stacks": r"""
WITH RECURSIVE s AS (
    SELECT trace_id, uid, parent_uid, cat IS DISTINCT FROM 'Trace' AS inc, self_ns,
           coalesce(nullif(translate(name, ';' || chr(13) || chr(10), ',  '), ''), '(unnamed)') AS frame
    FROM slices),
walk(trace_id, uid, inc, self_ns, node, parent_node, frame) AS (
    SELECT trace_id, uid, inc, self_ns,
           CASE WHEN inc THEN min(uid) OVER (PARTITION BY trace_id, inc, frame) END, NULL::BIGINT, frame
    FROM s WHERE parent_uid IS NULL
    UNION ALL
    -- the window sees one level at a time: the rows of this step only
    SELECT c.trace_id, c.uid, c.inc, c.self_ns,
           CASE WHEN c.inc THEN min(c.uid) OVER (PARTITION BY c.trace_id, w.node, c.inc, c.frame) ELSE w.node END,
           w.node, c.frame
    FROM walk w JOIN s c ON c.trace_id = w.trace_id AND c.parent_uid = w.uid),
launched AS (
    SELECT trace_id, CASE WHEN op_uid < 0 THEN op_uid ELSE launch_uid END AS uid, count(*) AS n,
           sum(dur_ns) AS dur_ns
    FROM kernels WHERE launch_uid IS NOT NULL OR op_uid < 0 GROUP BY ALL),
nodes AS (
    SELECT w.trace_id, w.node, any_value(w.parent_node) AS parent_node, any_value(w.frame) AS frame,
           count(*) AS slices, sum(w.self_ns) AS self_cpu_ns, sum(l.n) AS device_events,
           sum(l.dur_ns) AS self_device_ns
    FROM walk w LEFT JOIN launched l ON l.trace_id = w.trace_id AND l.uid = w.uid
    WHERE w.inc
    GROUP BY w.trace_id, w.node),
paths(trace_id, node, stack, frames) AS (
    SELECT trace_id, node, frame, 1 FROM nodes WHERE parent_node IS NULL
    UNION ALL
    SELECT n.trace_id, n.node, p.stack || ';' || n.frame, p.frames + 1
    FROM paths p JOIN nodes n ON n.trace_id = p.trace_id AND n.parent_node = p.node)
SELECT p.trace_id, p.stack, any_value(p.frames)::INTEGER AS frames, sum(n.slices)::BIGINT AS slices,
       sum(n.self_cpu_ns)::BIGINT AS self_cpu_ns, coalesce(sum(n.device_events), 0)::BIGINT AS device_events,
       coalesce(sum(n.self_device_ns), 0)::BIGINT AS self_device_ns
FROM paths p JOIN nodes n USING (trace_id, node)
GROUP BY p.trace_id, p.stack
ORDER BY p.trace_id, p.stack
""",
    # the innermost annotation holding each annotation and each kernel, by a join of every pair:
    # on the host side the one whose pre-order interval holds the point latest-starting; on the
    # device side, on the same (device, stream), the latest start holding it (of two starting
    # together the shorter, then the later uid)
    "_annotations": r"""
WITH host AS (SELECT trace_id, uid, name, ts_ns, end_ns, pre, subtree_end FROM slices WHERE cat = 'user_annotation'),
dev AS (
    SELECT trace_id, uid, name, coalesce(pid, -1) AS device, coalesce(tid, -1) AS stream, ts_ns,
           coalesce(end_ns, ts_ns) AS end_ns
    FROM events WHERE ph = 'X' AND cat = 'gpu_user_annotation' AND ts_ns IS NOT NULL
),
launched AS (
    SELECT k.trace_id, k.uid, k.name, k.device, k.stream, k.ts_ns, k.end_ns, s.pre
    FROM kernels k JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
),
host_items AS (
    SELECT trace_id, 'annotation' AS kind, uid, name, NULL::BIGINT AS device, NULL::BIGINT AS stream, ts_ns, end_ns,
           pre FROM host
    UNION ALL SELECT trace_id, 'kernel', uid, name, device, stream, ts_ns, end_ns, pre FROM launched
),
host_side AS (
    SELECT i.trace_id, 'host' AS side, i.kind, i.uid, i.name, i.device, i.stream, i.ts_ns, i.end_ns,
           arg_max(h.uid, h.pre) AS enclosing_uid
    FROM host_items i LEFT JOIN host h ON h.trace_id = i.trace_id AND h.pre < i.pre AND i.pre <= h.subtree_end
    GROUP BY ALL
),
dev_items AS (
    SELECT trace_id, 'annotation' AS kind, uid, name, device, stream, ts_ns, end_ns FROM dev
    UNION ALL SELECT trace_id, 'kernel', uid, name, device, stream, ts_ns, end_ns FROM kernels
),
device_side AS (
    SELECT i.trace_id, 'device' AS side, i.kind, i.uid, i.name, i.device, i.stream, i.ts_ns, i.end_ns,
           arg_max(d.uid, (d.ts_ns, -d.end_ns, d.uid)) AS enclosing_uid
    FROM dev_items i LEFT JOIN dev d
      ON d.trace_id = i.trace_id AND d.device = i.device AND d.stream = i.stream AND d.uid IS DISTINCT FROM i.uid
     AND d.ts_ns <= i.ts_ns AND (i.ts_ns < d.end_ns OR (d.end_ns = d.ts_ns AND i.ts_ns = d.ts_ns))
     AND (i.kind = 'kernel' OR (d.ts_ns, -d.end_ns, d.uid) < (i.ts_ns, -i.end_ns, i.uid))
    GROUP BY ALL
)
SELECT * FROM host_side WHERE kind = 'annotation' OR enclosing_uid IS NOT NULL
UNION ALL SELECT * FROM device_side WHERE kind = 'annotation' OR enclosing_uid IS NOT NULL
""",
}


def _cte_span(text, name):
    """(start, end) in `text` of the common table expression `name[(columns)] AS [NOT] [MATERIALIZED] (…)`."""
    m = _cte_head(text, name)
    depth, i = 0, m.end() - 1
    while True:
        if text.startswith("--", i):  # a comment may hold a parenthesis or a quote
            i = text.index("\n", i)
        elif text[i] == "'":
            i = text.index("'", i + 1) + 1
        else:
            depth += (text[i] == "(") - (text[i] == ")")
            i += 1
            if depth == 0:
                return m.start(), i


def _cte_head(text, name):
    """The match of `name[(columns)] AS [NOT] [MATERIALIZED] (` in `text`: a step's head."""
    m = re.search(rf"(?<![\w.]){name}(?:\([\w\s,]*\))?\s+AS\s+(?:NOT\s+MATERIALIZED\s+|MATERIALIZED\s+)?\(", text)
    assert m, f"no step {name}"
    return m


def _query(view):
    return sqlfiles.split_view(sqlfiles.load_all()[view][0], view)[1]


def _step(view, name):
    """The body of step `name` of today's query of sql/ view `view` (between its parentheses)."""
    text = _query(view)
    return text[_cte_head(text, name).end() : _cte_span(text, name)[1] - 1]


def _spliced(view, text=None, **steps):
    """Today's query of sql/ view `view` (or `text`, a query made from it) with the named steps'
    bodies as given."""
    text = text or _query(view)
    for name, body in steps.items():
        a, b = _cte_span(text, name)
        head = re.sub(r"\s+AS\s+.*", "", _cte_head(text, name).group(0), flags=re.S)  # its name and columns
        text = f"{text[:a]}{head} AS ({body}){text[b:]}"
    return text


def _replaced(view, first, last, steps):
    """Today's query of sql/ view `view` with its steps `first` through `last` replaced by `steps`."""
    text = _query(view)
    return text[: _cte_span(text, first)[0]] + steps + text[_cte_span(text, last)[1] :]


PLAIN.update(
    # one branch per model, each scanning the ops and their argument lists again (the model of
    # each name, and the steps from the modelled ops on, are today's)
    op_perf=_replaced(
        "op_perf",
        "ops",
        "mo",
        r"""
ops AS MATERIALIZED (  -- the ops with a model (which, by name) or a flops argument: only
                           -- these are carried, with their argument lists, into every model
    SELECT * FROM (
        SELECT s.trace_id, s.rank, s.uid, s.name, s.pid, s.tid, s.ts_ns, s.pre, s.subtree_end,
               e.input_dims AS d, e.input_types AS ty, e.concrete_inputs AS ci,
               e.flops AS prof_flops, e.kernel_flop, e.kernel_num_gb,
               m.model, m.tl_cat
        FROM slices s
        JOIN events e ON e.trace_id = s.trace_id AND e.uid = s.uid
        LEFT JOIN op_models m ON m.name = s.name
        WHERE s.cat = 'cpu_op'
          AND (e.input_dims IS NOT NULL OR e.flops IS NOT NULL OR e.kernel_flop IS NOT NULL
               OR e.kernel_num_gb IS NOT NULL))
    WHERE model IS NOT NULL OR prof_flops IS NOT NULL OR kernel_flop IS NOT NULL OR kernel_num_gb IS NOT NULL
),
gemm_in AS (  -- A, B operands, bias, and the element sizes
    SELECT *,
        CASE WHEN name IN ('aten::addmm', 'aten::addmm_', 'aten::_addmm_activation', 'aten::baddbmm',
                           'aten::baddbmm_') THEN d[2] ELSE d[1] END AS a,
        CASE WHEN name IN ('aten::addmm', 'aten::addmm_', 'aten::_addmm_activation', 'aten::baddbmm',
                           'aten::baddbmm_') THEN d[3] ELSE d[2] END AS bm,
        CASE WHEN name IN ('aten::addmm', 'aten::addmm_', 'aten::_addmm_activation', 'aten::baddbmm',
                           'aten::baddbmm_') THEN d[1]
             WHEN name = 'aten::linear' AND len(d) >= 3 AND len(d[3]) > 0 THEN d[3]
             WHEN name = 'aten::_scaled_mm' AND len(d) >= 5 AND len(d[5]) > 0 THEN d[5] END AS bias,
        CASE WHEN name IN ('aten::addmm', 'aten::addmm_', 'aten::_addmm_activation', 'aten::baddbmm',
                           'aten::baddbmm_') THEN ty[2] ELSE ty[1] END AS ta
    FROM ops WHERE model = 'gemm'
),
gemm AS (
    SELECT *, CASE WHEN gb IS NULL THEN NULL
                   WHEN name IN ('aten::baddbmm', 'aten::baddbmm_') THEN gb * gm * gn
                   WHEN bias IS NOT NULL THEN gm * gn END AS bias_flops
    FROM (
        SELECT *,
            CASE WHEN name = 'aten::linear' THEN _tc_numel(a[:-2])
                 WHEN len(a) >= 2 THEN a[-2] ELSE 1 END AS gm,
            a[-1] AS gk,
            CASE WHEN name = 'aten::linear' THEN bm[1] WHEN len(bm) >= 2 THEN bm[-1] ELSE 1 END AS gn,
            CASE WHEN name IN ('aten::bmm', 'aten::baddbmm', 'aten::baddbmm_') THEN a[1]
                 WHEN name = 'aten::matmul' THEN greatest(_tc_numel(a[:-3]), _tc_numel(bm[:-3]))
                 ELSE 1 END AS gb
        FROM gemm_in WHERE len(a) >= 1 AND len(bm) >= 1
    )
),
gemm_m AS (
    SELECT trace_id, uid, 'gemm' AS category, ta AS dtype, gm, gn, gk, gb, NULL::BOOLEAN AS causal,
           2.0 * gb * gm * gn * gk + coalesce(bias_flops, 0) AS flops,
           (gb * gm * gk) * _tc_dtype_bytes(ta)
           + (gb * gk * gn) * _tc_dtype_bytes(coalesce(ty[CASE WHEN len(d) >= 3 AND bias IS NOT NULL
                                                              AND name != 'aten::linear' THEN 3 ELSE 2 END], ta))
           + (gb * gm * gn) * CASE WHEN _tc_dtype_bytes(ta) = 1 THEN 2 ELSE _tc_dtype_bytes(ta) END
           + CASE WHEN bias IS NULL THEN 0 ELSE _tc_numel(bias) * _tc_dtype_bytes(ta) END AS bytes
    FROM gemm
),
conv_in AS (
    SELECT *, d[1] AS x, d[2] AS w,
        CASE WHEN name IN ('aten::convolution', 'aten::conv1d', 'aten::conv2d', 'aten::conv3d')
                  OR name LIKE 'aten::conv_transpose%' THEN _tc_ints(ci[4]) END AS st,
        CASE WHEN name IN ('aten::convolution', 'aten::conv1d', 'aten::conv2d', 'aten::conv3d')
                  OR name LIKE 'aten::conv_transpose%' THEN _tc_ints(ci[5]) END AS pd,
        CASE WHEN name IN ('aten::convolution') THEN _tc_ints(ci[6])
             WHEN name IN ('aten::conv1d', 'aten::conv2d', 'aten::conv3d') THEN _tc_ints(ci[6])
             WHEN name LIKE 'aten::conv_transpose%' THEN _tc_ints(ci[8]) END AS dl,
        CASE WHEN name = 'aten::convolution' THEN _tc_true(ci[7])
             WHEN name LIKE 'aten::conv_transpose%' THEN true
             WHEN name = 'aten::convolution_backward' THEN _tc_true(ci[8])
             ELSE false END AS transposed,
        CASE WHEN name = 'aten::convolution' THEN _tc_ints(ci[8])
             WHEN name LIKE 'aten::conv_transpose%' THEN _tc_ints(ci[6]) END AS opd,
        CASE WHEN name = 'aten::convolution' THEN TRY_CAST(ci[9] AS BIGINT)
             WHEN name IN ('aten::conv1d', 'aten::conv2d', 'aten::conv3d') THEN TRY_CAST(ci[7] AS BIGINT)
             WHEN name LIKE 'aten::conv_transpose%' THEN TRY_CAST(ci[7] AS BIGINT)
             WHEN name = 'aten::convolution_backward' THEN TRY_CAST(ci[10] AS BIGINT) END AS groups
    FROM ops WHERE model = 'conv'
),
conv_out AS (  -- output spatial sizes
    SELECT *, CASE WHEN transposed THEN
                list_transform(range(1, len(x) - 1), lambda i:
                    (x[i + 2] - 1) * _tc_at(st, i) - 2 * _tc_at(pd, i) + _tc_at(dl, i) * (w[i + 2] - 1)
                    + coalesce(_tc_at(opd, i), 0) + 1)
              ELSE
                list_transform(range(1, len(x) - 1), lambda i:
                    (x[i + 2] + 2 * _tc_at(pd, i) - _tc_at(dl, i) * (w[i + 2] - 1) - 1) // _tc_at(st, i) + 1)
              END AS osp
    FROM conv_in WHERE len(x) >= 3 AND len(w) = len(x)
),
conv_m AS (
    SELECT trace_id, uid, 'conv_fwd' AS category, ty[1] AS dtype,
           NULL::BIGINT AS gm, NULL::BIGINT AS gn, NULL::BIGINT AS gk, NULL::BIGINT AS gb, NULL::BOOLEAN AS causal,
           2.0 * x[1] * (CASE WHEN transposed THEN _tc_numel(x[3:]) ELSE _tc_numel(osp) END) * _tc_numel(w) AS flops,
           (_tc_numel(x) + _tc_numel(w)
            + x[1] * (CASE WHEN transposed THEN w[2] * coalesce(groups, 1) ELSE w[1] END) * _tc_numel(osp)
           )::DOUBLE * _tc_dtype_bytes(ty[1]) AS bytes
    FROM conv_out
    UNION ALL
    SELECT trace_id, uid, 'conv_bwd', ty[1], NULL, NULL, NULL, NULL, NULL,
           -- grad_output d[1] = [N, Cout, out...], input d[2], weight d[3]; grad input + grad weight
           2.0 * 2.0 * d[2][1] * (CASE WHEN _tc_true(ci[8]) THEN _tc_numel(d[2][3:]) ELSE _tc_numel(d[1][3:]) END)
               * _tc_numel(d[3]),
           (2 * _tc_numel(d[1]) + 2 * _tc_numel(d[2]) + 2 * _tc_numel(d[3]))::DOUBLE * _tc_dtype_bytes(ty[1])
    FROM ops WHERE model = 'conv_bwd' AND len(d) >= 3 AND len(d[1]) >= 3
),
sdpa_in AS (
    SELECT *,
        name LIKE '%backward' AS bwd,
        name IN ('aten::_flash_attention_forward', 'aten::_efficient_attention_forward',
                 'aten::_flash_attention_backward', 'aten::_efficient_attention_backward') AS bnhd,
        CASE WHEN name LIKE '%backward' THEN 1 ELSE 0 END AS o,
        CASE name
            WHEN 'aten::scaled_dot_product_attention' THEN _tc_true(ci[6])
            WHEN 'aten::_scaled_dot_product_flash_attention' THEN _tc_true(ci[5])
            WHEN 'aten::_scaled_dot_product_flash_attention_for_cpu' THEN _tc_true(ci[5])
            WHEN 'aten::_scaled_dot_product_efficient_attention' THEN _tc_true(ci[7])
            WHEN 'aten::_scaled_dot_product_cudnn_attention' THEN _tc_true(ci[7])
            WHEN 'aten::_flash_attention_forward' THEN _tc_true(ci[9])
            WHEN 'aten::_efficient_attention_forward' THEN coalesce(ci[10], '0') NOT IN ('0', '')
            WHEN 'aten::_scaled_dot_product_flash_attention_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_scaled_dot_product_flash_attention_for_cpu_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_scaled_dot_product_efficient_attention_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_scaled_dot_product_cudnn_attention_backward' THEN _tc_true(ci[15])
            WHEN 'aten::_flash_attention_backward' THEN _tc_true(ci[12])
            WHEN 'aten::_efficient_attention_backward' THEN coalesce(ci[15], '0') NOT IN ('0', '')
        END AS causal
    FROM ops WHERE model = 'sdpa'
),
sdpa_dims AS (  -- q, k, v as [B, H, N, d]
    SELECT *, CASE WHEN bnhd THEN [q0[1], q0[3], q0[2], q0[4]] ELSE q0 END AS q,
              CASE WHEN bnhd THEN [k0[1], k0[3], k0[2], k0[4]] ELSE k0 END AS k,
              CASE WHEN bnhd THEN [v0[1], v0[3], v0[2], v0[4]] ELSE v0 END AS v
    FROM (SELECT *, d[o + 1] AS q0, d[o + 2] AS k0, d[o + 3] AS v0 FROM sdpa_in)
    WHERE len(q0) = 4 AND len(k0) = 4 AND len(v0) = 4
),
sdpa_m AS (
    SELECT trace_id, uid, CASE WHEN bwd THEN 'sdpa_bwd' ELSE 'sdpa_fwd' END AS category, ty[o + 1] AS dtype,
           NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, causal,
           2.0 * q[1] * q[2] * q[3] * k[3] * (q[4] + v[4]) * (CASE WHEN causal THEN 0.5 ELSE 1 END)
               * (CASE WHEN bwd THEN 2.5 ELSE 1 END) AS flops,
           (CASE WHEN bwd THEN 2 ELSE 1 END) * (_tc_numel(q) + _tc_numel(k) + _tc_numel(v)
               + (CASE WHEN bwd THEN 2 ELSE 1 END) * q[1] * q[2] * q[3] * v[4])::DOUBLE
               * _tc_dtype_bytes(ty[o + 1]) AS bytes
    FROM sdpa_dims
),
bytes_m AS (  -- elementwise and norms: bytes only
    SELECT trace_id, uid, CASE WHEN tl_cat = 'elementwise' THEN 'elementwise' ELSE 'norm' END, dtype,
           NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BOOLEAN, NULL::DOUBLE,
           CASE WHEN name = 'aten::copy_' THEN list_sum(tb[1:2]) ELSE list_sum(tb) + list_max(tb) END::DOUBLE
    FROM (SELECT *, list_transform(range(1, len(d) + 1), lambda i: _tc_numel(d[i]) * _tc_dtype_bytes(ty[i])) AS tb,
                 list_filter(ty, lambda t: _tc_dtype_bytes(t) IS NOT NULL)[1] AS dtype
          FROM ops WHERE model = 'bytes' AND len(d) = len(ty))
),
shape_m AS (
    SELECT *, 'shape' AS flops_source FROM gemm_m
    UNION ALL SELECT *, 'shape' FROM conv_m
    UNION ALL SELECT *, 'shape' FROM sdpa_m
    UNION ALL SELECT *, 'shape' FROM bytes_m
),
other_m AS (  -- ops with no shape model but a flops / kernel_flop / kernel_num_gb arg
    SELECT o.trace_id, o.uid,
           CASE WHEN o.prof_flops IS NOT NULL THEN 'profiler' ELSE 'inductor' END,
           o.ty[1], NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BOOLEAN,
           coalesce(o.prof_flops, o.kernel_flop)::DOUBLE,
           CASE WHEN o.kernel_num_gb IS NOT NULL THEN o.kernel_num_gb::DOUBLE * 1e9 END,
           CASE WHEN o.prof_flops IS NOT NULL THEN 'with_flops' ELSE 'inductor' END
    FROM ops o ANTI JOIN shape_m s ON s.trace_id = o.trace_id AND s.uid = o.uid
    WHERE o.prof_flops IS NOT NULL OR o.kernel_flop IS NOT NULL OR o.kernel_num_gb IS NOT NULL
),
m AS (
    SELECT * FROM shape_m UNION ALL SELECT * FROM other_m
),
mo AS MATERIALIZED (SELECT m.*, o.name, o.pid, o.tid, o.ts_ns, o.rank, o.pre, o.subtree_end,
                           CAST(o.d AS VARCHAR) AS shapes
                    FROM m JOIN ops o USING (trace_id, uid))""",
    ),
    # the source of each candidate by a sweep over every Python frame of the trace, which carried
    # its name; each segment's peak was a window's first row, and the idle intervals came from runs
    # numbered by a second pass
    optimizable_ops=_spliced(
        "optimizable_ops",
        _replaced(
            "optimizable_ops",
            "frames",
            "src",
            r"""frames AS (
    SELECT trace_id, name, pid, tid, pre, subtree_end FROM slices
    WHERE cat = 'python_function' AND regexp_matches(name, '\.py\(.*\)')),
cpos AS (
    SELECT DISTINCT z.trace_id, z.uid, 2 * z.pre AS x
    FROM z JOIN (SELECT DISTINCT trace_id, pid, tid FROM frames) f ON f.trace_id = z.trace_id AND f.pid = z.pid AND f.tid = z.tid
),
marks AS (
    SELECT trace_id, 2 * pre + 1 AS k, 1 AS delta, name, NULL::BIGINT AS uid FROM frames
    UNION ALL SELECT trace_id, 2 * subtree_end + 1, -1, NULL, NULL FROM frames
    UNION ALL SELECT trace_id, x, 0, NULL, uid FROM cpos),
leveled AS (
    SELECT *, sum(delta) OVER (PARTITION BY trace_id ORDER BY k, delta DESC ROWS UNBOUNDED PRECEDING) AS level
    FROM marks
),
src AS (
    SELECT trace_id, uid, source FROM (
        SELECT trace_id, uid, delta,
               last_value(name IGNORE NULLS) OVER (PARTITION BY trace_id, level ORDER BY k
                                                   ROWS UNBOUNDED PRECEDING) AS source
        FROM leveled WHERE delta >= 0)
    WHERE delta = 0)""",
        ),
        q="""
    SELECT *, (depth <= 0)::INT AS z,
           sum((depth <= 0)::INT) OVER (PARTITION BY trace_id, device) AS nz,
           sum((depth <= 0)::INT) OVER (PARTITION BY trace_id, device ORDER BY pos ROWS UNBOUNDED PRECEDING) AS zc
    FROM _launch_queue""",
        peaks="""
    SELECT trace_id, device, k, ts_ns AS peak_ns, depth AS peak
    FROM (SELECT *, row_number() OVER (PARTITION BY trace_id, device, k ORDER BY depth DESC, pos DESC) AS rn
          FROM q2 WHERE z = 0 AND k >= 0)
    WHERE rn = 1""",
        idle_iv="""
    WITH runs0 AS (
        SELECT *, sum(chg) OVER (PARTITION BY trace_id, device ORDER BY pos ROWS UNBOUNDED PRECEDING) AS run
        FROM (SELECT *, CASE WHEN (depth = 0) IS DISTINCT FROM lag(depth = 0) OVER (PARTITION BY trace_id, device ORDER BY pos)
                             THEN 1 ELSE 0 END AS chg
              FROM _launch_queue)
    ),
    runhead AS (
        SELECT trace_id, device, run, any_value(depth = 0) AS idle,
               arg_min(end_ns, pos) AS first_end, arg_min(ts_ns, pos) AS first_ts
        FROM runs0 GROUP BY ALL
    )
    SELECT trace_id, device, b, e FROM (
        SELECT trace_id, device, idle, first_end AS b,
               lead(first_ts) OVER (PARTITION BY trace_id, device ORDER BY run) AS e
        FROM runhead)
    WHERE idle AND e IS NOT NULL
    UNION ALL"""
        # the intervals before the first launch and after the last: today's
        + _step("optimizable_ops", "idle_iv").split("UNION ALL", 1)[1],
    ),
    # the walk up the Python frames read every slice in every step, and tested every slice's name
    findings=_spliced(
        "findings",
        walk=r"""
    SELECT e.fid, e.i, e.trace_id, s.py_uid, 0
    FROM evidence e JOIN slices s ON s.trace_id = e.trace_id AND s.uid = e.start_uid
    WHERE s.py_uid IS NOT NULL
    UNION ALL
    SELECT w.fid, w.i, w.trace_id, p.py_uid, w.depth + 1
    FROM walk w JOIN slices p ON p.trace_id = w.trace_id AND p.uid = w.frame
    WHERE p.py_uid IS NOT NULL AND w.depth < 64
      AND NOT (regexp_matches(p.name, '\.py\(\d+\): ') AND NOT regexp_matches(p.name, '(^|/)torch/'))""",
        found=r"""
    SELECT w.fid, w.i, arg_min(p.name, w.depth) AS frame
    FROM walk w JOIN slices p ON p.trace_id = w.trace_id AND p.uid = w.frame
    WHERE regexp_matches(p.name, '\.py\(\d+\): ') AND NOT regexp_matches(p.name, '(^|/)torch/')
    GROUP BY w.fid, w.i""",
    ),
    # the outermost steps and each launch's step by range joins
    inference_steps=_spliced(
        "inference_steps",
        steps="""
    SELECT k.* FROM kind k
    WHERE NOT EXISTS (SELECT 1 FROM kind o WHERE o.trace_id = k.trace_id AND o.pre < k.pre
                      AND k.pre <= o.subtree_end)""",
        dev="""
    SELECT p.trace_id, p.uid AS step_uid, k.ts_ns, k.end_ns, k.dur_ns, k.launch_uid, k.launch_name
    FROM (SELECT k.trace_id, k.ts_ns, k.end_ns, k.dur_ns, k.launch_uid, k.launch_name, l.pre AS lpre
          FROM kernels k JOIN slices l ON l.trace_id = k.trace_id AND l.uid = k.launch_uid) k
    JOIN phased p ON p.trace_id = k.trace_id AND k.lpre > p.pre AND k.lpre <= p.subtree_end""",
    ),
    # the walk up the module frames stepped through every slice
    # the host calls on the path first found by a semi join with the path's rows, each with an
    # EXISTS over the DataLoader annotations, then joined to the path again
    critical_path=r"""
WITH loader AS (
    SELECT trace_id, pre, subtree_end FROM slices
    WHERE cat = 'user_annotation' AND name LIKE 'enumerate(DataLoader)#%'
),
cpu AS (  -- the host calls on the path, and whether a DataLoader annotation holds them
    SELECT s.trace_id, s.uid, s.name, s.cat,
           EXISTS (SELECT 1 FROM loader l WHERE l.trace_id = s.trace_id AND l.pre <= s.pre AND s.pre <= l.subtree_end)
               AS loading
    FROM slices s SEMI JOIN (SELECT trace_id, uid FROM critical_path_edges WHERE kind = 'cpu') c
      ON c.trace_id = s.trace_id AND c.uid = s.uid
)
SELECT c.trace_id, c.rank, c.step, c.window_uid, c.seq, c.kind, c.uid, coalesce(s.name, k.name) AS name,
       coalesce(s.cat, k.cat) AS cat, k.device, k.stream, c.src_uid, c.dst_uid, c.ts_ns, c.end_ns, c.weight_ns AS dur_ns,
       CASE c.kind WHEN 'cpu' THEN CASE WHEN s.loading THEN 'data_loading' ELSE 'cpu_bound' END
                   WHEN 'kernel' THEN CASE WHEN k.kernel_class = 'communication' THEN 'gpu_communication_bound'
                                           ELSE 'gpu_compute_bound' END
                   WHEN 'launch' THEN 'kernel_launch_overhead'
                   WHEN 'kernel_kernel' THEN 'kernel_kernel_overhead' END AS bound_by
FROM critical_path_edges c
LEFT JOIN cpu s ON c.kind = 'cpu' AND s.trace_id = c.trace_id AND s.uid = c.uid
LEFT JOIN kernels k ON c.kind IN ('kernel', 'kernel_kernel', 'launch') AND k.trace_id = c.trace_id AND k.uid = c.uid
ORDER BY c.trace_id, c.window_start_ns, c.window_uid, c.seq
""",
    # the source frame and the module looked up among every slice, not the Python frames alone
    op_gpu_time=_spliced("op_gpu_time", frames="SELECT trace_id, uid, name FROM slices"),
    tracelens_ops_summary=_spliced("tracelens_ops_summary", mods="SELECT trace_id, uid, name, module_uid FROM slices"),
)


def stack_texts(rows):
    """{(trace_id, node): stack text} for `stacks` rows (dicts): from each node, a walk up
    `parent` to the root, one row at a time."""
    by_node = {(r["trace_id"], r["node"]): r for r in rows}
    out = {}
    for key, r in by_node.items():
        frames = []
        while r is not None:
            frames.append(r["frame"])
            r = None if r["parent"] is None else by_node[key[0], r["parent"]]
        out[key] = ";".join(reversed(frames))
    return out


def _stacks_as_text(tree):
    """The rows of the `stacks` tree (an Arrow table) as the plain query gives them: the stack's
    text instead of node, parent and frame."""
    rows = tree.to_pylist()
    text = stack_texts(rows)
    cols = ("self_cpu_ns", "device_events", "self_device_ns")
    return pa.table(
        {
            "trace_id": pa.array([r["trace_id"] for r in rows], pa.int32()),
            "stack": pa.array([text[r["trace_id"], r["node"]] for r in rows], pa.string()),
            "frames": pa.array([r["frames"] for r in rows], pa.int32()),
            "slices": pa.array([r["slices"] for r in rows], pa.int64()),
            **{c: pa.array([r[c] for r in rows], pa.int64()) for c in cols},
        }
    )


# view -> its rows in the shape of the plain query
AS_PLAIN = {"stacks": _stacks_as_text}
