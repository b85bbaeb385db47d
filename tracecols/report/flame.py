"""The icicle chart's rectangles from folded stacks (the `stacks` view's rows).

Stacks are cut to their first frames in SQL (deeper frames add their time to the frame at
the cut), then merged into a prefix tree here; a node narrower than `min_share` of
the whole is not drawn, nor is anything under it, so the page stays small whatever the
trace. Siblings are ordered by name, as flame graphs order them, so that two reports of
similar runs line up.
"""

KINDS = (("op", "aten::"), ("python", ".py("), ("runtime", ("cuda", "cu", "hip")), ("other", ""))


def kind(frame):
    """Which of KINDS a frame name is: an ATen op, a Python frame, a runtime call or other."""
    if frame.startswith("aten::"):
        return "op"
    if ".py(" in frame:
        return "python"
    if frame.startswith(("cuda", "cu", "hip")):
        return "runtime"
    return "other"


def rects(rows, min_share=0.002, levels=None, max_rects=1500):
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
        (name, (value, children)), = root.items()
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
