"""The export policy: which tables and views leave the engine.

A name starting with `_` is a private helper of the sql/ views (or a table the engine keeps
for itself): it is computed inside the engine when a view needs it and is never listed,
written or exported. Every output — `Trace.save`, `analyze -o`, a lake, `export --duckdb`,
`Face.tables` and `repr` — shows `public_names` of its catalog, and only those.
"""

from __future__ import annotations

from collections.abc import Iterable


def is_public(name: str) -> bool:
    """Whether table or view `name` may leave the engine."""
    return not name.startswith("_")


def public_names(names: Iterable[str]) -> list[str]:
    """`names` without the private helpers, in their order."""
    return [n for n in names if is_public(n)]
