#!/usr/bin/python3
"""Regenerate the PyTorch fixtures of tests/chrome/fixtures (not run by make test).

Each workload is recorded with torch.profiler on the CPU, then written as
  NAME.json            prof.export_chrome_trace()  (Kineto's Chrome trace JSON)
  NAME.table.txt       prof.key_averages().table(sort_by="cpu_time_total")
  NAME.shape.txt       the same with key_averages(group_by_input_shape=True)
The test (tests/chrome/compare.py) checks that our reader + aggregation give
the same names, counts and times as these tables. Needs Debian's python3-torch:
    /usr/bin/python3 tests/chrome/make_fixtures.py
"""
import json
import os
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
torch.manual_seed(0)
torch.set_num_threads(1)  # one CPU thread: intra-op pools would add threads


def mlp():
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    for _ in range(3):
        with record_function("step"):
            with record_function("forward"):
                loss = nn.functional.cross_entropy(model(x), y)
            with record_function("backward"):
                opt.zero_grad()
                loss.backward()
            opt.step()


def conv():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 7 * 7, 10))
    for batch in (2, 4):
        x = torch.randn(batch, 3, 16, 16, requires_grad=True)
        with record_function("conv_fwd_bwd"):
            model(x).sum().backward()


def nested():
    # recursion through record_function, and ops outside any annotation
    def rec(n, t):
        with record_function("rec"):
            t = torch.mm(t, t) * 0.5
            return rec(n - 1, t) if n else t
    a = torch.randn(16, 16)
    for _ in range(2):
        rec(3, a)
    torch.add(a, a)


def kineto_like(prof, path):
    """Debian's torch 1.13 is built without Kineto: export_chrome_trace writes
    the legacy layout (bare array, integer us, no args). This writes the same
    FunctionEvents in Kineto's layout (object form, cat, numeric pid/tid,
    fractional ts, args "Input Dims" and "External id", M events) so shape
    grouping and the Kineto paths are checked against the same table."""
    events = []
    for i, e in enumerate(prof.profiler.function_events):
        events.append({"ph": "X", "cat": "cpu_op", "name": e.trace_name or e.name,
                       "pid": 4242, "tid": 7,
                       "ts": "%.3f" % (1700000000000000 + e.time_range.start),
                       "dur": "%.3f" % (e.time_range.end - e.time_range.start),
                       "args": {"Input Dims": e.input_shapes or [], "External id": i + 1}})
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        f.write('{"name": "process_name", "ph": "M", "pid": 4242, "tid": 0, "args": {"name": "python3"}},\n')
        f.write('{"name": "thread_name", "ph": "M", "pid": 4242, "tid": 7, "args": {"name": "main"}},\n')
        # ts/dur as JSON numbers with three decimals, as Kineto writes them
        f.write(",\n".join(json.dumps(ev).replace('"ts": "', '"ts": ').replace('", "dur": "', ', "dur": ')
                            .replace('", "args"', ', "args"') for ev in events))
        f.write("\n], \"displayTimeUnit\": \"ms\"}\n")


WORKLOADS = {"mlp": mlp, "conv": conv, "nested": nested}

for name, fn in WORKLOADS.items():
    fn()  # warm up: first calls allocate and initialise
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 profile_memory=(name == "mlp")) as prof:
        fn()
    prof.export_chrome_trace(os.path.join(OUT, name + ".json"))
    kineto_like(prof, os.path.join(OUT, name + ".kineto.json"))
    with open(os.path.join(OUT, name + ".table.txt"), "w") as f:
        f.write(prof.key_averages().table(sort_by="cpu_time_total", row_limit=-1) + "\n")
    with open(os.path.join(OUT, name + ".shape.txt"), "w") as f:
        f.write(prof.key_averages(group_by_input_shape=True).table(
            sort_by="cpu_time_total", row_limit=-1) + "\n")
    print(name, os.path.getsize(os.path.join(OUT, name + ".json")), "bytes", file=sys.stderr)
