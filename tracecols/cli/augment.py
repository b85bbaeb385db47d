"""`tracecols augment IN OUT[.gz]`: the trace with `kernel_flop` / `kernel_num_gb` args, for Perfetto."""
import sys
from decimal import Decimal

from ..store.augment import write_augmented
from ..trace import open as open_trace
from . import flags

ARGS = ("kernel_flop", "kernel_num_gb")


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
    skipped = t.sql("SELECT count(*) FROM events WHERE trace_id = 0 AND "
                    "(kernel_flop IS NOT NULL OR kernel_num_gb IS NOT NULL)").item()
    values = {}
    for uid, flop, nbytes in rows.iter_rows():
        v = {}
        if flop is not None:
            v["kernel_flop"] = int(round(flop))
        if nbytes is not None:
            v["kernel_num_gb"] = _gb(nbytes)
        values[uid] = v
    return values, skipped


def augment(args):
    t = open_trace(args.input, keep_secrets=args.keep_secrets)
    if len(t.inputs) != 1:
        raise SystemExit("tracecols augment: give one trace file")
    values, skipped = augment_values(t)
    n = write_augmented(args.input, args.output, values, keep_secrets=args.keep_secrets)
    kern = t.sql("select count(*) from kernels").item()
    sys.stdout.write(f"wrote {args.output}: kernel_flop / kernel_num_gb on {n:,} events "
                     f"({kern:,} device events in the trace)"
                     + (f"; {skipped:,} events already had them and were left as they were" if skipped else "")
                     + "\n")
    return 0


def register(sub):
    s = sub.add_parser("augment", help="write the trace with kernel_flop / kernel_num_gb args on kernels and their ops")
    s.add_argument("input", help="trace file (.json / .json.gz)")
    s.add_argument("output", help="output trace (.json, or .json.gz to compress)")
    flags.keep_secrets(s)
    s.set_defaults(func=augment)
