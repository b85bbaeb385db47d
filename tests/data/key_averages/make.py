"""Record a small CPU trace and torch.profiler's own key_averages() of the same run.

    pip install torch==2.13.0 && python make.py [OUTDIR]

Writes cpu_mlp.pt.trace.json.gz (export_chrome_trace, gzipped) and key_averages.json: per
row of `prof.key_averages()` and of `prof.key_averages(group_by_input_shape=True)`, the
name, input shapes, calls and the CPU times as torch computed them (µs, its floats). The
tests compare the op_averages views of the trace with these rows: the expected numbers come
from the profiler, not from tracecols.
"""

import gzip
import json
import os
import shutil
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))


def rows(averages):
    return [
        {
            "name": e.key,
            "input_shapes": str(e.input_shapes) if e.input_shapes else "",
            "calls": e.count,
            "self_cpu_us": e.self_cpu_time_total,
            "cpu_total_us": e.cpu_time_total,
        }
        for e in averages
    ]


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(16, 64), torch.randint(0, 10, (16,))) for _ in range(3)]
    batches.append((torch.randn(8, 64), torch.randint(0, 10, (8,))))  # a second input shape
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for x, y in batches:
            with record_function("train_step"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
    trace = os.path.join(OUT, "cpu_mlp.pt.trace.json")
    prof.export_chrome_trace(trace)
    with open(trace, "rb") as f, open(trace + ".gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    os.unlink(trace)
    with open(os.path.join(OUT, "key_averages.json"), "w") as f:
        json.dump(
            {
                "torch": torch.__version__,
                "by_name": rows(prof.key_averages()),
                "by_shape": rows(prof.key_averages(group_by_input_shape=True)),
            },
            f,
            indent=1,
        )


if __name__ == "__main__":
    main()
