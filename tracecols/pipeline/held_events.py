"""The columns of the events that the tree, the links and the critical path read, kept in memory
while the events are written to Parquet (parse.write_events), as long as the trace is small
enough to be derived in memory: the stages after the read then start from these instead of
reading the file they were just written to back."""

import polars as pl
import pyarrow as pa

from ..model.cp_graph import SYNC_SCHEMA, sync_events
from ..model.derive import TREE_COLUMNS
from .streamed_tables import small


class HeldEvents:
    """TREE_COLUMNS of every event and the CUDA sync events (cp_graph.sync_events) of a small
    trace (streamed_tables.small), gathered a written group at a time (on the writer's
    thread); of a bigger one, nothing (the stages read the file)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget what was gathered (the events are read again from the start)."""
        self._tree: list[pa.Table] | None = []
        self._syncs: list[pl.DataFrame] = []
        self._rows = 0

    def drop(self) -> None:
        """Hold nothing more: what was gathered no longer matches the file."""
        self._tree = None
        self._syncs = []

    def add(self, events: pa.Table) -> None:
        """Keep what the stages read of one group of the `events` table, as written."""
        if self._tree is None:
            return
        self._rows += events.num_rows
        if not small(self._rows):
            self.drop()
            return
        self._tree.append(events.select(TREE_COLUMNS))
        self._syncs.append(sync_events(events))

    def tree_columns(self) -> pa.Table | None:
        """TREE_COLUMNS of the events, in the file's order; None if not held."""
        return pa.concat_tables(self._tree) if self._tree else None

    def syncs(self) -> pl.DataFrame:
        """sync_events() of the events held (call tree_columns() first: only then are they whole)."""
        return pl.concat(self._syncs) if self._syncs else pl.DataFrame(schema=SYNC_SCHEMA)
