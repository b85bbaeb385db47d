"""Write the linked Execution Trace ("ET+"): the ET's own nodes, as read, with the Kineto timing
of each linked node, and one child node per GPU kernel / memcpy / memset it launched.

The shape is the one Chakra's converter reads: a linked host node gains `ts`, `inclusive_dur`
and `exclusive_dur` (microseconds, the Kineto clock, exact decimals); a GPU node is a copy of its
host node (so it keeps the host's inputs, outputs and attrs) with a new `id`, its parent key
(`ctrl_deps`, or `parent` in schema 1.0.1) set to the host node's id, and `cat`, `ph`, `name`,
`ts`, `inclusive_dur`, `exclusive_dur` and `stream` of the device event. Host node ids are kept;
GPU nodes are numbered after the largest id of the ET. Every other value is written as parsed
(numbers keep their decimal text), but for secrets, redacted unless the caller keeps them.
"""

from pathlib import Path

import pyarrow as pa

from ..model.secrets import has_candidate, redact
from ..read import jsontext
from ..read.kineto import CHUNK
from ..read.restore import us
from ..read.source import Source
from ..read.toplevel import ijson_backend
from .atomic import atomic_output


def write_et_plus(et_path, meta, nodes, kernels, out_path, keep_secrets=False):
    """Stream `et_path` again and write the ET+ to `out_path` (.json or .json.gz), atomically.

    nodes: et_nodes with the link columns (Arrow); kernels: et_kernels (Arrow); `meta`: the
    top-level keys to write (already redacted, or not, by the caller). A node's secrets are
    redacted (model/secrets.py) unless `keep_secrets`.
    """
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    nd = nodes.select(["node_id", "ts_ns", "dur_ns", "exclusive_ns"]).to_pydict()
    timing = {n: (t, d, x) for n, t, d, x in zip(nd["node_id"], nd["ts_ns"], nd["dur_ns"], nd["exclusive_ns"]) if t is not None}
    kids: dict[int, list[int]] = {}
    kd = kernels.to_pydict() if isinstance(kernels, pa.Table) else kernels
    for i, node_id in enumerate(kd["node_id"]):
        kids.setdefault(node_id, []).append(i)
    next_id = max((n for n in nd["node_id"] if n is not None), default=0) + 1
    with atomic_output(out) as f:
        f.write(b"{")
        for key, value in meta.items():
            f.write((jsontext.dumps(str(key)) + ": " + jsontext.dumps(value) + ", ").encode())
        f.write(b'"nodes": [')
        first = True
        with Source(et_path).stream() as src:
            for node in ijson_backend().items(src, "nodes.item", buf_size=CHUNK):
                node_id = node.get("id")
                t = timing.get(node_id)
                if t is not None:
                    node["ts"] = us(t[0])
                    node["inclusive_dur"] = us(t[1])
                    node["exclusive_dur"] = us(t[2])
                text = jsontext.dumps(node)
                if not keep_secrets and has_candidate(text):  # the GPU nodes below copy it
                    node = redact(node)
                    text = jsontext.dumps(node)
                f.write((b"" if first else b",\n") + text.encode())
                first = False
                parent_key = "parent" if "parent" in node and "ctrl_deps" not in node else "ctrl_deps"
                for i in kids.get(node_id, ()):
                    g = dict(node)
                    g.update(
                        {
                            "id": next_id,
                            parent_key: node_id,
                            "cat": kd["cat"][i],
                            "ph": "X",
                            "name": kd["name"][i],
                            "ts": us(kd["ts_ns"][i]),
                            "inclusive_dur": us(kd["dur_ns"][i] or 0),
                            "exclusive_dur": us(kd["dur_ns"][i] or 0),
                            "stream": kd["stream"][i],
                        }
                    )
                    next_id += 1
                    f.write(b",\n" + jsontext.dumps(g).encode())
        f.write(b"]}\n")
    return out
