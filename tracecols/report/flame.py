"""Flame graphs from the `stacks` view's calling-context tree: the folded lines of
`tracecols stacks`, and the icicle chart's rectangles of the report.

The view holds one row per distinct path with its last frame and the path one frame up
(`parent`), not the path's text: on deep Python stacks that text is tens of MB. It is built
here, each path from its parent's, in order of depth. The icicle's paths are cut to their
first frames (deeper frames add their time to the frame at the cut), then merged into a prefix
tree; a node narrower than `min_share` of the whole is not drawn, nor is anything under it, so
the page stays small whatever the trace. Siblings are ordered by name, as flame graphs order
them, so that two reports of similar runs line up.
"""

from collections.abc import Callable, Iterable

from ..printable import escape

# metric -> the `stacks` column it reads
METRICS = {"self_cpu": "self_cpu_ns", "self_device": "self_device_ns"}

KINDS = ("op", "python", "runtime", "other")  # what kind() tells apart, in the order of their colours


def kind(frame):
    """Which of KINDS a frame name is: an ATen op, a Python frame, a runtime call or other."""
    if frame.startswith("aten::"):
        return "op"
    if ".py(" in frame:
        return "python"
    if frame.startswith(("cuda", "cu", "hip")):
        return "runtime"
    return "other"


def folded(src, trace_id: int, metric: str = "self_cpu") -> list[tuple[str, int]]:
    """The folded lines of one trace of `src` (a Trace or Lake): [(stack, µs)], the frames joined by
    `;` from the root down (control characters escaped: a line is one stack), sorted by stack;
    the metric's ns rounded to the nearest µs (halves
    up), stacks that round to 0 left out."""
    import polars as pl

    rows = _tree(src.frame("stacks").filter(pl.col("trace_id") == int(trace_id)), METRICS[metric])
    # Building the text in Python takes half the time of a recursive query in DuckDB on the
    # SGLang capture trace (34k paths, 44 frames deep). Python orders str by code point, which
    # is the byte order of UTF-8 text: the order DuckDB's ORDER BY gives.
    lines = [
        (stack, (ns + 500) // 1000)
        for stack, ns in _walk(rows, lambda up, frame: escape(frame) if up is None else f"{up};{escape(frame)}")
        if ns >= 500
    ]
    lines.sort()
    return lines


def frame_paths(src, column: str, depth: int) -> list[tuple[tuple[str, ...], int]]:
    """[(frames, value)] for every path of every trace of `src` whose `column` (of `stacks`) is
    above 0: its first `depth` frames from the root down (a deeper path's value counts at its
    ancestor at the cut), the input of `rects`. Paths with the same frames in different traces
    are separate entries, which `rects` merges."""
    rows = _tree(src.frame("stacks"), column)
    return [
        (frames, v)
        for frames, v in _walk(rows, lambda up, frame: (frame,) if up is None else up + (frame,) if len(up) < depth else up)
        if v and v > 0
    ]


def _tree(stacks, column: str) -> list[tuple]:
    """The rows of `stacks` (a polars frame of the view) as (trace_id, node, parent, frame, value),
    each parent before its children (by number of frames)."""
    return stacks.sort("frames", maintain_order=True).select("trace_id", "node", "parent", "frame", column).rows()


def _walk(rows: Iterable[tuple], grow: Callable) -> list[tuple]:
    """[(path, value)] for tree rows (trace_id, node, parent, frame, value), each parent before its
    children: a root's path is grow(None, frame), another's grow(its parent's path, frame)."""
    path: dict = {}
    out = []
    for trace_id, node, parent, frame, value in rows:
        p = path[trace_id, node] = grow(None if parent is None else path[trace_id, parent], frame)
        out.append((p, value))
    return out


def rects(
    rows: Iterable[tuple[tuple[str, ...], int]], min_share: float = 0.002, levels: int | None = None, max_rects: int = 1500
) -> tuple[list, int, list, float]:
    """([(level, start, width, frame, total)], sum of values, trunk, min_share) for `rows` of (frames tuple,
    value): start and width as shares of the sum of all values, level 0 the first drawn frames.

    The trunk is the run of outermost frames that every stack shares (the launcher, the
    profiler's wrapper, a step annotation…): it says nothing about where time goes, so it is
    returned apart and drawing starts where the stacks first differ; then `levels` levels at most.
    When more than `max_rects` frames would be drawn, `min_share` grows until they fit (the
    share used is returned).
    """
    root: dict = {}
    total = 0
    for frames, value in rows:
        if not value or value <= 0:
            continue
        total += value
        node = root
        for f in frames:
            entry = node.get(f)
            if entry is None:
                entry = node[f] = [0, {}]
            entry[0] += value
            node = entry[1]
    out: list = []
    trunk: list = []
    if total <= 0:
        return out, 0, trunk, min_share
    while len(root) == 1:
        ((name, (value, children)),) = root.items()
        if value != total or not children:
            break
        trunk.append(name)
        root = children
    while True:
        out = _layout(root, total, min_share, levels)
        if len(out) <= max_rects:
            return out, total, trunk, min_share
        min_share *= 1.5


def _layout(root, total, min_share, levels):
    out = []
    todo = [(root, 0, 0.0)]
    while todo:
        node, level, start = todo.pop()
        if levels is not None and level >= levels:
            continue
        for name in sorted(node):
            value, children = node[name]
            width = value / total
            if width >= min_share:
                out.append((level, start, width, name, value))
                todo.append((children, level + 1, start))
            start += width
    out.sort()
    return out
