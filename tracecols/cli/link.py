"""`tracecols link --et ET --kineto TRACE -o OUT`: Execution Trace <-> Kineto linking."""

import json
import sys
from pathlib import Path

import pyarrow as pa

from ..et import link as run_link
from ..printable import MESSAGE, printable
from ..store import parquet
from . import flags


def summary_table(s):
    cols = {k: [json.dumps(v) if isinstance(v, list) else v] for k, v in s.items()}
    return pa.table(cols)


def link(args):
    et, inputs, nodes, kernels, s = run_link(args.et, args.kineto, args.keep_secrets)
    out = Path(args.output)
    tables = {
        "et_nodes": nodes,
        "et_inputs": et["inputs"],
        "et_outputs": et["outputs"],
        "et_kernels": kernels,
        "et_link": summary_table(s),
    }
    ins = [{"path": et["path"], "size": et["size"], "sha256": et["sha256"], "kind": "execution_trace"}] + [
        dict(i, kind="kineto") for i in inputs
    ]
    parquet.write_dir(
        out, tables, parquet.manifest(tables, ins, layout="et_link", link=s, secrets_redacted=not args.keep_secrets)
    )
    plus = Path(args.et_plus) if args.et_plus else out / "et_plus.json"
    from ..store.et_json import write_et_plus

    write_et_plus(args.et, et["meta"], nodes, kernels, plus, keep_secrets=args.keep_secrets)

    def w(line):  # the ET's method, pids and paths come from the files
        sys.stdout.write(printable(line.rstrip("\n"), MESSAGE) + "\n")

    w(f"ET           {et['path']}  (schema {s['et_schema']}, {s['et_nodes']:,} nodes)\n")
    w(f"Kineto       {inputs[0]['path']}  ({s['kineto_ops']:,} cpu_op/user_annotation ops)\n")
    w(f"linked by    {s['method']}  — {s['why']}\n")
    w(
        f"matched      {s['matched']:,} of {s['et_ops']:,} ET ops  (match rate {100 * s['match_rate']:.2f}%)"
        f"; {100 * s['kineto_coverage']:.2f}% of the Kineto ops\n"
    )
    if s["name_mismatch"]:
        w(f"not linked   {s['name_mismatch']:,} id matches whose op names differ\n")
    if s["parent_consistent"] is not None:
        w(
            f"check        {100 * s['parent_consistent']:.2f}% of linked parent/child pairs are nested the same "
            f"way in the Kineto host tree\n"
        )
    if s["pid_match"] is False:
        w(
            f"warning      the ET's pid {s['et_pid']} is not a pid of the Kineto trace ({s['kineto_pids']}): "
            "are these two traces of the same process?\n"
        )
    w(f"kernels      {s['kernels_linked']:,} of {s['kernels']:,} device events under a linked op\n")
    w(f"wrote        {out}/ (et_nodes, et_inputs, et_outputs, et_kernels, et_link .parquet) and {plus}\n")
    w(f"time         {s['seconds']:.2f} s\n")
    return 0


def register(sub):
    s = sub.add_parser("link", help="link a PyTorch Execution Trace to its Kineto trace (ET+ JSON and Parquet)")
    s.add_argument("--et", required=True, help="the Execution Trace (.json / .json.gz)")
    s.add_argument("--kineto", required=True, help="the Kineto trace of the same run (.json / .json.gz)")
    s.add_argument("-o", "--output", required=True, help="output directory (Parquet tables + et_plus.json)")
    s.add_argument("--et-plus", help="write the ET+ JSON here instead of OUTPUT/et_plus.json (.gz to compress)")
    flags.keep_secrets(s)
    s.set_defaults(func=link)
