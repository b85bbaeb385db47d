"""Arrow tables as polars DataFrames, typed as such: `pl.from_arrow` is typed to give a DataFrame
or a Series (it gives a Series for an Arrow array), and a table always gives a DataFrame."""

from typing import cast

import polars as pl
import pyarrow as pa


def frame(table: pa.Table) -> pl.DataFrame:
    return cast(pl.DataFrame, pl.from_arrow(table))
