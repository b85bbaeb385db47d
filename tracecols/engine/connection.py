"""A DuckDB connection over a set of Arrow tables or Parquet files, with the sql/ views on top."""
import duckdb
import pyarrow as pa

from ..errors import QueryError, Unsupported
from . import sqlfiles
from .specs import device_specs_table


class Engine:
    """Registers base tables (Arrow tables, or Parquet paths) and defines every sql/ view over them."""

    def __init__(self, tables, origin="<trace>", memory_limit=None, temp_dir=None):
        self.origin = origin
        config = {"enable_external_access": True}
        if memory_limit:  # bounded-memory runs: DuckDB spills to temp_dir beyond this
            config["memory_limit"] = memory_limit
        if temp_dir:
            config["temp_directory"] = str(temp_dir)
        self.con = duckdb.connect(config=config)
        self.con.execute("SET enable_progress_bar = false")  # drawn on stdout, where results go
        self.base = {}
        for name, t in tables.items():
            if isinstance(t, pa.Table):
                self.con.register(name, t)
            else:
                self.con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({_sql_str(t)})")
            self.base[name] = t
        if "device_specs" not in self.base:  # the device peak table, for op_perf
            self.base["device_specs"] = device_specs_table()
            self.con.register("device_specs", self.base["device_specs"])
        files = sqlfiles.load_all()
        self.views = []
        for name in sqlfiles.ordered(files, set(self.base)):
            if name in tables:
                continue
            self.con.execute(files[name][0])
            self.views.append(name)

    @property
    def names(self):
        return list(self.base) + self.views

    def _run(self, query):
        try:
            return self.con.sql(query)
        except duckdb.Error as e:
            raise QueryError(self.origin, str(e)) from None

    def show(self, query, max_rows):
        """Print the result as a terminal table (DuckDB's renderer: no polars import needed)."""
        rel = self._run(query)
        if rel is not None:
            rel.show(max_rows=max_rows, max_width=200, max_col_width=80)

    def polars(self, query):
        rel = self._run(query)
        return rel.pl() if rel is not None else None

    def arrow(self, query):
        rel = self._run(query)
        if rel is None:
            return None
        out = rel.arrow()
        return out.read_all() if hasattr(out, "read_all") else out

    def table(self, name):
        t = self.base.get(name)
        if isinstance(t, pa.Table):
            return t
        if name not in self.names:
            raise QueryError(self.origin, f"no table named {name!r}; tables: {', '.join(self.names)}")
        return self.arrow(f"SELECT * FROM {name}")

    def materialise(self, name):
        """Compute view `name` once: from then on it, and every view built on it, reads the result.

        DuckDB expands views inline, so without this a view used by three others (op_perf by
        op_perf_summary, kernel_perf, diff) is recomputed each time.
        """
        t = self.table(name)
        if name in self.views:
            self.con.register(f"__done_{name}", t)
            self.con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM __done_{name}")
        return t

    def materialise_to(self, name, path, batch_rows=1 << 17):
        """Like materialise(), through a Parquet file: the result is streamed to `path` (never
        held whole in memory) and the view then reads that file."""
        import pyarrow.parquet as pq
        reader = self._run(f"SELECT * FROM {name}").to_arrow_reader(batch_rows)
        with pq.ParquetWriter(path, reader.schema, compression="zstd") as w:
            for batch in reader:
                w.write_batch(batch)
        if name in self.views:
            self.con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet({_sql_str(str(path))})")


# what `tracecols sql` runs: queries, and changes to its in-memory database only
READ_ONLY_KINDS = ("SELECT", "EXPLAIN", "CREATE", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER")


def check_read_only(query, origin):
    """Raise Unsupported unless every statement of `query` is one of READ_ONLY_KINDS: COPY, EXPORT,
    ATTACH, INSTALL, LOAD, SET, PRAGMA … could write files (the inputs among them). Parses only."""
    try:
        kinds = [st.type.name for st in duckdb.connect().extract_statements(query)]
    except duckdb.Error as e:
        raise QueryError(origin, str(e)) from None
    bad = sorted({k for k in kinds if k not in READ_ONLY_KINDS})
    if bad:
        raise Unsupported(origin, f"tracecols sql runs read-only queries over an in-memory database and writes "
                                  f"only with -o; {', '.join(bad)} statements are refused")


def _sql_str(v):
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_sql_str(x) for x in v) + "]"
    return "'" + str(v).replace("'", "''") + "'"
