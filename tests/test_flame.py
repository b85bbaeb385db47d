"""The report's icicle (report/flame.py) against a plain reference built from the stacks."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tracecols.report import flame


def _reference(rows, min_share, levels):
    """Every drawn frame as (level, path, share), by summing the rows under each path prefix."""
    total = sum(v for _, v in rows if v > 0)
    sums = {}
    for frames, v in rows:
        if v > 0:
            for k in range(1, len(frames) + 1):
                sums[frames[:k]] = sums.get(frames[:k], 0) + v
    trunk = ()
    while True:
        kids = [p for p in sums if len(p) == len(trunk) + 1 and p[:-1] == trunk]
        if len(kids) == 1 and sums[kids[0]] == total and any(len(p) > len(kids[0]) for p in sums):
            trunk = kids[0]
        else:
            break
    out = set()
    for path, v in sums.items():
        level = len(path) - len(trunk) - 1
        if path[: len(trunk)] != trunk or level < 0 or level >= levels:
            continue
        if all(sums[path[:k]] / total >= min_share for k in range(len(trunk) + 1, len(path) + 1)):
            out.add((level, path[len(trunk) :], round(v / total, 12)))
    return out, list(trunk)


def _paths(drawn):
    """(level, path, share) of each rectangle: a rectangle's parent is the one a level up whose
    span holds its start."""
    out, by_level = set(), {}
    for level, start, width, name, _ in drawn:
        if level == 0:
            path = (name,)
        else:
            parent = next(p for s, w, p in by_level[level - 1] if s - 1e-12 <= start < s + w - 1e-12)
            path = parent + (name,)
        by_level.setdefault(level, []).append((start, width, path))
        out.add((level, path, round(width, 12)))
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), trunk=st.integers(0, 3))
def test_rects_match_the_plain_prefix_sums(seed, n, trunk):
    rnd = random.Random(seed)
    names = ["a", "b", "c", "aten::mm", "x.py(1): f"]
    head = tuple(f"t{k}" for k in range(trunk))
    rows = [
        (head + tuple(rnd.choice(names) for _ in range(rnd.randint(1, 6))), rnd.choice([0, 1, 5, 40, 1000])) for _ in range(n)
    ]
    drawn, total, got_trunk, least = flame.rects(rows, min_share=0.01, levels=4)
    want, want_trunk = _reference(rows, 0.01, 4)
    assert total == sum(v for _, v in rows if v > 0)
    assert least == 0.01
    assert got_trunk == want_trunk
    assert _paths(drawn) == want
    for level in {d[0] for d in drawn}:  # siblings never overlap and stay inside 0..1
        spans = sorted((d[1], d[1] + d[2]) for d in drawn if d[0] == level)
        assert all(b[0] >= a[1] - 1e-12 for a, b in zip(spans, spans[1:])) and spans[-1][1] <= 1 + 1e-12


def test_too_many_frames_raise_the_cut():
    rows = [((f"f{i}",), 1) for i in range(3000)] + [(("big",), 3000)]
    drawn, _, _, least = flame.rects(rows, min_share=0.0001, max_rects=100)
    assert len(drawn) <= 100 and least > 0.0001 and ("big" in {d[3] for d in drawn})


def test_frame_kinds():
    assert [flame.kind(f) for f in ("aten::mm", "model.py(12): forward", "cudaLaunchKernel", "ProfilerStep#3")] == [
        "op",
        "python",
        "runtime",
        "other",
    ]
