"""Lines of warning that the terminal summary and the HTML report both show."""


def graph_notes(trace):
    """One line per trace whose graph replays hide GPU time from the op tables (and one more
    where capture traces were given but some replays did not match them)."""
    if "graph_replay_share" not in trace.tables:
        return []
    lines = []
    for r in trace.sql("SELECT * FROM graph_replay_share WHERE unmatched > 0 ORDER BY trace_id").iter_rows(named=True):
        lines.append(f"note: {r['unmatched_pct']:.1f}% of GPU busy time (trace {r['trace_id']}) is in "
                     f"{r['unmatched']} of {r['launches']} graph replays with no captured ops known; it shows as "
                     f"'{r['first_site']}'. Pass --capture DIR (the graph capture traces) to give it to the ops.")
        if r["mismatched"]:
            lines.append(f"note: {r['mismatched']} graph replays did not match the capture traces "
                         f"(first: {r['first_mismatch']}); see the graph_replays table")
    return lines
