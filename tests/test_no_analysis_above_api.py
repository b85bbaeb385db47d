"""The CLI and the report hold no analysis: they read tables and views by name (Face.frame) and
render them. Read with the ast module, neither package may hold a string that looks like SQL
(SELECT … FROM), run a query (`.sql(`, `.arrow(`, `.show(`) or reach the private engine
(`._engine`); the one exception is the `sql` command passing the user's own query through.
Text a user reads and nothing runs (docstrings, `help=` of an option) is not SQL."""

import ast
import re
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tracecols"
SQL_TEXT = re.compile(r"\bselect\b.*\bfrom\b", re.IGNORECASE | re.DOTALL)
QUERY_METHODS = {"sql", "arrow", "show"}
# (module, function) allowed to run a query: the user's own, given on the command line
ALLOWED = {("commands.py", "sql")}


def _text(node: ast.AST) -> str | None:
    """The text of a string literal; an f-string's literal parts with `{}` for each value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _shown_only(tree: ast.AST) -> set[int]:
    """ids of the string nodes nothing runs: docstrings and the `help=` text of options."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and _text(body[0].value) is not None:
                out.add(id(body[0].value))
        if isinstance(node, ast.Call):
            out |= {id(k.value) for k in node.keywords if k.arg == "help"}
    return out


def _functions(tree: ast.AST) -> dict[int, str]:
    """id of every node -> the name of the outermost function it sits in."""
    out = {}
    for top in ast.walk(tree):
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(top):
                out.setdefault(id(node), top.name)
    return out


def violations(root: Path) -> list[str]:
    """'file:line: what' for every query text, query call or engine access under `root`."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        shown, where = _shown_only(tree), _functions(tree)
        for node in ast.walk(tree):
            allowed = (path.name, where.get(id(node))) in ALLOWED
            text = _text(node)
            if text is not None and id(node) not in shown and SQL_TEXT.search(text):
                out.append(f"{path.relative_to(root)}:{node.lineno}: SQL text {text[:40]!r}")
            if isinstance(node, ast.JoinedStr):
                shown |= {id(v) for v in node.values}  # its parts were read as one text
            if isinstance(node, ast.Attribute) and node.attr == "_engine":
                out.append(f"{path.relative_to(root)}:{node.lineno}: private engine")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in QUERY_METHODS
                and not allowed
            ):
                out.append(f"{path.relative_to(root)}:{node.lineno}: query call .{node.func.attr}(")
    return sorted(out, key=lambda v: (v.split(":")[0], int(v.split(":")[1]), v))


def test_the_cli_reads_views_by_name_only():
    assert violations(PACKAGE / "cli") == []


def test_the_report_reads_views_by_name_only():
    assert violations(PACKAGE / "report") == []


PLANTED = '''

def planted(t, name):
    """SELECT in a docstring is prose."""
    rows = t.sql(f"select uid from slices where name = '{name}'")
    return rows, t._engine.polars("-- nothing"), t.arrow(QUERY)


QUERY = """SELECT *
    FROM kernels"""
'''


def test_a_planted_query_is_found(tmp_path):
    """The check can fail: a copy of the CLI with a function that runs its own queries."""
    copy = tmp_path / "cli"
    shutil.copytree(PACKAGE / "cli", copy)
    assert violations(copy) == []
    with open(copy / "stacks.py", "a") as f:
        f.write(PLANTED)
    found = violations(copy)
    assert len(found) == 5, found
    assert sum("SQL text" in v for v in found) == 2 and all(v.startswith("stacks.py:") for v in found)
    assert {v.split(": ", 1)[1] for v in found if "SQL" not in v} == {"query call .sql(", "private engine", "query call .arrow("}


def test_the_sql_command_may_run_only_the_users_query(tmp_path):
    """The exception is the `sql` function of commands.py; the same call anywhere else is found,
    and a query written into that function is found too."""
    copy = tmp_path / "cli"
    shutil.copytree(PACKAGE / "cli", copy)
    text = (copy / "commands.py").read_text()
    assert "t.sql(args.query" in text
    (copy / "stacks.py").write_text((copy / "stacks.py").read_text() + "\n\ndef sql(t, args):\n    return t.sql(args.query)\n")
    text = text.replace("t.sql(args.query", 't.sql("SELECT 1 FROM events"', 1)
    (copy / "commands.py").write_text(text)
    found = violations(copy)
    assert len(found) == 2 and found[0].startswith("commands.py:") and "SQL text" in found[0], found
    assert found[1].startswith("stacks.py:") and found[1].endswith("query call .sql("), found
