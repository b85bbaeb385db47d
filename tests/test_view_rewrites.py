"""Views rewritten for speed, each checked against a plain formulation on the real traces
where the slow shape occurs (deep Python stacks, many frames per op)."""

import math
import re
from pathlib import Path

import pytest
from conftest import CORPUS

import tracecols

pytestmark = pytest.mark.corpus

FRAME_HEAVY = [
    "TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "TraceLens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
]
_SOURCE = re.compile(r"\.py\(.*\)")


@pytest.fixture(scope="module", params=FRAME_HEAVY, ids=lambda p: p.split("/")[-1][:24])
def frame_heavy(request):
    return tracecols.open(CORPUS / request.param)


def test_optimizable_ops_source_is_the_nearest_enclosing_frame(frame_heavy):
    """source = walk up parent_uid from the op to the first python_function named file.py(line)."""
    t = frame_heavy
    parent, name, cat = {}, {}, {}
    for r in t.sql("select uid, parent_uid, name, cat from slices").iter_rows():
        parent[r[0]], name[r[0]], cat[r[0]] = r[1], r[2], r[3]

    def walk(uid):
        u = parent[uid]
        while u is not None:
            if cat[u] == "python_function" and _SOURCE.search(name[u]):
                return name[u]
            u = parent[u]
        return None

    rows = t.sql("select uid, source from optimizable_ops").rows()
    assert rows, "the trace has candidates: the check must compare something"
    assert sum(s is not None for _, s in rows) > 0
    assert [s for _, s in rows] == [walk(u) for u, _ in rows]


# Views rewritten for speed (docs/performance.md), each against its plain formulation
# (plain_views.py) on the traces where the slow shape occurs: deep Python stacks (stacks, and
# memory_timeline under its memory events), many user annotations (_op_time, _annotations), many steps
# (inference_steps; the corpus has few, the join was quadratic in them), nn.Module frames
# nested deep (tracelens_ops_summary), ops of every perf model (op_perf), evidence under deep Python
# stacks (findings), …
DEEP_STACKS = [
    "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "TraceLens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "generated/cpu_train_step.pt.trace.json.gz",
]
# torch 2.11 on an H100, with_stack and profile_memory: 28k Python frames 21 deep, 10k [memory] events
H100_STACKS = str(Path(__file__).parent / "data" / "h100" / "stacks_infer.pt.trace.json.gz")
DF_INDEX = "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz"  # 2,035 annotations
MTIA = "HolisticTraceAnalysis/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz"  # 1,696
VLLM_CAPTURE = (
    "TraceLens/tests/traces/inference/vllm_decode_full/capture_traces/"
    "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"
)  # 70 levels, 1,184 [memory]
SGLANG_CAPTURE = "TraceLens/tests/traces/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz"  # 62 levels
REWRITTEN = {
    "memory_timeline": DEEP_STACKS + [DF_INDEX, VLLM_CAPTURE, H100_STACKS],
    # host annotations only (DF_INDEX), both sides, few (train_resnet18, normalization_layer_test)
    "_annotations": [
        DF_INDEX,
        "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
        "TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz",
    ],
    "_op_time": [
        DF_INDEX,
        MTIA,
        "param/et_replay/tests/inputs/linear_kineto.json.gz",
        "generated/cpu_train_step.pt.trace.json.gz",
        H100_STACKS,
    ],
    "stacks": DEEP_STACKS + [SGLANG_CAPTURE, H100_STACKS],
    # cpu_train_step has no device; linear_kineto has no Python frames (no source to find)
    "optimizable_ops": DEEP_STACKS[:2] + [DF_INDEX, "param/et_replay/tests/inputs/linear_kineto.json.gz"],
    "inference_steps": [
        DF_INDEX,
        "TraceLens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
    ],
    "tracelens_ops_summary": DEEP_STACKS[:2] + [DF_INDEX],
    # findings whose evidence ran under Python frames, torch's own among them
    "findings": DEEP_STACKS[:2] + [H100_STACKS],
    # a long path of host calls (DF_INDEX), DataLoader annotations (the kineto samples, rank_not_found)
    "critical_path": [
        DF_INDEX,
        "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "HolisticTraceAnalysis/tests/data/rank_unavailable/rank_not_found.json.gz",
    ],
    # no Python frames (DF_INDEX), frames and modules above the ops, graph replay
    "op_gpu_time": [
        DF_INDEX,
        DEEP_STACKS[0],
        "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
    ],
    # every model: gemm, conv fwd and bwd, sdpa fwd and bwd, elementwise, norm
    "op_perf": [
        "generated/cpu_train_step.pt.trace.json.gz",
        "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz",
        "TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    ],
}
_opened = {}


def _open(path):
    if path not in _opened:
        _opened.clear()  # one trace held at a time: the cases are grouped by trace
        _opened[path] = tracecols.open(CORPUS / path)
    return _opened[path]


def _rows(table):
    """The rows of an Arrow table as tuples, in a fixed order: by their values, floats rounded
    (DuckDB sums in parallel, so a float's last digits can differ between two runs of one query)."""

    def key(row):
        return repr(tuple(round(v, 6) if isinstance(v, float) else v for v in row))

    return sorted(zip(*[c.to_pylist() for c in table.columns]), key=key)


def _same(a, b):
    """Equal rows, floats to 1e-9 relative (and nan with nan)."""

    def eq(x, y):
        if isinstance(x, float) and isinstance(y, float):
            return x == y or math.isclose(x, y, rel_tol=1e-9) or (math.isnan(x) and math.isnan(y))
        return x == y

    return len(a) == len(b) and all(len(r) == len(q) and all(map(eq, r, q)) for r, q in zip(a, b))


@pytest.mark.parametrize(
    "trace, view", sorted((t, v) for v, ts in REWRITTEN.items() for t in ts), ids=lambda x: x.split("/")[-1][:24]
)
def test_rewritten_view_gives_the_rows_of_its_plain_formulation(trace, view):
    from plain_views import AS_PLAIN, PLAIN

    t = _open(trace)
    new = t.arrow(f"SELECT * FROM {view}")
    if view in AS_PLAIN:
        new = AS_PLAIN[view](new)
    old = t.arrow(PLAIN[view])
    assert new.num_rows > 0, "the trace must have rows for the comparison to mean something"
    assert new.schema == old.schema
    a, b = _rows(new), _rows(old)
    assert _same(a, b), next(((r, q) for r, q in zip(a, b) if not _same([r], [q])), (len(a), len(b)))
