"""Find the analyses in sql/ and order them by their declared dependencies.

Each file starts with a comment header; a line `-- depends: a, b` names the tables or
views it reads besides `events` (tests/test_sql_modules.py checks the list against the SQL),
and a line `-- uses: m, n` the macro modules (sql/macros/m.sql) whose macros it calls; no
view file defines a macro (macro_errors). The folders sit in layers (LAYERS, layering_errors).
A dependency that is neither a base table of the data model nor another file, or a cycle,
is an error. A file whose base tables this store lacks (an output written before the table
existed) is left out, with the views built on it.
"""

import re
from pathlib import Path

_DEPENDS = re.compile(r"^--\s*depends:\s*(.*)$", re.MULTILINE)
_VIEW = re.compile(r"^CREATE\s+OR\s+REPLACE\s+VIEW\s+(\w+)\s+AS\b", re.MULTILINE | re.IGNORECASE)


def sql_dir():
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "sql", here.parent / "sql"):  # inside the wheel; in a source checkout
        if cand.is_dir():
            return cand
    raise FileNotFoundError("tracecols: the sql/ directory of analyses is missing from this install")


# The folders of sql/, lowest layer first. A view reads base tables, views of its own folder and
# views of folders in lower layers; folders that share a layer read none of each other's views.
# Generic analyses sit below the specialised ones (serving, fleet, the compatibility views), which
# they never read, and a headline that summarises several folders sits above all of them, beside
# the findings, which read them all too. The fleet's per-step views take their steps from
# serving's (a serving iteration is a step).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("time", "memory"),
    ("ops",),
    ("kernels",),
    ("serving", "compat/tracelens"),
    ("fleet",),
    ("summary", "findings"),
)


class SqlModuleError(Exception):
    """A sql/ file names a dependency that does not exist, or the files depend on each other in a circle."""


MACROS = "macros"  # the folder of macro modules: files that define macros the views use, no view
_USES = re.compile(r"^--\s*uses:\s*(.*)$", re.MULTILINE)
_MACRO_DEF = re.compile(r"^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\w*\s+)?MACRO\s+(\w+)", re.MULTILINE | re.IGNORECASE)
_MACRO_CALL = re.compile(r"\b(_tc_\w+)\s*\(")  # every macro's name starts with _tc_


def _is_module(f: Path, root: Path) -> bool:
    return f.parent == root / MACROS


def load_all(directory=None):
    """{name: (sql_text, depends)} for every view file in `directory` (default: sql/) and its
    domain folders (core, kernels, ops, time, serving, fleet, compat/…); names are file stems."""
    where: dict[str, Path]
    out, where = {}, {}
    root = Path(directory) if directory else sql_dir()
    for f in sorted(root.rglob("*.sql")):
        if f.stem in where:
            raise SqlModuleError(f"two sql/ files define {f.stem}: {where[f.stem]} and {f}")
        where[f.stem] = f
        if _is_module(f, root):
            continue
        text = f.read_text()
        deps = []
        for m in _DEPENDS.finditer(text):
            deps += [d.strip() for d in m.group(1).split(",") if d.strip()]
        out[f.stem] = (text, deps)
    return out


def folders(directory: str | Path | None = None) -> dict[str, str]:
    """{name: its folder under sql/ ('ops', 'compat/tracelens', …)} for every view file."""
    root = Path(directory) if directory else sql_dir()
    return {f.stem: f.parent.relative_to(root).as_posix() for f in root.rglob("*.sql") if not _is_module(f, root)}


def layering_errors(directory: str | Path | None = None, layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """What breaks the layering of LAYERS in `directory` (default: sql/): a view in a folder no
    layer names, or one that reads a view of a folder in its own layer or a higher one; one
    line each, empty when the rule holds."""
    where = folders(directory)
    rank = {folder: i for i, layer in enumerate(layers) for folder in layer}
    out = [f"{n}: folder {where[n]}/ is in no layer" for n in sorted(where) if where[n] not in rank]
    for name, (_, deps) in sorted(load_all(directory).items()):
        mine = where[name]
        for dep in deps:
            theirs = where.get(dep)
            if theirs is None or theirs == mine or mine not in rank or theirs not in rank:
                continue
            if rank[theirs] >= rank[mine]:
                out.append(f"{name} ({mine}/) reads {dep} ({theirs}/), which is not in a lower layer")
    return out


# A header's `-- Columns` section: indented lines `name[, name…]  TYPE  meaning`, several per line
# when separated by `;`, a meaning running on over more indented lines; a meaning that has a unit
# starts with it and a comma (`ns, start`) or with `%`.
_COLUMN_TYPES = (
    r"STRUCT\([\w ,]+\)\[\]|BIGINT\[\]|VARCHAR\[\]|INTEGER\[\]|DOUBLE\[\]|INTEGER|BIGINT|UBIGINT|HUGEINT|VARCHAR|DOUBLE|FLOAT|"
    r"BOOLEAN|TIMESTAMP|DATE"
)
_COLUMN = re.compile(r"\s*([\w\"%(), ./-]+?)\s+(" + _COLUMN_TYPES + r")(?![\w\[])\s*(.*)$")
UNITS = ("ns", "µs", "ms", "s", "bytes", "GB/s", "%")
_LABEL = re.compile(r"^--\s*(depends:|[A-Z]\w*( [\w()]+){0,3}:)")  # `Rules (HTA):`, `Columns:`


def view_text(name: str, directory: str | Path | None = None) -> str:
    """The text of the sql/ file of view `name`."""
    root = Path(directory) if directory else sql_dir()
    found = [f for f in root.rglob(f"{name}.sql") if not _is_module(f, root)]
    if len(found) != 1:
        raise SqlModuleError(f"no sql/ file defines {name}")
    return found[0].read_text()


def answers(text: str) -> str:
    """The question a view answers: its header's `-- Answers:` text, lines joined ('' when none)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"--\s*Answers\b", line)), None)
    if start is None:
        return ""
    out = [lines[start].split("Answers", 1)[1].lstrip(":,").strip()]
    for line in lines[start + 1 :]:
        if out[-1].endswith(("?", ".")) or not line.startswith("--") or _LABEL.match(line) or not line[2:].strip():
            break
        out.append(line[2:].strip())
    return " ".join(out)


def _unit(meaning: str) -> tuple[str | None, str]:
    for unit in UNITS:
        if meaning == unit:
            return unit, ""
        if meaning.startswith(unit + ", ") or unit == "%" and meaning.startswith("% "):
            return unit, meaning[len(unit) :].lstrip(", ").strip()
    return None, meaning


def columns(
    name: str, directory: str | Path | None = None, texts: dict[str, str] | None = None
) -> list[tuple[str, str, str | None, str]]:
    """[(column, type, unit, meaning)] of view `name` from its header's `-- Columns` section
    (unit None where the meaning names none); `every column of X` first takes X's list (`every
    column of X but a, b`: without those). `texts`: {view: its file's text} (load_all's) when
    the caller asks for many views: each is then not looked for in sql/ again."""
    lines = (view_text(name, directory) if texts is None else texts[name]).splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"--\s*Columns", line)), None)
    if start is None:
        return []
    every = re.search(r"every column of (\w+)(?: but ([\w, ]+))?", lines[start])
    out = columns(every.group(1), directory, texts) if every else []
    if every and every.group(2):
        left_out = {c.strip() for c in every.group(2).split(",")}
        out = [c for c in out if c[0] not in left_out]
    rows: list[list] = []
    for line in lines[start + 1 :]:
        if not line.startswith("--"):
            break
        if not line[2:].startswith("   "):
            continue
        for i, part in enumerate(line[2:].split(";")):
            m = _COLUMN.match(part)
            if m:
                rows += [[n.strip().strip('"'), m.group(2), m.group(3).strip()] for n in m.group(1).split(",") if n.strip()]
            elif rows:  # the meaning of the column before runs on
                rows[-1][2] = f"{rows[-1][2]}{'; ' if i else ' '}{part.strip()}".strip()
    return out + [(n, t, *_unit(meaning)) for n, t, meaning in rows]


_WORD = re.compile(r"[a-z_][a-z0-9_]*")


def words(text: str) -> set[str]:
    """Every word of SQL `text`, lowered: the names it could read, and some that are none."""
    return set(_WORD.findall(text.lower()))


def split_view(text, name):
    """(setup, query) of the file of view `name`: the statements before its view (macros,
    comments) and the view's query alone, so that the query can be run without defining the
    view first (DuckDB binds a view's whole query when the view is defined, and again when it is
    read). None unless the text holds one `CREATE OR REPLACE VIEW name AS …` at the start of a
    line (the caller then runs the file as it is)."""
    found = list(_VIEW.finditer(text))
    if len(found) != 1 or found[0].group(1) != name:
        return None
    m = found[0]
    return text[: m.start()], text[m.end() :].strip().rstrip(";")


def has_statements(text):
    """Whether `text` (a split_view setup) holds SQL besides blank and `--` comment lines."""
    return any(line.strip() and not line.lstrip().startswith("--") for line in text.splitlines())


def uses(text: str) -> list[str]:
    """The macro modules a view or module file declares on its `-- uses:` lines."""
    return [u.strip() for m in _USES.finditer(text) for u in m.group(1).split(",") if u.strip()]


def macro_modules(directory: str | Path | None = None) -> dict[str, str]:
    """{module: its SQL text} of every sql/macros/*.sql."""
    root = Path(directory) if directory else sql_dir()
    return {f.stem: f.read_text() for f in sorted((root / MACROS).glob("*.sql"))}


def macros(directory: str | Path | None = None) -> list[str]:
    """The SQL text of the macro modules the views use, each after the modules it uses: to run
    before any view is defined."""
    modules = macro_modules(directory)
    return [modules[n] for n in macro_order([u for text, _ in load_all(directory).values() for u in uses(text)], modules)]


def macro_order(wanted: list[str], modules: dict[str, str]) -> list[str]:
    """The names of the macro modules `wanted` and of those they use, each after the modules it
    uses (`modules`: macro_modules())."""
    missing = sorted({u for u in wanted if u not in modules})
    if missing:
        raise SqlModuleError(f"sql/ files use macro modules that do not exist: {', '.join(missing)}")
    order: list[str] = []

    def add(name: str, seen: tuple[str, ...] = ()) -> None:
        if name in seen:
            raise SqlModuleError(f"sql/macros modules use each other in a circle: {', '.join(seen)}")
        for u in uses(modules[name]):
            add(u, (*seen, name))
        if name not in order:
            order.append(name)

    for name in sorted(set(wanted)):
        add(name)
    return order


def macro_errors(directory: str | Path | None = None) -> list[str]:
    """What breaks the macro rules in `directory` (default: sql/): a view file that defines a
    macro, a file that calls a macro no module it declares on `-- uses:` defines, or that
    declares a module it does not exist or it does not call; one line each, empty when they hold."""
    modules = macro_modules(directory)
    defined = {m: set(_MACRO_DEF.findall(text)) for m, text in modules.items()}
    out = []
    files = {n: t for n, (t, _) in load_all(directory).items()} | {f"{MACROS}/{m}": t for m, t in modules.items()}
    for name, text in sorted(files.items()):
        code = re.sub(r"--[^\n]*", "", text)
        own = set(_MACRO_DEF.findall(code))
        if own and not name.startswith(f"{MACROS}/"):
            out.append(f"{name} defines macros {', '.join(sorted(own))}: they belong in a module of sql/{MACROS}/")
        declared = uses(text)
        out += [f"{name} uses macro module {u}, which does not exist" for u in declared if u not in modules]
        reach = own.union(*(defined.get(u, set()) for u in declared))
        for call in sorted(set(_MACRO_CALL.findall(code)) - reach):
            where = sorted(m for m, d in defined.items() if call in d)
            out.append(
                f"{name} calls {call}, "
                + (f"from module {where[0]}, not on its uses: line" if where else "which no module defines")
            )
        called = set(_MACRO_CALL.findall(code))
        out += [f"{name} uses macro module {u} without calling it" for u in declared if u in defined and not defined[u] & called]
    return out


def ordered(files, available, known=()):
    """Names of files whose dependencies can be met, in an order that meets them.

    `available`: the tables this store has; `known`: every base table name of the data model."""
    unknown = sorted(
        {
            f"{n} -> {d}"
            for n, (_, deps) in files.items()
            for d in deps
            if d not in files and d not in known and d not in available
        }
    )
    if unknown:
        raise SqlModuleError(f"sql/ files depend on what does not exist: {', '.join(unknown)}")
    done, order = set(available), []
    pending = dict(files)
    while pending:
        ready = [n for n, (_, deps) in pending.items() if all(d in done for d in deps)]
        if not ready:
            # left out: what needs a base table this store lacks, directly or through another file
            blocked = {n for n, (_, deps) in pending.items() if any(d not in files and d not in done for d in deps)}
            while True:
                more = {n for n, (_, deps) in pending.items() if n not in blocked and any(d in blocked for d in deps)}
                if not more:
                    break
                blocked |= more
            stuck = set(pending) - blocked
            if stuck:
                raise SqlModuleError(f"sql/ files depend on each other in a circle: {', '.join(sorted(stuck))}")
            break
        for n in sorted(ready):
            order.append(n)
            done.add(n)
            del pending[n]
    return order


PRIVATE_SCHEMA = "tracecols_internal"


def private_in_schema(text, private, schema=PRIVATE_SCHEMA):
    """`text` with every private view name of `private` (`_` names) qualified by `schema`: the
    private views of a database file live there, out of the list of what it offers."""
    if not private:
        return text
    names = "|".join(re.escape(n) for n in sorted(private, key=len, reverse=True))
    return re.sub(rf'(?<![\w."])({names})(?![\w"])', rf"{schema}.\1", text)
