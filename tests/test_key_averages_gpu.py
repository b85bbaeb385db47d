"""op_averages against torch.profiler's own key_averages() on GPU traces recorded on an H100.

tests/data/h100/make.py recorded them with torch 2.11 (CUDA 13) and saved, from the same runs,
every row of `prof.key_averages()`: the expected numbers are torch's, computed from its
in-memory events. Host rows (device type CPU) are compared; torch's table also has a row per
kernel name, which op_averages (host events) does not.

Where graphs replay, torch and tracecols give the replayed kernels to different events, and
the tests say exactly how: a hand-captured torch.cuda.CUDAGraph's kernels reach no host event
in torch's table (its device columns miss them); under torch.compile(mode="reduce-overhead")
torch gives them to "Torch-Compiled Region" as its self device time, tracecols to the replay's
own op beneath the cudaGraphLaunch (docs/graphs.md). Every other number is torch's.
"""

import json
from pathlib import Path

import pytest

import tracecols

HERE = Path(__file__).parent / "data" / "h100"
EXPECTED = json.loads((HERE / "key_averages.json").read_text())
COLS = (("calls", "calls"), ("self_cpu_ns", "self_cpu_us"), ("cpu_total_ns", "cpu_total_us"))
DEVICE_COLS = (("self_device_ns", "self_device_us"), ("device_total_ns", "device_total_us"))


def _close(ns, us, calls):
    """Our ns against torch's µs float: the trace writes each event to the ns."""
    return abs(ns / 1000 - us) <= 0.001 * calls + 1e-9


def _open(name):
    return tracecols.open(HERE / f"{name}.pt.trace.json.gz")


def _ours(t):
    rows = {}
    for r in t.sql("select * from op_averages").to_dicts():
        assert r["name"] not in rows, r  # one category per name in these traces
        rows[r["name"]] = r
    return rows


def _host(name):
    return [r for r in EXPECTED["traces"][name] if r["device_type"] == "CPU"]


def _graph_path(t):
    """Names of the events at or above a graph launch: where the replayed kernels' time goes."""
    return {
        "ProfilerStep*" if r["name"].startswith("ProfilerStep#") else r["name"]
        for r in t.sql(
            """select a.name from slices g join slices a
               on a.trace_id = g.trace_id and a.pre <= g.pre and g.pre <= a.subtree_end
               where g.name = 'cudaGraphLaunch' and a.uid >= 0"""
        ).to_dicts()
    }


def _check(ours, row, cols):
    o = ours[row["name"]]
    for mine, theirs in cols:
        if mine == "calls":
            assert o["calls"] == row["calls"], (row, o)
        else:
            assert _close(o[mine], row[theirs], row["calls"]), (mine, row, o)


def test_the_recording_is_what_the_comparison_needs():
    assert EXPECTED["torch"].startswith("2.11") and "H100" in EXPECTED["device"]
    assert set(EXPECTED["traces"]) == {"eager_train", "graph_capture", "graph_replay", "compiled", "stacks_infer"}
    eager = {r["name"]: r for r in _host("eager_train")}
    assert eager["aten::addmm"]["self_device_us"] > 0 and eager["aten::mm"]["calls"] > 0  # forward and backward
    # the torch rule op_averages follows: an only child of its own name folds into its parent
    t = _open("eager_train")
    folded = t.sql(
        """select c.name from slices c join slices p on p.trace_id = c.trace_id and p.uid = c.parent_uid
           where p.n_children = 1 and p.name = c.name and c.cat = 'cpu_op'"""
    ).to_series()
    assert {"aten::mean", "aten::div"} <= set(folded)


def test_every_host_row_of_an_eager_training_trace():
    t = _open("eager_train")
    ours = _ours(t)
    rows = _host("eager_train")
    assert len(rows) > 80
    assert set(ours) == {r["name"] for r in rows}
    for row in rows:
        _check(ours, row, COLS + DEVICE_COLS)


def test_a_trace_with_python_stacks_agrees_but_in_the_annotations_self_time():
    """with_stack: 28k Python frames around the ops of forty inference steps. torch's table
    leaves Python frames out and, with them, some of the time under an annotation: its self CPU
    of ProfilerStep* and of the infer_step_N annotations is the wall time less only some of the
    children (1.0-2.6 ms against tracecols' 0.02-0.1 ms, the Python frames' own time). Every
    other number of every row, and the self CPU of every op and runtime call, is torch's."""
    t = _open("stacks_infer")
    assert t.sql("select count(*) from slices where cat = 'python_function'").item() > 20_000
    ours = _ours(t)
    rows = _host("stacks_infer")
    assert len(rows) > 60 and set(ours) == {r["name"] for r in rows}
    annotations = {r["name"] for r in t.sql("select distinct name from op_averages where cat = 'user_annotation'").to_dicts()}
    assert annotations == {"ProfilerStep*"} | {f"infer_step_{i}" for i in range(1, 41)}
    for row in rows:
        cols = COLS + DEVICE_COLS
        if row["name"] in annotations:
            cols = tuple(c for c in cols if c[0] != "self_cpu_ns")
            assert ours[row["name"]]["self_cpu_ns"] < row["self_cpu_us"] * 1000  # torch's is the larger
        _check(ours, row, cols)


@pytest.mark.parametrize("name", ["graph_replay", "compiled"])
def test_graph_replays_agree_off_the_graph_and_in_cpu_time(name):
    t = _open(name)
    ours = _ours(t)
    rows = _host(name)
    on_path = _graph_path(t)
    assert {"cudaGraphLaunch", "ProfilerStep*"} <= on_path
    # tracecols' one extra row: the replay's own op beneath each launch (docs/graphs.md)
    assert set(ours) - {r["name"] for r in rows} == {"graph replay @ cudaGraphLaunch"}
    assert {r["name"] for r in rows} <= set(ours)
    for row in rows:
        _check(ours, row, COLS if row["name"] in on_path else COLS + DEVICE_COLS)


@pytest.mark.parametrize("name", ["graph_replay", "compiled"])
def test_where_the_replayed_kernels_go(name):
    t = _open(name)
    ours = _ours(t)
    rows = _host(name)
    replayed = t.sql(
        """select sum(k.dur_ns)::BIGINT from kernels k join slices l on l.trace_id = k.trace_id and l.uid = k.launch_uid
           where l.name = 'cudaGraphLaunch'"""
    ).item()
    every = t.sql("select sum(dur_ns)::BIGINT from kernels").item()
    assert replayed > 0.8 * every  # graph-bound: most device time is replayed
    # tracecols gives every device event one owner; the replayed ones to the replay's op
    assert sum(r["self_device_ns"] for r in ours.values()) == every
    assert ours["graph replay @ cudaGraphLaunch"]["self_device_ns"] == replayed
    torch_owned = sum(r["self_device_us"] for r in rows)
    if name == "graph_replay":  # torch's table: a captured graph's kernels reach no host event
        assert _close(every - replayed, torch_owned, len(rows))
    else:  # torch.compile's graph trees: torch gives them to the compiled region itself
        assert _close(every, torch_owned, len(rows))
        region = next(r for r in rows if r["name"].startswith("Torch-Compiled Region"))
        assert _close(replayed, region["self_device_us"], region["calls"])


def test_replays_take_their_ops_from_the_capture_trace():
    """With the trace profiled while the graph was captured, each replay's kernels go to the
    captured ops: five replays of one captured forward give five times its calls, and every
    replayed kernel's time reaches an op."""
    t = tracecols.open(HERE / "graph_replay.pt.trace.json.gz", capture=HERE / "graph_capture.pt.trace.json.gz")
    assert t.sql("select count(*), sum(candidates) from graph_replays where matched").row(0) == (5, 5)
    ours = _ours(t)
    captured = {r["name"]: r["calls"] for r in _host("graph_capture")}
    for op in ("aten::addmm", "aten::layer_norm", "aten::gelu", "aten::scaled_dot_product_attention"):
        assert ours[op]["calls"] == 5 * captured[op], op
    every = t.sql("select sum(dur_ns)::BIGINT from kernels").item()
    owned = t.sql("select sum(self_device_ns)::BIGINT from op_averages where cat = 'cpu_op'").item()
    assert owned == every
    assert "graph replay @ cudaGraphLaunch" not in ours
