"""The report's "What to fix first" section: the `findings` view's rows, ranked by the time at
stake, with their evidence and remedy (docs/analyses.md, Findings)."""

from .page import Page
from .tables import table

MAX_FINDINGS = 20
MAX_NAMES = 5  # evidence names shown per finding; the view holds them all


def fix_first(page: Page) -> None:
    if not page.has("findings"):
        return
    f = page.src.frame("findings")
    if not f.height:
        page.add("fix-first", "What to fix first", '<p class="empty">No rule found anything to fix.</p>')
        return
    rows = []
    for r in f.head(MAX_FINDINGS).iter_rows(named=True):
        names = r["names"] or []
        evidence = ", ".join(names[:MAX_NAMES]) + (f" (+{len(names) - MAX_NAMES})" if len(names) > MAX_NAMES else "")
        rows.append(
            (
                r["severity"],
                f"{r['rule']} · {r['kind']}" if r["kind"] else r["rule"],
                page.scope(r) if r["trace_id"] is not None else "",
                r["stake_ns"],
                r["stake_pct"],
                r["summary"],
                evidence,
                "; ".join((r.get("sources") or [])[:2]),
                r["remedy"],
            )
        )
    note = (
        "<p>Each rule's time at stake is its own estimate (docs/analyses.md, Findings): findings of different "
        "rules can count the same time, so they are not added up. "
        f"{f'The first {MAX_FINDINGS} of {f.height}.' if f.height > MAX_FINDINGS else ''}</p>"
    )
    page.add(
        "fix-first",
        "What to fix first",
        note,
        table(
            "t-findings",
            ["severity", "finding", "where", "at stake", "% of GPU span", "what", "evidence", "source", "remedy"],
            rows,
            ["name", "name", "name", "ns", "pct", "name", "name", "name", "name"],
        ),
    )
