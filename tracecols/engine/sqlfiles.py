"""Find the analyses in sql/ and order them by their declared dependencies.

Each file starts with a comment header; a line `-- depends: a, b` names the tables or
views it reads besides `events`. A file whose dependencies are not available (a
CPU-only trace has no kernels, say) is skipped rather than failing the others.
"""
import re
from pathlib import Path

_DEPENDS = re.compile(r"^--\s*depends:\s*(.*)$", re.MULTILINE)


def sql_dir():
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "sql", here.parent / "sql"):  # inside the wheel; in a source checkout
        if cand.is_dir():
            return cand
    raise FileNotFoundError("tracecols: the sql/ directory of analyses is missing from this install")


def load_all():
    """{name: (sql_text, depends)} for every sql/*.sql."""
    out = {}
    for f in sorted(sql_dir().glob("*.sql")):
        text = f.read_text()
        deps = []
        for m in _DEPENDS.finditer(text):
            deps += [d.strip() for d in m.group(1).split(",") if d.strip()]
        out[f.stem] = (text, deps)
    return out


def ordered(files, available):
    """Names of files whose dependencies can be met, in an order that meets them."""
    done, order = set(available), []
    pending = dict(files)
    while pending:
        ready = [n for n, (_, deps) in pending.items() if all(d in done for d in deps)]
        if not ready:
            break
        for n in sorted(ready):
            order.append(n)
            done.add(n)
            del pending[n]
    return order
