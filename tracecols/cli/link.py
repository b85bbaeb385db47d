"""`tracecols link --et ET --kineto TRACE -o OUT`: Execution Trace <-> Kineto linking."""

import sys

from ..et import save_link
from ..printable import MESSAGE, printable
from . import flags


def link(args):
    saved = save_link(args.et, args.kineto, args.output, et_plus=args.et_plus, keep_secrets=args.keep_secrets)
    s, out, plus = saved.summary, saved.directory, saved.et_plus
    et_path, kineto_path = saved.inputs[0]["path"], saved.inputs[1]["path"]

    def w(line):  # the ET's method, pids and paths come from the files
        sys.stdout.write(printable(line.rstrip("\n"), MESSAGE) + "\n")

    w(f"ET           {et_path}  (schema {s['et_schema']}, {s['et_nodes']:,} nodes)\n")
    w(f"Kineto       {kineto_path}  ({s['kineto_ops']:,} cpu_op/user_annotation ops)\n")
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
