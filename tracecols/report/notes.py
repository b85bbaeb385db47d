"""Lines that the terminal summary and the HTML report both show: each trace's headline,
the reader's warnings, and the graph-replay notes."""

from .units import fmt_ns, fmt_pct


def headline_lines(rows):
    """The headline view's rows (dicts) as text: one line per trace, then one per warning."""
    lines = []
    for r in rows:
        parts = [f"trace {r['trace_id']}" + ("" if r["rank"] is None else f" (rank {r['rank']})"), f"span {fmt_ns(r['span_ns'])}"]
        if r["steps"]:
            kind = "ProfilerStep" if r["step_kind"] == "ProfilerStep" else "serving step"
            kind += "s" if r["steps"] != 1 else ""
            parts.append(f"{r['steps']:,} {kind}, mean {fmt_ns(r['mean_step_ns'])}")
        else:
            parts.append("no steps marked")
        if r["gpu_span_ns"] is None:
            parts.append("no device events")
        else:
            parts.append(f"GPU busy {fmt_pct(r['gpu_busy_pct'])} of {fmt_ns(r['gpu_span_ns'])}")
            parts.append(f"{fmt_pct(r['no_op_gpu_pct'])} of GPU busy time under no CPU op")
        lines.append(" · ".join(parts))
        lines += [f"  warning: {w}" for w in r["warnings"] or ()]
    return lines


def graph_notes(trace):
    """One line per trace whose graph replays hide GPU time from the op tables (and one more
    where capture traces were given but some replays did not match them)."""
    if "graph_replay_share" not in trace.tables:
        return []
    from .section_data import graph_replays_unmatched

    lines = []
    for r in graph_replays_unmatched(trace):
        lines.append(
            f"note: {r['unmatched_pct']:.1f}% of GPU busy time (trace {r['trace_id']}) is in "
            f"{r['unmatched']} of {r['launches']} graph replays with no captured ops known; it shows as "
            f"'{r['first_site']}'. Pass --capture DIR (the graph capture traces) to give it to the ops."
        )
        if r["mismatched"]:
            lines.append(
                f"note: {r['mismatched']} graph replays did not match the capture traces "
                f"(first: {r['first_mismatch']}); see the graph_replays table"
            )
    return lines
