"""Record runs of one small training job to compare, on a CUDA machine.

    python make.py [OUTDIR]     (torch with CUDA; one GPU)

A decoder block (attention by scaled_dot_product_attention, an MLP, layer norms) trains for
24 profiled ProfilerSteps (10 for the DDP ranks) (after warm-up and one profiled warm-up step), written as gzipped
export_chrome_trace files:

  base_a.pt.trace.json.gz    float32 matrix products as torch does them by default
  base_b.pt.trace.json.gz    the same job again, in a fresh profiler session: a second sample
                             of the same configuration (what a comparison must call unchanged)
  tf32.pt.trace.json.gz      the same job with TF32 matrix products allowed: other GEMM kernels
                             (other names), faster; the ops above them are the same
  ddp_rank0.pt.trace.json.gz two ranks of DistributedDataParallel over gloo on one GPU: each
  ddp_rank1.pt.trace.json.gz step's gradients all-reduced, the collectives recorded by both
                             ranks (process group, sequence numbers as this torch writes them)
"""

import gzip
import importlib.util
import os
import shutil
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, schedule

# the decoder block of tests/data/h100/make.py (one definition of the model for both recipes)
_spec = importlib.util.spec_from_file_location("h100_make", os.path.join(os.path.dirname(__file__), "..", "h100", "make.py"))
_h100 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h100)
Block = _h100.Block

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
STEPS = 24  # enough steps a side, split in two halves, for a rank test to reach q < 0.05 over many rows
DDP_STEPS = 10


def model(device="cuda"):
    torch.manual_seed(0)
    return torch.nn.Sequential(Block(d=512, heads=8), Block(d=512, heads=8)).to(device)


def save(prof, name):
    trace = os.path.join(OUT, f"{name}.pt.trace.json")
    prof.export_chrome_trace(trace)
    with open(trace, "rb") as f, open(trace + ".gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    os.unlink(trace)
    print(f"{name}: {os.path.getsize(trace + '.gz')} bytes", flush=True)


def train(m, name, steps=STEPS):
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    batches = [torch.randn(16, 256, 512, device="cuda") for _ in range(4)]

    def step(i):
        loss = m(batches[i % len(batches)]).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for i in range(3):  # warm-up: cuBLAS handles, allocator pools, the gloo buffers
        step(i)
    torch.cuda.synchronize()
    # one profiled warm-up step: CUPTI's first buffer request lands there, not in a recorded step
    # the trace is written when the schedule's active steps end (the profiler clears them then)
    with profile(
        activities=ACTIVITIES,
        record_shapes=True,
        schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
        on_trace_ready=lambda p: save(p, name),
    ) as prof:
        for i in range(steps + 1):
            step(i)
            torch.cuda.synchronize()
            prof.step()


def ddp_rank(rank, world):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.cuda.set_device(0)
    m = torch.nn.parallel.DistributedDataParallel(model(), device_ids=[0])
    train(m, f"ddp_rank{rank}", DDP_STEPS)
    dist.destroy_process_group()


def main():
    if not torch.cuda.is_available():
        sys.exit("make.py records GPU traces: torch sees no CUDA device here")
    os.makedirs(OUT, exist_ok=True)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    train(model(), "base_a")
    train(model(), "base_b")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    train(model(), "tf32")
    torch.backends.cuda.matmul.allow_tf32 = False
    mp.spawn(ddp_rank, args=(2,), nprocs=2, join=True)


if __name__ == "__main__":
    main()
