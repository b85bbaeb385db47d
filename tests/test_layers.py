"""The layers of docs/architecture.md, as pyproject.toml declares them to import-linter: the
package keeps them, and a copy of it with one import against them fails the check, naming it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

import tracecols

PYPROJECT = REPO / "pyproject.toml"
# lint-imports, run as a module of this interpreter (the script may not be on PATH)
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]


def _lint(package_parent: Path, cwd: Path) -> subprocess.CompletedProcess:
    """import-linter over the package `tracecols` found in `package_parent`, with the project's contracts."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(package_parent), os.environ.get("PYTHONPATH", "")]))
    cmd = [*LINT, "--config", str(PYPROJECT), "--no-cache"]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _copy(tmp_path: Path) -> Path:
    """A copy of the package's Python files, to plant a violation in."""
    src = Path(tracecols.__file__).parent
    shutil.copytree(src, tmp_path / "tracecols", ignore=shutil.ignore_patterns("__pycache__", "*.so", "sql", "data"))
    return tmp_path


def test_the_contract_lists_no_exceptions():
    text = PYPROJECT.read_text()
    assert "[tool.importlinter]" in text
    assert "ignore_imports" not in text


def test_the_package_keeps_its_layers(tmp_path):
    r = _lint(Path(tracecols.__file__).parent.parent, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout
    assert "BROKEN" not in r.stdout


@pytest.mark.parametrize(
    "module, planted, message",
    [
        # the reader, the lowest layer, reaching the top one
        ("read/schema.py", "from tracecols.cli import run", "tracecols.read is not allowed to import tracecols.cli"),
        # the engine reaching the store again (it is handed a writer)
        (
            "engine/catalog.py",
            "from tracecols.store.parquet import writer",
            "tracecols.engine is not allowed to import tracecols.store",
        ),
        # the CLI reaching the model past the API floor
        ("cli/table.py", "from tracecols.model import tree", "tracecols.cli is not allowed to import tracecols.model"),
    ],
)
def test_a_planted_violation_fails_the_check(tmp_path, module, planted, message):
    root = _copy(tmp_path / "copy")
    path = root / "tracecols" / module
    path.write_text(path.read_text() + f"\n{planted}  # planted\n")
    r = _lint(root, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert message in r.stdout
    importer = "tracecols." + module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {planted.split()[1]}" in r.stdout
