"""Compare two traces: kernels by name, CPU ops by name, and CPU ops by call path.

Each side is first reduced to one row per key with additive measures (counts, summed
nanoseconds, summed FLOPs and bytes); `compare` then joins the two sides on the key (full
outer: a key present on one side only is an "only in A" / "only in B" row), computes the
changes and sorts by the absolute change in GPU time (ties: host time, then the key).

- kernels: key name, over all devices together (two traces of one job often ran on different
  GPUs, so a per-device key would match nothing); key (device, name) with `by_device`. GPU time
  = sum of the events' durations; `devices` lists the devices the name ran on. FLOPs and bytes come
  from the `kernel_perf` view (op_perf's model split over the op's kernels); achieved TFLOP/s and
  TB/s are the summed FLOPs / bytes over the summed time, and the % of peak divides by the
  duration-weighted peak of the events that have one.
- ops: key name, over cpu_op slices (host-side: never keyed by device, `by_device` or not);
  host time = sum of durations, self = sum of self times,
  GPU time = sum of the durations of the device events each op launched directly (`op_uid`, so
  nested ops of one name are not counted twice).
- callpaths: key = the names of the op's enclosing cpu_op / user_annotation slices from the root
  down to it, joined by " > " (`ProfilerStep#N` written as `ProfilerStep#*` so that steps of the
  two traces meet); measures as for ops.
"""

import numpy as np
import polars as pl

from . import noise, steps
from .tree import nearest

KEYS = {
    "kernel": ["name"],
    "kernel_class": ["kernel_class"],
    "op": ["name"],
    "shape": ["name", "input_dims"],
    "module": ["module"],
    "phase": ["phase"],
    "callpath": ["callpath"],
}
NO_MODULE = "(no module)"
KINDS = ("step",) + tuple(KEYS)
KERNEL_BY_DEVICE = ["device", "name"]
PATH_CATS = ("cpu_op", "user_annotation")
SEP = " > "


def keys(kind, by_device=False):
    """The key columns of a comparison of `kind`."""
    return KERNEL_BY_DEVICE if kind == "kernel" and by_device else KEYS[kind]


def kernel_side(kernels, perf=None, by_device=False):
    """kernels: polars frame of the `kernels` table; perf: of the `kernel_perf` view (or None).
    One row per name (all devices summed), or per (device, name) with `by_device`."""
    k = kernels.select(["trace_id", "uid", "device", "name", "dur_ns"])
    if perf is not None and perf.height:
        p = perf.select(["trace_id", "uid", "kernel_flop", "kernel_bytes", "peak_tflops_per_s", "peak_tb_per_s"])
        k = k.join(p, on=["trace_id", "uid"], how="left")
    else:
        k = k.with_columns(
            [pl.lit(None, pl.Float64).alias(c) for c in ("kernel_flop", "kernel_bytes", "peak_tflops_per_s", "peak_tb_per_s")]
        )
    d = pl.col("dur_ns").fill_null(0)
    per_device = (
        []
        if by_device
        else [  # which devices the name ran on, e.g. "1" or "0,3"
            pl.col("device").unique().sort().cast(pl.String).str.join(",").alias("devices")
        ]
    )
    return (
        k.group_by(keys("kernel", by_device))
        .agg(
            *per_device,
            pl.len().cast(pl.Int64).alias("count"),
            d.sum().cast(pl.Int64).alias("gpu_ns"),
            pl.col("kernel_flop").sum().alias("flops"),
            pl.col("kernel_bytes").sum().alias("bytes"),
            pl.col("kernel_flop").is_not_null().any().alias("_has_flops"),
            pl.col("kernel_bytes").is_not_null().any().alias("_has_bytes"),
            (d * pl.col("peak_tflops_per_s")).sum().alias("_peak_f"),  # ns · TFLOP/s
            (d * pl.col("peak_tb_per_s")).sum().alias("_peak_b"),
            d.filter(pl.col("kernel_flop").is_not_null()).sum().alias("_ns_f"),
            d.filter(pl.col("kernel_bytes").is_not_null()).sum().alias("_ns_b"),
        )
        .with_columns(
            pl.when(pl.col("_has_flops")).then(pl.col("flops")).alias("flops"),
            pl.when(pl.col("_has_bytes")).then(pl.col("bytes")).alias("bytes"),
        )
    )


def _finish_kernel(side):
    """Rates and % of peak of a kernel side (after summing)."""
    return side.with_columns(
        (pl.col("flops") / pl.col("_ns_f").replace(0, None) / 1e3).alias("tflops_per_s"),
        (pl.col("bytes") / pl.col("_ns_b").replace(0, None) / 1e3).alias("tb_per_s"),
        (100.0 * pl.col("flops") / (pl.col("_peak_f").replace(0, None) * 1e3)).alias("flops_pct_of_peak"),
        (100.0 * pl.col("bytes") / (pl.col("_peak_b").replace(0, None) * 1e3)).alias("bandwidth_pct_of_peak"),
    ).drop(["_has_flops", "_has_bytes", "_peak_f", "_peak_b", "_ns_f", "_ns_b"])


def _op_gpu(slices, kernels):
    g = (
        kernels.filter(pl.col("op_uid").is_not_null())
        .group_by(["trace_id", "op_uid"])
        .agg(pl.col("dur_ns").fill_null(0).sum().cast(pl.Int64).alias("_gpu"), pl.len().alias("_nk"))
    )
    return slices.join(g.rename({"op_uid": "uid"}), on=["trace_id", "uid"], how="left").with_columns(
        pl.col("_gpu").fill_null(0), pl.col("_nk").fill_null(0)
    )


def _agg(frame, keys):
    return frame.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("count"),
        pl.col("dur_ns").fill_null(0).sum().cast(pl.Int64).alias("host_ns"),
        pl.col("self_ns").fill_null(0).sum().cast(pl.Int64).alias("self_ns"),
        pl.col("_nk").sum().cast(pl.Int64).alias("kernels"),
        pl.col("_gpu").sum().cast(pl.Int64).alias("gpu_ns"),
    )


def _ops(tables, kind):
    """The cpu_op slices with their direct GPU time and the columns of `kind`'s key."""
    slices = tables["slices"]
    ops = _op_gpu(slices.filter(pl.col("cat") == "cpu_op"), tables["kernels"])
    if kind == "shape":
        args = tables.get("op_args")
        if args is None or not args.height:
            args = pl.DataFrame(schema={"trace_id": pl.Int32, "uid": pl.Int64, "input_dims": pl.String})
        ops = ops.join(args.select("trace_id", "uid", "input_dims"), on=["trace_id", "uid"], how="left")
        ops = ops.with_columns(pl.col("input_dims").fill_null(""))
    elif kind == "module":
        modules = slices.select("trace_id", pl.col("uid").alias("module_uid"), pl.col("name").alias("module"))
        ops = ops.join(modules, on=["trace_id", "module_uid"], how="left").with_columns(
            pl.col("module").str.replace(r"^nn\.Module: ", "").fill_null(NO_MODULE)
        )
    elif kind == "callpath":
        ops = ops.join(callpaths(slices), on=["trace_id", "uid"], how="left")
    elif kind == "phase":
        path = pl.col("callpath").fill_null("")
        ops = ops.join(callpaths(slices), on=["trace_id", "uid"], how="left").with_columns(
            pl.when(path.str.contains("Optimizer.step", literal=True))
            .then(pl.lit("optimizer"))
            .when(path.str.contains("autograd::engine::evaluate_function", literal=True))
            .then(pl.lit("backward"))
            .otherwise(pl.lit("forward"))
            .alias("phase")
        )
    return ops


def op_side(slices, kernels):
    """slices, kernels: polars frames of the base tables."""
    ops = _op_gpu(slices.filter(pl.col("cat") == "cpu_op"), kernels)
    return _agg(ops, ["name"])


def callpaths(slices):
    """polars frame (trace_id, uid, callpath) for every cpu_op / user_annotation slice."""
    s = slices.select(["trace_id", "uid", "cat", "name", "parent_uid", "depth"])
    n = s.height
    if n == 0:
        return pl.DataFrame(schema={"trace_id": pl.Int32, "uid": pl.Int64, "callpath": pl.String})
    key = s.select(["trace_id", "uid"]).with_row_index("_i")
    parent = (
        s.select(["trace_id", pl.col("parent_uid").alias("uid")])
        .join(key, on=["trace_id", "uid"], how="left", maintain_order="left")["_i"]
        .fill_null(-1)
        .to_numpy()
        .astype(np.int64)
    )
    on_path = s["cat"].is_in(list(PATH_CATS)).to_numpy()
    up = nearest(parent, on_path, include_self=False)  # nearest path slice strictly above
    name = s["name"].fill_null("").str.replace(r"^ProfilerStep#\d+$", "ProfilerStep#*").to_numpy().astype(object)
    # path depth among path slices, then build the strings level by level (parents first)
    pdepth = np.zeros(n, np.int64)
    ptr = up.copy()
    while (ptr >= 0).any():
        live = ptr >= 0
        pdepth[live] += 1
        ptr = np.where(live, up[np.maximum(ptr, 0)], -1)
    path = np.empty(n, object)
    for lvl in range(int(pdepth.max()) + 1 if n else 0):
        idx = np.flatnonzero((pdepth == lvl) & on_path)
        if lvl == 0:
            path[idx] = name[idx]
        else:
            path[idx] = path[up[idx]] + SEP + name[idx]
    keep = np.flatnonzero(on_path)
    return pl.DataFrame(
        {
            "trace_id": s["trace_id"].to_numpy()[keep],
            "uid": s["uid"].to_numpy()[keep],
            "callpath": pl.Series(path[keep].tolist(), dtype=pl.String),
        }
    )


def callpath_side(slices, kernels):
    ops = _op_gpu(slices.filter(pl.col("cat") == "cpu_op"), kernels)
    ops = ops.join(callpaths(slices), on=["trace_id", "uid"], how="left")
    return _agg(ops, ["callpath"])


def compare(a, b, keys, kind):
    """Join side tables `a` and `b` on `keys`; add status, deltas; sort by |delta gpu_ns|."""
    measures = [c for c in a.columns if c not in keys]
    ja = a.rename({c: f"{c}_a" for c in measures}).with_columns(pl.lit(True).alias("_ina"))
    jb = b.rename({c: f"{c}_b" for c in measures}).with_columns(pl.lit(True).alias("_inb"))
    j = ja.join(jb, on=keys, how="full", coalesce=True, nulls_equal=True)
    if kind == "kernel":
        j = _finish_kernel_pair(j)
        measures = [c for c in j.columns if c.endswith("_a") and c[:-2] not in keys]
        measures = [c[:-2] for c in measures]
    additive = ["count", "gpu_ns", "host_ns", "self_ns", "kernels"]
    fills = [pl.col(f"{m}_{s}").fill_null(0) for m in additive if f"{m}_a" in j.columns for s in "ab"]
    j = (
        j.with_columns(fills)
        .with_columns(
            pl.when(pl.col("_ina").is_null())
            .then(pl.lit("only in B"))
            .when(pl.col("_inb").is_null())
            .then(pl.lit("only in A"))
            .otherwise(pl.lit("both"))
            .alias("status"),
            (pl.col("count_b") - pl.col("count_a")).alias("delta_count"),
            (pl.col("gpu_ns_b") - pl.col("gpu_ns_a")).alias("delta_gpu_ns"),
        )
        .drop(["_ina", "_inb"])
    )
    if "host_ns_a" in j.columns:
        j = j.with_columns((pl.col("host_ns_b") - pl.col("host_ns_a")).alias("delta_host_ns"))
    else:
        j = j.with_columns(
            (pl.col("gpu_ns_a") / pl.col("count_a").replace(0, None)).alias("mean_ns_a"),
            (pl.col("gpu_ns_b") / pl.col("count_b").replace(0, None)).alias("mean_ns_b"),
            pl.lit(0, pl.Int64).alias("delta_host_ns"),
        )
    j = j.with_columns(
        (100.0 * pl.col("delta_gpu_ns") / pl.col("gpu_ns_a").replace(0, None)).alias("delta_gpu_pct"),
        pl.col("delta_gpu_ns").abs().alias("_abs"),
        pl.col("delta_host_ns").abs().alias("_abs_h"),
    )
    j = j.sort(["_abs", "_abs_h"] + keys, descending=[True, True] + [False] * len(keys), nulls_last=True)
    if kind in ("kernel", "kernel_class"):
        j = j.drop("delta_host_ns")
    front = ["status"] + keys + ["delta_gpu_ns", "delta_gpu_pct", "delta_count"]
    front += ["delta_host_ns"] if "delta_host_ns" in j.columns else []
    rest = [c for c in j.columns if c not in front and not c.startswith("_")]
    return j.select(front + sorted(rest, key=lambda c: (c[:-2], c[-1:])))


def _finish_kernel_pair(j):
    out = j
    for s in "ab":
        side = out.select([c for c in out.columns if c.endswith(f"_{s}")]).rename(
            {c: c[:-2] for c in out.columns if c.endswith(f"_{s}")}
        )
        fin = _finish_kernel(side).rename(lambda c, s=s: f"{c}_{s}")
        out = pl.concat([out.drop([c for c in out.columns if c.endswith(f"_{s}")]), fin], how="horizontal")
    return out


def kernel_class_side(kernels):
    """One row per kernel class (kernels.kernel_class; '(none)' for an unclassified event)."""
    k = kernels.with_columns(pl.col("kernel_class").fill_null("(none)"))
    return k.group_by("kernel_class").agg(
        pl.len().cast(pl.Int64).alias("count"), pl.col("dur_ns").fill_null(0).sum().cast(pl.Int64).alias("gpu_ns")
    )


def diff(a_tables, b_tables, kind, by_device=False, min_change_pct=None):
    """a_tables/b_tables: dicts of polars frames ('slices', 'kernels', and 'kernel_perf' when
    available). Returns the comparison frame for `kind` in KINDS; `by_device` keys kernels by
    (device, name) instead of name. Every row carries NOISE_COLUMNS: its per-step samples and
    whether the change is beyond noise (`min_change_pct`: the smallest shift, in % of A's time
    per step, that counts; default MIN_CHANGE_PCT)."""
    if kind == "step":
        return step_diff(a_tables, b_tables, min_change_pct)
    if kind == "kernel":
        sa = kernel_side(a_tables["kernels"], a_tables.get("kernel_perf"), by_device)
        sb = kernel_side(b_tables["kernels"], b_tables.get("kernel_perf"), by_device)
    elif kind == "kernel_class":
        sa, sb = kernel_class_side(a_tables["kernels"]), kernel_class_side(b_tables["kernels"])
    elif kind == "op":
        sa = op_side(a_tables["slices"], a_tables["kernels"])
        sb = op_side(b_tables["slices"], b_tables["kernels"])
    elif kind == "callpath":
        sa = callpath_side(a_tables["slices"], a_tables["kernels"])
        sb = callpath_side(b_tables["slices"], b_tables["kernels"])
    elif kind in ("shape", "module", "phase"):
        sa, sb = _agg(_ops(a_tables, kind), KEYS[kind]), _agg(_ops(b_tables, kind), KEYS[kind])
    else:
        raise ValueError(f"unknown diff kind {kind!r}")
    k = keys(kind, by_device)
    frame = compare(sa, sb, k, kind)
    noisy = with_noise(
        frame,
        k,
        samples(a_tables, kind, by_device),
        samples(b_tables, kind, by_device),
        MIN_CHANGE_PCT if min_change_pct is None else min_change_pct,
    )
    return noisy


# A change is beyond noise when the rank test's q-value is below Q_MAX and the shift is at
# least MIN_CHANGE_PCT of A's time per step: two runs of one job differ by a steady 1-2 % that
# their steps, tight within each run, call significant (tests/data/runs: base_a, base_b), and
# a change smaller than that is not one a user can act on. `compare(..., min_change_pct=…)`.
Q_MAX = 0.05
MIN_CHANGE_PCT = 2.0
NOISE_COLUMNS = [
    "steps_a",
    "steps_b",
    "per_step_ns_a",
    "per_step_ns_b",
    "spread_ns_a",
    "spread_ns_b",
    "shift_ns",
    "shift_pct",
    "ci_low_ns",
    "ci_high_ns",
    "p_value",
    "q_value",
    "significant",
]


def _kernels_by_step(kernels, w):
    """`kernels` with the `step` (of windows `w`) their launch call, else their own start, lies in."""
    return steps.assign(kernels.with_columns(pl.coalesce("launch_ts_ns", "ts_ns").alias("_ts")), w, "_ts")


def samples(tables, kind, by_device=False):
    """Per-step samples of one side: (frame of trace_id, step, key columns, `v` in ns; the
    number of steps). See model/steps.py for which step an event belongs to."""
    slices, kernels = tables["slices"], tables["kernels"]
    w = steps.windows(slices)
    if kind in ("kernel", "kernel_class"):
        k = _kernels_by_step(kernels, w).with_columns(pl.col("dur_ns").fill_null(0))
        if kind == "kernel_class":
            k = k.with_columns(pl.col("kernel_class").fill_null("(none)"))
        by = keys(kind, by_device)
        s = k.group_by(["trace_id", "step"] + by).agg(pl.col("dur_ns").sum().alias("v"))
    else:
        ops = steps.assign(_ops(tables, kind), w, "ts_ns")
        s = ops.group_by(["trace_id", "step"] + KEYS[kind]).agg(pl.col("_gpu").sum().alias("v"))
    return s.filter(pl.col("step").is_not_null()), w.height


def _values(side, key_cols):
    return {tuple(r[:-1]): r[-1] for r in side.group_by(key_cols).agg(pl.col("v")).iter_rows()}


def _robust_spread(x):
    """1.4826 × the median absolute deviation: the standard deviation where the samples are
    normal, untouched by a few outlying steps."""
    return float(1.4826 * np.median(np.abs(x - np.median(x)))) if len(x) else None


def with_noise(frame, keys_, a, b, min_change_pct=MIN_CHANGE_PCT):
    """`frame` (a comparison) with NOISE_COLUMNS from the per-step samples `a` and `b` (each as
    returned by `samples`): a key absent from a step counts 0 ns in it."""
    (sa, na), (sb, nb) = a, b
    va, vb = _values(sa, keys_), _values(sb, keys_)
    rows = []
    for key in frame.select(keys_).iter_rows():
        xa = np.zeros(na)
        xb = np.zeros(nb)
        got_a, got_b = va.get(key, []), vb.get(key, [])
        xa[: len(got_a)] = got_a
        xb[: len(got_b)] = got_b
        p = noise.mann_whitney(xa, xb)
        shift, lo, hi = noise.hodges_lehmann(xa, xb)
        per_a = float(xa.mean()) if na else None
        rows.append(
            (
                na,
                nb,
                per_a,
                float(xb.mean()) if nb else None,
                _robust_spread(xa),
                _robust_spread(xb),
                shift,
                100.0 * shift / per_a if per_a else None,
                lo,
                hi,
                p,
            )
        )
    cols = NOISE_COLUMNS[:-2]
    extra = pl.DataFrame(rows, schema=dict(zip(cols, [pl.Int64, pl.Int64] + [pl.Float64] * 9)), orient="row")
    q = noise.benjamini_hochberg(extra["p_value"].to_list())
    extra = extra.with_columns(pl.Series("q_value", q, pl.Float64))
    big = pl.col("shift_ns").abs() >= min_change_pct / 100.0 * pl.col("per_step_ns_a").abs()
    extra = extra.with_columns(
        pl.when(pl.col("q_value").is_null()).then(None).otherwise((pl.col("q_value") < Q_MAX) & big).alias("significant")
    )
    return pl.concat([frame, extra], how="horizontal")


STEP_METRICS = ("step_time", "gpu_busy", "gpu_idle")


def step_samples(tables):
    """Per-step samples of the step metrics: (frame of trace_id, step, metric, v in ns; the
    number of steps). step_time: the step's host duration; gpu_busy: the time its device events
    (those its calls launched) kept a device busy, a union per device added over devices;
    gpu_idle: step_time x the devices that ran in the trace, less gpu_busy (0 at least)."""
    w = steps.windows(tables["slices"])
    k = _kernels_by_step(tables["kernels"].filter(pl.col("ts_ns").is_not_null()), w).filter(pl.col("step").is_not_null())
    grp = ["trace_id", "step", "device"]
    k = k.sort(grp + ["ts_ns"]).with_columns(pl.col("end_ns").cum_max().shift(1).over(grp).alias("_prev"))
    covered = (pl.col("end_ns") - pl.max_horizontal("ts_ns", pl.col("_prev").fill_null(pl.col("ts_ns")))).clip(0)
    busy = k.group_by("trace_id", "step").agg(covered.sum().alias("busy"))
    ndev = tables["kernels"].group_by("trace_id").agg(pl.col("device").n_unique().alias("ndev"))
    s = (
        w.join(busy, on=["trace_id", "step"], how="left")
        .join(ndev, on="trace_id", how="left")
        .with_columns(pl.col("busy").fill_null(0), pl.col("ndev").fill_null(0))
        .select(
            "trace_id",
            "step",
            pl.col("dur_ns").cast(pl.Float64).alias("step_time"),
            pl.col("busy").cast(pl.Float64).alias("gpu_busy"),
            (pl.col("dur_ns") * pl.col("ndev") - pl.col("busy")).clip(0).cast(pl.Float64).alias("gpu_idle"),
        )
    )
    long = s.unpivot(index=["trace_id", "step"], on=list(STEP_METRICS), variable_name="metric", value_name="v")
    return long, w.height


def step_diff(a_tables, b_tables, min_change_pct=None):
    """The step metrics of A and B, one row each, with NOISE_COLUMNS (see `diff`)."""
    sa, sb = step_samples(a_tables), step_samples(b_tables)
    frame = pl.DataFrame({"status": ["both"] * len(STEP_METRICS), "metric": list(STEP_METRICS)})
    return with_noise(frame, ["metric"], sa, sb, MIN_CHANGE_PCT if min_change_pct is None else min_change_pct)


FINDING_KEY = ["rule", "kind"]


def findings_diff(a, b, by_device=False):
    """The findings of A and of B (the `findings` view's frames) matched by rule and kind, every
    device and trace of a side together (two runs of one job often ran on other GPUs, as kernels
    are matched), or by rule, kind and device with `by_device`; a finding's evidence names ops
    and kernels, which a library change may rename, and is not matched. `appeared` in B only,
    `disappeared` from A, `both` with the change of its time at stake (summed over the devices
    and traces). Ordered: appeared, disappeared, then both, each by the larger time at stake."""
    key = FINDING_KEY + (["device"] if by_device else [])

    def side(f, s):
        g = (
            f.sort("stake_ns", descending=True, nulls_last=True)
            .group_by(key, maintain_order=True)
            .agg(
                pl.col("severity").first(),  # the largest one's
                pl.when(pl.col("stake_ns").is_not_null().any()).then(pl.col("stake_ns").sum()).alias("stake_ns"),
                pl.col("stake_pct").max(),
                pl.col("summary").first(),
                pl.col("remedy").first(),
            )
        )
        return g.rename({c: f"{c}_{s}" for c in g.columns if c not in key})

    j = side(a, "a").join(side(b, "b"), on=key, how="full", coalesce=True, nulls_equal=True)
    ina, inb = pl.col("severity_a").is_not_null(), pl.col("severity_b").is_not_null()
    j = j.with_columns(
        pl.when(ina & inb)
        .then(pl.lit("both"))
        .when(inb)
        .then(pl.lit("appeared"))
        .otherwise(pl.lit("disappeared"))
        .alias("status"),
        (pl.col("stake_ns_b") - pl.col("stake_ns_a")).alias("delta_stake_ns"),
    )
    order = pl.col("status").replace_strict({"appeared": 0, "disappeared": 1, "both": 2}, return_dtype=pl.Int8)
    big = pl.max_horizontal(pl.col("stake_ns_a").fill_null(0), pl.col("stake_ns_b").fill_null(0))
    j = j.sort(order, big, *key, descending=[False, True] + [False] * len(key), nulls_last=True)
    return j.select(
        "status",
        *key,
        "severity_a",
        "severity_b",
        "stake_ns_a",
        "stake_ns_b",
        "delta_stake_ns",
        "stake_pct_a",
        "stake_pct_b",
        "summary_a",
        "summary_b",
        "remedy_b",
        "remedy_a",
    )


BEYOND_KINDS = ("kernel_class", "op", "kernel")
BEYOND_COLUMNS = [
    "kind",
    "key",
    "per_step_ns_a",
    "per_step_ns_b",
    "shift_ns",
    "shift_pct",
    "ci_low_ns",
    "ci_high_ns",
    "q_value",
    "significant",
]


def beyond_noise(comparison):
    """The rows beyond noise of the kernel-class, op and kernel comparisons in `comparison`
    ({kind: frame}, those absent passed over) as one frame of BEYOND_COLUMNS (`key`: the row's
    kernel class or name), the largest shift first (ties: kind, then key)."""
    parts = [
        comparison[kind]
        .filter(pl.col("significant").fill_null(False))
        .select(pl.lit(kind).alias("kind"), pl.col(KEYS[kind][0]).alias("key"), *BEYOND_COLUMNS[2:])
        for kind in BEYOND_KINDS
        if kind in comparison
    ]
    if not parts:
        return pl.DataFrame(schema={c: pl.String if c in ("kind", "key") else pl.Float64 for c in BEYOND_COLUMNS})
    return pl.concat(parts).sort(pl.col("shift_ns").abs(), "kind", "key", descending=[True, False, False])
