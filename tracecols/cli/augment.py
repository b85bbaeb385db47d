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
    """{uid: {kernel_flop, kernel_num_gb}} for every device event with a modelled op (kernel_perf)
    and for that op (its whole FLOPs and bytes, op_perf). Events that already carry either arg
    are left alone."""
    if "kernel_perf" not in t.tables:
        return {}, 0
    rows = t.sql("""
        WITH have AS (SELECT uid FROM events WHERE trace_id = 0 AND (kernel_flop IS NOT NULL OR kernel_num_gb IS NOT NULL)),
        k AS (SELECT uid, kernel_flop AS flop, kernel_bytes AS nbytes FROM kernel_perf WHERE trace_id = 0),
        o AS (SELECT DISTINCT p.uid, p.flops AS flop, p.bytes AS nbytes
              FROM op_perf p JOIN kernel_perf kp ON kp.trace_id = p.trace_id AND kp.op_uid = p.uid
              WHERE p.trace_id = 0)
        SELECT x.* FROM (SELECT * FROM k UNION ALL SELECT * FROM o) x ANTI JOIN have USING (uid)
        WHERE x.flop IS NOT NULL OR x.nbytes IS NOT NULL""")
    skipped = t.sql(
        "SELECT count(*) FROM events WHERE trace_id = 0 AND (kernel_flop IS NOT NULL OR kernel_num_gb IS NOT NULL)"
    ).item()
    values = {}
    for uid, flop, nbytes in rows.iter_rows():
        v = {}
        if flop is not None:
            v["kernel_flop"] = int(round(flop))
        if nbytes is not None:
            v["kernel_num_gb"] = _gb(nbytes)
        values[uid] = v
    return values, skipped


def _pid(pid, pid_str, device):
    """The pid the device's events sit on: their int pid, else their string pid, else the device id."""
    return pid if pid is not None else pid_str if pid_str is not None else device


# the pid and pid_str the device events of each (device, stream) of the trace sit on
_STREAM_PIDS = """SELECT k.device, k.stream, min(e.pid) AS pid, min(e.pid_str) AS pid_str
    FROM kernels k JOIN events e ON e.trace_id = k.trace_id AND e.uid = k.uid
    WHERE k.trace_id = 0 GROUP BY k.device, k.stream"""


def counter_events(t):
    """Chrome counter events ("ph": "C") on the pid of each device's events: the queue length of
    every stream (queue_depth: its value after the last change at each time, one track per stream,
    named "stream S queue" with series "length") and the copy bandwidth of every direction
    (memcpy_bandwidth, in GB/s = 1e9 bytes/s: one track per direction, named "memcpy HtoD", …
    or "memset", with series "GB/s"). Perfetto names a track "<name> <series>"."""
    queue = t.sql(f"""
        WITH pids AS ({_STREAM_PIDS})
        SELECT q.device, q.stream, p.pid, p.pid_str, q.ts_ns, arg_max(q.queue_depth, (q.delta, q.uid)) AS depth
        FROM queue_depth q JOIN pids p ON p.device IS NOT DISTINCT FROM q.device AND p.stream IS NOT DISTINCT FROM q.stream
        WHERE q.trace_id = 0
        GROUP BY q.device, q.stream, p.pid, p.pid_str, q.ts_ns
        ORDER BY q.device, q.stream, q.ts_ns""")
    bandwidth = t.sql(f"""
        WITH pids AS (SELECT device, min(pid) AS pid, min(pid_str) AS pid_str FROM ({_STREAM_PIDS}) GROUP BY device)
        SELECT b.device, b.direction, p.pid, p.pid_str, b.ts_ns, b.bytes_per_s
        FROM memcpy_bandwidth b JOIN pids p ON p.device IS NOT DISTINCT FROM b.device
        WHERE b.trace_id = 0
        ORDER BY b.device, b.direction, b.ts_ns""")
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
    if t.sql("select any_value(form) from traces").item() == rocprof.FORM:
        raise Unsupported(args.input, "augment rewrites Chrome-trace JSON (traceEvents); this is a rocprofv3 file")
    values, skipped = augment_values(t)
    counters, n_queue, series = counter_events(t) if args.counters else ([], 0, {})
    n = write_augmented(args.input, args.output, values, keep_secrets=args.keep_secrets, events=counters)
    kern = t.sql("select count(*) from kernels").item()
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
