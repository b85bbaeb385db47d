"""The names of the data model's base tables (docs/schema.md): `events`, and what
model.derive.derived_tables builds from them."""

BASE_TABLES = (
    "traces",
    "events",
    "devices",
    "slices",
    "kernels",
    "fx_marks",
    "graph_replays",
    "graph_nodes",
    "critical_path_edges",
)
