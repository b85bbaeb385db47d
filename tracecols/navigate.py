"""Walking the host tree of an opened trace: `Trace.tree` (subtree, ancestors, printing).

Device events hang under the launch call that launched them, one level below it.
"""

import json
import sys

import polars as pl

from .errors import QueryError
from .printable import printable
from .read.schema import PROMOTED

_ARG_COLUMN = {key: col for key, col, _ in PROMOTED}
_NODE_COLS = ["uid", "kind", "cat", "name", "depth", "ts_ns", "dur_ns"]


class TreeView:
    """Navigation over the `slices` and `kernels` tables of a Trace."""

    def __init__(self, trace):
        self._t = trace
        self._sl = None
        self._k = None

    def _load(self):
        if self._sl is None:
            self._sl = self._t.sql("select * from slices")
            self._k = self._t.sql("select trace_id, uid, cat, name, ts_ns, dur_ns, launch_uid from kernels")
        return self._sl, self._k

    def _slice(self, uid, trace_id):
        sl, _ = self._load()
        row = sl.filter((pl.col("trace_id") == trace_id) & (pl.col("uid") == uid))
        return row.row(0, named=True) if row.height else None

    def _kernel(self, uid, trace_id):
        _, k = self._load()
        row = k.filter((pl.col("trace_id") == trace_id) & (pl.col("uid") == uid))
        return row.row(0, named=True) if row.height else None

    def _missing(self, uid):
        raise QueryError(self._t.origin, f"no host slice or device event with uid {uid}")

    def subtree(self, uid, trace_id=0):
        """The node and everything beneath it, in pre-order, as a polars DataFrame.

        Columns: uid, kind ('slice' or 'kernel'), cat, name, depth (0 = the node itself),
        ts_ns, dur_ns. Device events follow their launch call, one level deeper.
        """
        sl, k = self._load()
        node = self._slice(uid, trace_id)
        if node is None:
            kn = self._kernel(uid, trace_id)
            if kn is None:
                self._missing(uid)
            return pl.DataFrame(
                [{**{c: kn[c] for c in ("uid", "cat", "name", "ts_ns", "dur_ns")}, "kind": "kernel", "depth": 0}]
            ).select(_NODE_COLS)
        s = sl.filter((pl.col("trace_id") == trace_id) & pl.col("pre").is_between(node["pre"], node["subtree_end"])).select(
            "uid",
            pl.lit("slice").alias("kind"),
            "cat",
            "name",
            (pl.col("depth") - node["depth"]).alias("depth"),
            "ts_ns",
            "dur_ns",
            pl.col("pre").alias("_o1"),
            pl.lit(0).alias("_o2"),
        )
        kk = (
            k.filter(pl.col("trace_id") == trace_id)
            .join(s.select(pl.col("uid").alias("launch_uid"), pl.col("depth").alias("_ld"), "_o1"), on="launch_uid", how="inner")
            .select(
                "uid",
                pl.lit("kernel").alias("kind"),
                "cat",
                "name",
                (pl.col("_ld") + 1).alias("depth"),
                "ts_ns",
                "dur_ns",
                "_o1",
                pl.lit(1).alias("_o2"),
            )
        )
        out = pl.concat([s, kk], how="vertical_relaxed").sort(["_o1", "_o2", "ts_ns", "uid"])
        return out.select(_NODE_COLS)

    def ancestors(self, uid, trace_id=0):
        """The chain from the root down to the node's parent (a device event's parent is its launch call)."""
        sl, _ = self._load()
        node = self._slice(uid, trace_id)
        chain = []
        if node is None:
            kn = self._kernel(uid, trace_id)
            if kn is None:
                self._missing(uid)
            u = kn["launch_uid"]
        else:
            u = node["parent_uid"]
        while u is not None:
            r = self._slice(u, trace_id)
            chain.append(r)
            u = r["parent_uid"]
        chain.reverse()
        rows = [
            {
                "uid": r["uid"],
                "kind": "slice",
                "cat": r["cat"],
                "name": r["name"],
                "depth": i,
                "ts_ns": r["ts_ns"],
                "dur_ns": r["dur_ns"],
            }
            for i, r in enumerate(chain)
        ]
        return pl.DataFrame(
            rows,
            schema={
                "uid": pl.Int64,
                "kind": pl.String,
                "cat": pl.String,
                "name": pl.String,
                "depth": pl.Int64,
                "ts_ns": pl.Int64,
                "dur_ns": pl.Int64,
            },
        )

    def _fields(self, uids, fields, trace_id):
        if not fields or not uids:
            return {}
        cols = sorted({_ARG_COLUMN[f] for f in fields if f in _ARG_COLUMN})
        sel = ", ".join(["uid", "args"] + cols)
        ids = ", ".join(str(int(u)) for u in uids)
        df = self._t.sql(f"select {sel} from events where trace_id = {int(trace_id)} and uid in ({ids})")
        out = {}
        for r in df.iter_rows(named=True):
            args = json.loads(r["args"]) if r["args"] else {}
            vals = {}
            for f in fields:
                v = r.get(_ARG_COLUMN[f]) if f in _ARG_COLUMN else None
                if v is None:
                    v = args.get(f)
                if v is not None:
                    vals[f] = v
            out[r["uid"]] = vals
        return out

    @staticmethod
    def _line(r, indent, extra):
        dur = f"  {r['dur_ns'] / 1000:.3f} µs" if r["kind"] == "kernel" and r["dur_ns"] is not None else ""
        text = f"{'  ' * indent}UID {r['uid']} [{printable(r['cat'], 80)}] {printable(r['name'])}{dur}"
        for k, v in extra.items():
            text += f"\n{'  ' * indent}    {k}: {printable(v)}"
        return text

    def print_subtree(self, uid, fields=(), trace_id=0, file=None):
        """Print the node and its subtree as an indented tree (UID, category, name, kernel durations)."""
        file = file or sys.stdout
        df = self.subtree(uid, trace_id)
        extra = self._fields(list(df["uid"]), tuple(fields), trace_id)
        for r in df.iter_rows(named=True):
            print(self._line(r, r["depth"], extra.get(r["uid"], {}) if r["kind"] == "slice" else {}), file=file)

    def print_parents(self, uid, fields=("Input Dims", "Input type"), trace_id=0, file=None):
        """Print the chain from the root down to the node, with the given args of each op."""
        file = file or sys.stdout
        anc = self.ancestors(uid, trace_id)
        me = self.subtree(uid, trace_id).head(1)
        df = pl.concat([anc, me.with_columns(pl.lit(anc.height, pl.Int64).alias("depth"))], how="vertical_relaxed")
        extra = self._fields(list(df["uid"]), tuple(fields), trace_id)
        for r in df.iter_rows(named=True):
            print(self._line(r, r["depth"], extra.get(r["uid"], {}) if r["kind"] == "slice" else {}), file=file)
