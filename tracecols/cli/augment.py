"""`tracecols augment IN OUT[.gz]`: the trace with `kernel_flop` / `kernel_num_gb` args, for Perfetto;
with `--counters`, also the queue length and copy bandwidth as counter tracks."""

import sys
from decimal import Decimal

from ..errors import Unsupported
from ..printable import printable
from ..read import rocprof
from ..read.restore import us
from ..store.augment import write_augmented
from ..trace import open_any as open_trace
from . import flags


def _gb(nbytes):
    return Decimal(int(round(nbytes))).scaleb(-9)  # GB with byte resolution, exact decimal text


def augment_values(t):
    """({uid: {kernel_flop, kernel_num_gb}}, events left alone) for the first trace: every device
    event with a modelled op and that op (the event_flops_bytes view); events that already carry
    either arg are left alone, and counted."""
    import polars as pl

    if "event_flops_bytes" not in t.tables:
        return {}, 0
    rows = t.frame("event_flops_bytes").filter(pl.col("trace_id") == 0)
    carried = pl.col("source") == "trace"
    values = {}
    for uid, flop, nbytes in rows.filter(~carried).select("uid", "flops", "bytes").iter_rows():
        v = {}
        if flop is not None:
            v["kernel_flop"] = int(round(flop))
        if nbytes is not None:
            v["kernel_num_gb"] = _gb(nbytes)
        values[uid] = v
    return values, rows.filter(carried).height


def _pid(pid, pid_str, device):
    """The pid the device's events sit on: their int pid, else their string pid, else the device id."""
    return pid if pid is not None else pid_str if pid_str is not None else device


def _first_trace(t, view, order):
    import polars as pl

    return t.frame(view).filter(pl.col("trace_id") == 0).sort(order, nulls_last=True, maintain_order=True)


def counter_events(t):
    """Chrome counter events ("ph": "C") on the pid of each device's events: the queue length of
    every stream (queue_depth_samples: its value after the last change at each time, one track
    per stream, named "stream S queue" with series "length") and the copy bandwidth of every
    direction (memcpy_bandwidth_samples, in GB/s = 1e9 bytes/s: one track per direction, named
    "memcpy HtoD", … or "memset", with series "GB/s"). Perfetto names a track "<name> <series>"."""
    queue = _first_trace(t, "queue_depth_samples", ["device", "stream", "ts_ns"])
    queue = queue.select("device", "stream", "pid", "pid_str", "ts_ns", "queue_depth")
    bandwidth = _first_trace(t, "memcpy_bandwidth_samples", ["device", "direction", "ts_ns"])
    bandwidth = bandwidth.select("device", "direction", "pid", "pid_str", "ts_ns", "bytes_per_s")
    events = [
        {"ph": "C", "name": f"stream {stream} queue", "pid": _pid(pid, pid_str, device), "ts": us(ts), "args": {"length": depth}}
        for device, stream, pid, pid_str, ts, depth in queue.iter_rows()
    ]
    n_queue = len(events)
    for device, direction, pid, pid_str, ts, rate in bandwidth.iter_rows():
        name = "memset" if direction == "memset" else f"memcpy {direction}"
        events.append({"ph": "C", "name": name, "pid": _pid(pid, pid_str, device), "ts": us(ts), "args": {"GB/s": rate / 1e9}})
    series = {
        "queue": queue.select(["device", "stream"]).unique().height,
        "bandwidth": bandwidth.select(["device", "direction"]).unique().height,
    }
    return events, n_queue, series


def augment(args):
    t = open_trace(args.input, keep_secrets=args.keep_secrets)
    if len(t.inputs) != 1:
        raise SystemExit("tracecols augment: give one trace file")
    if rocprof.FORM in t.frame("traces")["form"].to_list():
        raise Unsupported(args.input, "augment rewrites Chrome-trace JSON (traceEvents); this is a rocprofv3 file")
    values, skipped = augment_values(t)
    counters, n_queue, series = counter_events(t) if args.counters else ([], 0, {})
    n = write_augmented(args.input, args.output, values, keep_secrets=args.keep_secrets, events=counters)
    kern = t.frame("kernels").height
    sys.stdout.write(
        f"wrote {printable(args.output)}: kernel_flop / kernel_num_gb on {n:,} events "
        f"({kern:,} device events in the trace)"
        + (f"; {skipped:,} events already had them and were left as they were" if skipped else "")
        + (
            f"; {len(counters):,} counter samples: queue length of {series['queue']:,} stream(s) "
            f"({n_queue:,}), copy bandwidth of {series['bandwidth']:,} device/direction series "
            f"({len(counters) - n_queue:,})"
            if args.counters
            else ""
        )
        + "\n"
    )
    return 0


def register(sub):
    s = sub.add_parser("augment", help="write the trace with kernel_flop / kernel_num_gb args on kernels and their ops")
    s.add_argument("input", help="trace file (.json / .json.gz)")
    s.add_argument("output", help="output trace (.json, or .json.gz to compress)")
    s.add_argument(
        "--counters",
        action="store_true",
        help="also add counter tracks on each device: the queue length of every stream and the "
        "memcpy/memset bandwidth (GB/s) per direction",
    )
    flags.keep_secrets(s)
    s.set_defaults(func=augment)
