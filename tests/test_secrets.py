"""Secret-looking metadata values never leave tracecols unless --keep-secrets / keep_secrets=True."""
import contextlib
import io
import json
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pyarrow.parquet as pq
import pytest

import tracecols
from tracecols.model.secrets import REDACTED, is_secret_key, redact

PLANTED = {"HF_TOKEN": "hf_abc123plant", "nested": {"db_password": "pwplant42", "ok": "visible-value"},
           "AWS_SECRET_ACCESS_KEY": "awsplant77", "env": [{"GITHUB_AUTH": "ghplant9"}]}
SECRETS = ("hf_abc123plant", "pwplant42", "awsplant77", "ghplant9", "ncclplant5")


def _trace(tmp_path):
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5},
              {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
               "args": {"device": 0, "stream": 7, "correlation": 1}}]
    doc = dict(PLANTED, schemaVersion=1, record_shapes=1, cupti_version=12,
               distributedInfo={"rank": 0, "world_size": 2, "backend": "nccl", "store_auth": "ncclplant5"},
               traceEvents=events)
    p = tmp_path / "rank0.json"
    p.write_text(json.dumps(doc))
    return p


def run(*args):
    """The CLI in this process (the subprocess path is covered by test_cli.py): returncode, stdout, stderr."""
    from tracecols.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return SimpleNamespace(returncode=rc, stdout=out.getvalue().encode(), stderr=err.getvalue())


def _all_text(path):
    """Every byte of a file or directory, plus the decoded content of Parquet and DuckDB files."""
    path = Path(path)
    files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
    out = []
    for f in files:
        out.append(f.read_bytes().decode("latin-1"))
        if f.suffix == ".parquet":
            out.append(str(pq.read_table(f).to_pylist()))
        elif f.suffix == ".duckdb":
            con = duckdb.connect(str(f), read_only=True)
            for (name,) in con.sql("select table_name from information_schema.tables").fetchall():
                out.append(str(con.sql(f"select * from {name}").fetchall()))
            con.close()
    return "\n".join(out)


def _check(text, keep):
    for s in SECRETS:
        assert (s in text) == keep, (s, keep)
    assert "visible-value" in text or "cupti_version" not in text


def test_key_rule():
    for k in ("HF_TOKEN", "db_password", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "apikey", "ssh_private_key",
              "credentials", "GITHUB_AUTH", "key", "encryption-key", "Passwd"):
        assert is_secret_key(k), k
    for k in ("record_shapes", "cupti_version", "with_stack", "rank", "keyboard", "monkey", "schemaVersion",
              "traceEvents", "distributedInfo", "deviceProperties", "baseTimeNanoseconds", "PWD"):
        assert not is_secret_key(k), k
    got = redact(PLANTED)
    assert got["HF_TOKEN"] == REDACTED and got["nested"] == {"db_password": REDACTED, "ok": "visible-value"}
    assert got["env"] == [{"GITHUB_AUTH": REDACTED}] and PLANTED["HF_TOKEN"] == "hf_abc123plant"


def test_open_redacts_by_default(tmp_path):
    p = _trace(tmp_path)
    t = tracecols.open(str(p))
    row = t.table("traces").to_pylist()[0]
    _check(str(row), keep=False)
    meta = json.loads(row["metadata"])
    assert meta["HF_TOKEN"] == REDACTED and meta["record_shapes"] == 1 and meta["cupti_version"] == 12
    assert json.loads(row["distributed_info"])["store_auth"] == REDACTED and row["rank"] == 0
    _check(str(tracecols.open(str(p), keep_secrets=True).table("traces").to_pylist()), keep=True)
    # an output saved with secrets kept is still redacted when reopened without keep_secrets
    out = tracecols.open(str(p), keep_secrets=True).save(tmp_path / "kept")
    _check(_all_text(out), keep=True)
    _check(str(tracecols.open(str(out)).sql("select * from traces").rows()), keep=False)
    _check(str(tracecols.open(str(out), keep_secrets=True).sql("select * from traces").rows()), keep=True)
    _check(_all_text(tracecols.open(str(p)).save(tmp_path / "red")), keep=False)


@pytest.mark.parametrize("keep", [False, True])
def test_every_cli_output(tmp_path, keep):
    p = _trace(tmp_path)
    flag = ["--keep-secrets"] if keep else []
    r = run("info", p, *flag)
    assert r.returncode == 0, r.stderr
    _check_never = [s for s in SECRETS if s.encode() in r.stdout]
    assert not _check_never  # info lists metadata keys, never their values
    assert b"HF_TOKEN" in r.stdout
    assert (b"5 value(s) redacted (5 in metadata, 0 in events" in r.stdout) != keep
    for fmt in ("table", "csv", "json"):
        r = run("sql", p, "select * exclude (warnings) from traces", "--format", fmt, "--max-rows", "5", *flag)
        assert r.returncode == 0, r.stderr
        if fmt == "table":  # the terminal table cuts long strings: only the redaction is checked
            assert keep or not any(s in r.stdout.decode() for s in SECRETS)
            continue
        _check(r.stdout.decode(), keep)
        o = tmp_path / f"o.{fmt}"
        assert run("sql", p, "select metadata, distributed_info from traces", "--format", fmt, "-o", o,
                   *flag).returncode == 0
        _check(_all_text(o), keep)
    o = tmp_path / "o.parquet"
    assert run("sql", p, "select * from traces", "--format", "parquet", "-o", o, *flag).returncode == 0
    _check(_all_text(o), keep)
    lake = tmp_path / "lake"
    r = run("ingest", p, "-o", lake, "-j", "1", *flag)
    assert r.returncode == 0, r.stderr
    _check(_all_text(lake), keep)
    r = run("sql", lake, "select metadata, distributed_info from traces", "--format", "csv", *flag)
    _check(r.stdout.decode(), keep)
    db = tmp_path / "x.duckdb"
    r = run("export", lake, "--duckdb", db, *flag)
    assert r.returncode == 0, r.stderr
    _check(_all_text(db), keep)


def test_export_of_a_kept_lake_is_redacted(tmp_path):
    p = _trace(tmp_path)
    lake = tmp_path / "lake"
    assert run("ingest", p, "-o", lake, "-j", "1", "--keep-secrets").returncode == 0
    _check(_all_text(lake), keep=True)
    for extra in ((), ("--keep-secrets",)):
        db = tmp_path / f"x{len(extra)}.duckdb"
        assert run("export", lake, "--duckdb", db, *extra).returncode == 0
        _check(_all_text(db), keep=bool(extra))
        r = run("sql", lake, "select * from traces", "--format", "json", *extra)
        _check(r.stdout.decode(), keep=bool(extra))
