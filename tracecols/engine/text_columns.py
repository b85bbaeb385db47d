"""Columns of types polars, CSV or JSON cannot hold, taken as DuckDB's text of each value."""

import re

import duckdb

# Types polars cannot import (INTERVAL: month_day_nano; UNION), and beyond them those a CSV or
# JSON writer cannot hold (VARIANT, BLOB, BIT; MAP, whose keys JSON wants as text): such a
# column, or a LIST/STRUCT/ARRAY holding one, is taken as DuckDB's text of each value (CAST AS
# VARCHAR: INTERVAL '1 day 02:00:00', BLOB 'ab\\x00', MAP {1=x}).
POLARS_TEXT_TYPES = ("INTERVAL", "UNION")
TEXT_TYPES = (*POLARS_TEXT_TYPES, "VARIANT", "BLOB", "BIT", "MAP")
_TYPE_WORDS = re.compile(r"[A-Z_]+")


def as_text(rel: duckdb.DuckDBPyRelation, types: tuple[str, ...]) -> duckdb.DuckDBPyRelation:
    """`rel` with each column whose type is or holds one of `types` cast to VARCHAR."""
    cols = []
    for name, t in zip(rel.columns, rel.types, strict=True):
        ident = '"' + name.replace('"', '""') + '"'
        # a STRUCT's field names are not types: only the upper-case words of its type count
        held = set(_TYPE_WORDS.findall(str(t))) & set(types)
        cols.append(f"CAST({ident} AS VARCHAR) AS {ident}" if held else ident)
    if len(cols) == sum(not c.startswith("CAST(") for c in cols):
        return rel
    return rel.project(", ".join(cols))
