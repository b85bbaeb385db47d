"""Record GPU traces and torch.profiler's own key_averages() of the same runs, on a CUDA machine.

    python make.py [OUTDIR [RECIPE ...]]     (torch with CUDA; one GPU)

A small decoder block (attention by scaled_dot_product_attention, an MLP, layer norms) is
profiled four ways, each written as a gzipped export_chrome_trace (after one profiled warm-up
step, see `steps`):

  eager_train.pt.trace.json.gz     three training steps (record_shapes, profile_memory,
                                   with_flops): CPU ops, kernels, memcpy/memset, [memory] events
  graph_replay.pt.trace.json.gz    five replays of a torch.cuda.CUDAGraph of the forward pass:
                                   every kernel is launched by one cudaGraphLaunch
  graph_capture.pt.trace.json.gz   the same forward pass profiled while it was captured (the
                                   capture trace tracecols --capture matches replays against)
  compiled.pt.trace.json.gz        five calls of torch.compile(mode="reduce-overhead"): Triton
                                   kernels replayed by CUDA graph trees
  stacks_infer.pt.trace.json.gz    forty inference steps of an eight-block model with with_stack
                                   and profile_memory: Python frames around every op, the
                                   frame-heavy shape of a real inference trace

key_averages.json holds, per trace, every row of `prof.key_averages()`: name, device type (CPU
for host events, CUDA for device ones), calls and the CPU and device times as torch computed
them from its in-memory events (µs, its floats). The tests compare tracecols' op_averages with
these rows: the expected numbers are the profiler's. RECIPE names the traces to record
(default: all); a key_averages.json already in OUTDIR keeps the rows of the others when the same
torch wrote it.
"""

import gzip
import json
import os
import shutil
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


# One profiled warm-up step before the recorded ones: CUPTI asks for its first activity buffer
# then, an "Activity Buffer Request" overhead event that torch's key_averages takes for a child
# of whatever op it interrupted (that op's self time drops by milliseconds).
def steps(n):
    return schedule(wait=0, warmup=1, active=n, repeat=1)


class Block(torch.nn.Module):
    def __init__(self, d=256, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


def model(blocks=2):
    torch.manual_seed(0)
    return torch.nn.Sequential(*[Block() for _ in range(blocks)]).cuda()


def rows(prof):
    def us(e, *names):
        for n in names:  # torch renamed cuda_* to device_* in 2.4
            if hasattr(e, n):
                return getattr(e, n)
        return None

    return [
        {
            "name": e.key,
            "device_type": str(e.device_type).rsplit(".", 1)[-1],  # CPU: a host event; CUDA: a device one
            "calls": e.count,
            "self_cpu_us": e.self_cpu_time_total,
            "cpu_total_us": e.cpu_time_total,
            "self_device_us": us(e, "self_device_time_total", "self_cuda_time_total"),
            "device_total_us": us(e, "device_time_total", "cuda_time_total"),
        }
        for e in prof.key_averages()
    ]


def save(prof, name, table):
    trace = os.path.join(OUT, f"{name}.pt.trace.json")
    prof.export_chrome_trace(trace)
    with open(trace, "rb") as f, open(trace + ".gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    os.unlink(trace)
    table[name] = rows(prof)
    print(f"{name}: {os.path.getsize(trace + '.gz')} bytes", flush=True)


def eager_train(table):
    m = model()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    batches = [torch.randn(8, 128, 256, device="cuda") for _ in range(6)]

    def step(x):
        loss = m(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for x in batches[:2]:  # warm-up: cuBLAS handles, allocator pools
        step(x)
    torch.cuda.synchronize()
    # no with_stack: torch's key_averages then takes Python frames for the ops' parents, and an
    # op's self time is its wall time less only the ops directly under it
    with profile(activities=ACTIVITIES, record_shapes=True, profile_memory=True, with_flops=True, schedule=steps(3)) as prof:
        for x in batches[2:]:
            with record_function("train_step"):
                step(x)
            torch.cuda.synchronize()
            prof.step()
    save(prof, "eager_train", table)


def graph_replay(table):
    m = model().eval()
    static = torch.randn(4, 64, 256, device="cuda")
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                m(static)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with profile(activities=ACTIVITIES, record_shapes=True) as prof:
            with torch.cuda.graph(graph):
                out = m(static)
            torch.cuda.synchronize()
        save(prof, "graph_capture", table)
        with profile(activities=ACTIVITIES, record_shapes=True, schedule=steps(5)) as prof:
            for i in range(6):
                static.copy_(torch.randn(4, 64, 256, device="cuda"))
                with record_function(f"decode_step_{i}"):
                    graph.replay()
                out.sum().item()
                prof.step()
        save(prof, "graph_replay", table)


def compiled(table):
    m = torch.compile(model().eval(), mode="reduce-overhead")
    x = torch.randn(4, 64, 256, device="cuda")
    with torch.no_grad():
        for _ in range(4):  # compile, record the CUDA graph tree, settle
            m(x)
        torch.cuda.synchronize()
        with profile(activities=ACTIVITIES, record_shapes=True, schedule=steps(5)) as prof:
            for i in range(6):
                with record_function(f"decode_step_{i}"):
                    m(x).sum().item()
                prof.step()
    save(prof, "compiled", table)


def stacks_infer(table):
    m = model(blocks=8).eval()
    x = torch.randn(4, 128, 256, device="cuda")
    with torch.no_grad():
        for _ in range(2):
            m(x)
        torch.cuda.synchronize()
        with profile(activities=ACTIVITIES, record_shapes=True, profile_memory=True, with_stack=True, schedule=steps(40)) as prof:
            for i in range(41):
                with record_function(f"infer_step_{i}"):
                    m(x).sum().item()
                prof.step()
    save(prof, "stacks_infer", table)


RECIPES = {"eager_train": eager_train, "graph_replay": graph_replay, "compiled": compiled, "stacks_infer": stacks_infer}


def main():
    if not torch.cuda.is_available():
        sys.exit("make.py records GPU traces: torch sees no CUDA device here")
    os.makedirs(OUT, exist_ok=True)
    names = sys.argv[2:] or list(RECIPES)
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        sys.exit(f"make.py: no recipe {', '.join(unknown)} (recipes: {', '.join(RECIPES)})")
    saved = os.path.join(OUT, "key_averages.json")
    table = {}
    if os.path.exists(saved):
        with open(saved) as f:
            old = json.load(f)
        if old.get("torch") == torch.__version__:  # rows of another torch are not kept beside these
            table = old["traces"]
    for name in names:
        try:
            RECIPES[name](table)
        except Exception as e:  # one recipe that this torch cannot run must not cost the others
            print(f"{name}: not recorded: {type(e).__name__}: {e}", flush=True)
    with open(saved, "w") as f:
        json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "traces": table}, f, indent=1)


if __name__ == "__main__":
    main()
