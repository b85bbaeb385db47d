"""Device work linked to its launch (`kernels`): coverage on the corpus, link rules, classes."""

import json

import pytest
from corpus_files import kineto_files, rel

import tracecols
from tracecols.model.kernels import classify

KINETO = kineto_files()

# Device events that cannot be linked because the trace holds no host event with their
# correlation id (the launch happened before the profiling window opened, or the file was
# trimmed), or because they carry no correlation at all. Anything else must link.
KNOWN_UNLINKED = {
    "HolisticTraceAnalysis/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz": 77,
    "HolisticTraceAnalysis/tests/data/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz": 1,
    "HolisticTraceAnalysis/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz": 322,
    "HolisticTraceAnalysis/tests/data/trace_compare/base/base.json.gz": 16,
    "HolisticTraceAnalysis/tests/data/trace_compare/test/test.json.gz": 16,
    "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz": 509,
    "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz": 968,
    "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json": 64,
    "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json": 64,
}


@pytest.mark.corpus
@pytest.mark.parametrize("path", KINETO, ids=[rel(p) for p in KINETO])
def test_every_kernel_links_unless_its_launch_is_missing(path):
    t = tracecols.open(path)
    n, unlinked, launch_missing, wrong = t.sql("""
        with host as (select trace_id, correlation from slices
                      where cat in ('cuda_runtime', 'cuda_driver') and correlation is not null)
        select count(*),
               count(*) filter (where k.launch_uid is null),
               count(*) filter (where k.launch_uid is null and (k.correlation is null or not exists
                   (select 1 from host h where h.trace_id = k.trace_id and h.correlation = k.correlation))),
               count(*) filter (where k.link = 'correlation' and l.correlation is distinct from k.correlation)
        from kernels k left join slices l on l.trace_id = k.trace_id and l.uid = k.launch_uid""").row(0)
    print(f"\n{rel(path)}: {n} device events, {unlinked} unlinked ({launch_missing} without a launch event)")
    assert wrong == 0
    assert unlinked == launch_missing, "a device event whose launch is in the trace was left unlinked"
    assert unlinked == KNOWN_UNLINKED.get(rel(path), 0)


@pytest.mark.corpus
@pytest.mark.parametrize(
    "path",
    [p for p in KINETO if "dlrm_kineto/worker0" in str(p) or "bert-small" in str(p) or "resnet50_num_workers_0" in str(p)],
    ids=rel,
)
def test_links_agree_with_flow_arrows(path):
    """Where an ac2g arrow starts on the launch and ends on the kernel, the link says the same."""
    t = tracecols.open(path)
    n, disagree = t.sql("""
        select count(*), count(*) filter (where l.uid is distinct from k.launch_uid)
        from flows f
        join events fs on fs.trace_id = f.trace_id and fs.uid = f.src_uid
        join events fd on fd.trace_id = f.trace_id and fd.uid = f.dst_uid
        join kernels k on k.trace_id = f.trace_id and k.pid = fd.pid and k.tid is not distinct from fd.tid
                     and k.ts_ns = fd.ts_ns
                     and k.uid in (select uid from events e where e.tid_str is not distinct from fd.tid_str)
        join slices l on l.trace_id = f.trace_id and l.pid = fs.pid and l.tid = fs.tid and l.ts_ns = fs.ts_ns
                     and l.cat in ('cuda_runtime', 'cuda_driver')
        where f.cat = 'ac2g'""").row(0)
    assert n > 0 and disagree == 0


@pytest.mark.corpus
def test_graph_launch_owns_all_its_kernels():
    path = next(p for p in KINETO if "vllm_decode_full/graph_execution" in str(p))
    t = tracecols.open(path)
    per = t.sql("""select l.name, k.launch_uid, count(*) n from kernels k join slices l on l.uid = k.launch_uid
                   where l.name in ('cudaGraphLaunch', 'hipGraphLaunch') group by all""")
    assert per.height >= 1 and per["n"].max() > 10
    # every kernel sharing a graph launch's correlation is owned by it
    left = t.sql("""select count(*) from kernels k join slices l on l.correlation = k.correlation
                    where l.name in ('cudaGraphLaunch', 'hipGraphLaunch') and k.launch_uid is distinct from l.uid""")
    assert left.item() == 0


@pytest.mark.corpus
def test_op_uid_is_nearest_cpu_op_above_the_launch():
    path = next(p for p in KINETO if "bert-small" in str(p))
    t = tracecols.open(path)
    sl = {r["uid"]: r for r in t.table("slices").to_pylist()}
    ks = t.table("kernels").to_pylist()
    checked = 0
    for k in ks:
        if k["launch_uid"] is None:
            continue
        chain, u = [], sl[k["launch_uid"]]["parent_uid"]
        while u is not None:
            chain.append(sl[u])
            u = sl[u]["parent_uid"]
        ops = [c["uid"] for c in chain if c["cat"] == "cpu_op"]
        assert k["op_uid"] == (ops[0] if ops else None)
        assert k["top_op_uid"] == (ops[-1] if ops else None)
        checked += 1
    assert checked == len(ks)


def _write(tmp_path, events, name="t.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return str(p)


def _x(name, cat, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def test_correlation_never_links_across_processes(tmp_path):
    ev = [
        _x("aten::mm", "cpu_op", 100, 1, 0, 50),
        _x("cudaLaunchKernel", "cuda_runtime", 100, 1, 10, 5, correlation=7),
        _x("aten::mm", "cpu_op", 200, 1, 0, 50),
        _x("cudaLaunchKernel", "cuda_runtime", 200, 1, 12, 5, correlation=7),
        _x("gemm_kernel", "kernel", 0, 7, 30, 10, correlation=7, device=0, stream=7),
        _x("other_kernel", "kernel", 0, 7, 60, 10, correlation=9, device=0, stream=7),
        _x("cudaLaunchKernel", "cuda_runtime", 100, 1, 20, 5, correlation=9),
    ]
    t = tracecols.open(_write(tmp_path, ev))
    rows = {r["name"]: r for r in t.table("kernels").to_pylist()}
    assert rows["gemm_kernel"]["launch_uid"] is None  # id 7 lives in two processes
    assert rows["other_kernel"]["launch_uid"] == 6
    assert rows["other_kernel"]["op_uid"] == 0


def test_flow_resolves_what_correlation_cannot(tmp_path):
    ev = [
        _x("cudaLaunchKernel", "cuda_runtime", 100, 1, 10, 5, correlation=7),
        _x("cudaLaunchKernel", "cuda_runtime", 200, 1, 12, 5, correlation=7),
        _x("gemm_kernel", "kernel", 0, 7, 30, 10, correlation=7),
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 200, "tid": 1, "ts": 12},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 0, "tid": 7, "ts": 30, "bp": "e"},
    ]
    t = tracecols.open(_write(tmp_path, ev))
    (k,) = t.table("kernels").to_pylist()
    assert (k["launch_uid"], k["link"]) == (1, "flow")


@pytest.mark.parametrize(
    "name,cat,cls",
    [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "kernel", "communication"),
        ("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", "kernel", "communication"),
        ("void rccl_main_kernel<1>(ncclDevComm*)", "kernel", "communication"),
        ("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", "memcpy"),
        ("Memset (Device)", "gpu_memset", "memset"),
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "kernel", "gemm"),
        ("Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1", "kernel", "gemm"),
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(Params)", "kernel", "gemm"),
        ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128>>(Flash_fwd_params)", "kernel", "attention"),
        ("void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true>", "kernel", "conv"),
        ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", "kernel", "norm"),
        ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", "kernel", "reduction"),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", "kernel", "elementwise"),
        ("triton_poi_fused_add_0", "kernel", "elementwise"),
        ("triton_red_fused_mean_1", "kernel", "reduction"),
        ("some_custom_thing", "kernel", "other"),
    ],
)
def test_kernel_class(name, cat, cls):
    assert classify([name], [cat]) == [cls]


def test_each_kernel_gets_the_class_of_its_name_and_category(tmp_path):
    # the classes are worked out once per distinct (name, category): repeats, a name shared by
    # two categories and an unnamed event must each still get their own row's class
    ev = [
        _x("ncclKernel_AllReduce", "kernel", 0, 7, 10, 5),
        _x("gemm_kernel", "kernel", 0, 7, 20, 5),
        _x("ncclKernel_AllReduce", "kernel", 0, 7, 30, 5),
        _x("Memcpy HtoD", "gpu_memcpy", 0, 7, 40, 5),
        _x("Memcpy HtoD", "kernel", 0, 7, 50, 5),
        {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 60, "dur": 5},
        _x("gemm_kernel", "kernel", 0, 7, 70, 5),
    ]
    t = tracecols.open(_write(tmp_path, ev))
    got = [(r["uid"], r["kernel_class"]) for r in t.table("kernels").to_pylist()]
    assert got == [
        (0, "communication"),
        (1, "gemm"),
        (2, "communication"),
        (3, "memcpy"),
        (4, "memcpy"),
        (5, "other"),
        (6, "gemm"),
    ]


def test_among_launches_of_one_correlation_the_runtime_call_wins_then_the_earliest(tmp_path):
    ev = [
        _x("cuLaunchKernel", "cuda_driver", 100, 1, 10, 2, correlation=5),
        _x("cudaLaunchKernel", "cuda_runtime", 100, 1, 30, 2, correlation=5),
        _x("cudaLaunchKernel", "cuda_runtime", 100, 1, 20, 2, correlation=5),
        _x("cuLaunchKernel", "cuda_driver", 100, 1, 50, 2, correlation=6),
        _x("cuLaunchKernel", "cuda_driver", 100, 1, 40, 2, correlation=6),
        _x("k5", "kernel", 0, 7, 60, 10, correlation=5, device=0, stream=7),
        _x("k6", "kernel", 0, 7, 80, 10, correlation=6, device=0, stream=7),
    ]
    t = tracecols.open(_write(tmp_path, ev))
    rows = {r["name"]: (r["launch_uid"], r["link"]) for r in t.table("kernels").to_pylist()}
    assert rows == {"k5": (2, "correlation"), "k6": (4, "correlation")}
