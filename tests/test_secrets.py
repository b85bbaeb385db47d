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
from tracecols.model.secrets import REDACTED, count_redacted, is_secret_key, redact

PLANTED = {
    "HF_TOKEN": "hf_abc123plant",
    "nested": {"db_password": "pwplant42", "ok": "visible-value"},
    "AWS_SECRET_ACCESS_KEY": "awsplant77",
    "env": [{"GITHUB_AUTH": "ghplant9"}],
}
SECRETS = ("hf_abc123plant", "pwplant42", "awsplant77", "ghplant9", "ncclplant5")


def _trace(tmp_path):
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5},
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "pid": 0,
            "tid": 7,
            "ts": 2,
            "dur": 1,
            "args": {"device": 0, "stream": 7, "correlation": 1},
        },
    ]
    doc = dict(
        PLANTED,
        schemaVersion=1,
        record_shapes=1,
        cupti_version=12,
        distributedInfo={"rank": 0, "world_size": 2, "backend": "nccl", "store_auth": "ncclplant5"},
        traceEvents=events,
    )
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
            # every table and view, the private helpers' schema included
            for schema, name in con.sql("select table_schema, table_name from information_schema.tables").fetchall():
                out.append(str(con.sql(f'select * from "{schema}"."{name}"').fetchall()))
            con.close()
    return "\n".join(out)


def _check(text, keep):
    for s in SECRETS:
        assert (s in text) == keep, (s, keep)
    assert "visible-value" in text or "cupti_version" not in text


def test_key_rule():
    for k in (
        "HF_TOKEN",
        "db_password",
        "AWS_SECRET_ACCESS_KEY",
        "OPENAI_API_KEY",
        "apikey",
        "ssh_private_key",
        "credentials",
        "GITHUB_AUTH",
        "key",
        "encryption-key",
        "Passwd",
    ):
        assert is_secret_key(k), k
    for k in (
        "record_shapes",
        "cupti_version",
        "with_stack",
        "rank",
        "keyboard",
        "monkey",
        "schemaVersion",
        "traceEvents",
        "distributedInfo",
        "deviceProperties",
        "baseTimeNanoseconds",
        "PWD",
    ):
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
        assert run("sql", p, "select metadata, distributed_info from traces", "--format", fmt, "-o", o, *flag).returncode == 0
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


# --- the rules, one kind at a time: (text, what it must become), written out by hand ---------
CAUGHT = [
    ("--hf-token hf_Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2 --seed 1", "--hf-token <redacted> --seed 1"),
    ("hf_Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2", "<redacted>"),
    ("push with ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "push with <redacted>"),
    ("gho_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 ghs_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "<redacted> <redacted>"),
    ("url github_pat_11ABCDEFG0aBcDeFgHiJkLmNoPqRsTuVwXyZ012345/x", "url <redacted>/x"),
    ("id AKIAZ7QW3ERT5YUI8OPA, ASIAZ7QW3ERT5YUI8OPB", "id <redacted>, <redacted>"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "aws_secret_access_key = <redacted>"),
    (
        "https://x.googleapis.com/v1?alt=json&k=AIzaSyD4-x9Qw2Er5Ty8Ui1Op3As6Df0Gh7Jk2L",
        "https://x.googleapis.com/v1?alt=json&k=<redacted>",
    ),
    ("slack xoxb-1234567890-0987654321-AbCdEf", "slack <redacted>"),
    ("key sk-proj-4fT9kQ2mX7vB1nZ8cR5wL3yH6jD0gS", "key <redacted>"),
    ("sk-ant-api03-Zq8Xw2Ev4Rt6Yu8Io0Pa1Sd3Fg5Hj7Kl9", "<redacted>"),
    ("charge with sk_live_51HqLyjWDarjtT1zdp7dc", "charge with <redacted>"),
    ("Authorization: Bearer abcdef0123456789.xyz", "Authorization: Bearer <redacted>"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic <redacted>"),
    (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBodyplant\n-----END EC PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----<redacted>-----END EC PRIVATE KEY-----",
    ),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQcut off", "-----BEGIN PRIVATE KEY-----<redacted>"),
    ("t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "t=<redacted>"),
    ("postgres://me:pa55word@db:5432/x", "postgres://me:<redacted>@db:5432/x"),
    ("HF_TOKEN=abc123 python run.py", "HF_TOKEN=<redacted> python run.py"),
    ("GITHUB_PAT=plainvalue", "GITHUB_PAT=<redacted>"),
    (
        "--password=hunter2 --api-key 'a b c' --auth-token \"x y\"",
        "--password=<redacted> --api-key '<redacted>' --auth-token \"<redacted>\"",
    ),
    ("{'client_secret': 'abc', 'n': 1}", "{'client_secret': '<redacted>', 'n': 1}"),
    ("db_password: letmein", "db_password: <redacted>"),
    ("x=password=abc", "x=password=<redacted>"),
    ("https://h/x?token=abc&page=2", "https://h/x?token=<redacted>&page=2"),
]
KEPT = [
    "vllm serve m --max-num-batched-tokens 8192 --max-num-seqs 256 --tokenizer meta-llama/Llama-3.1-8B",
    "--tokenizer-mode auto --ssl-keyfile /etc/key.pem --kv-cache-dtype fp8",
    "token_count=5 max_token=4096 --max-token 128 num_tokens: 7",  # counts under a `token` name
    "use_auth=true HF_TOKEN= password=None --no-auth --other 1",  # nothing carried
    "TOKENIZERS_PARALLELISM=false tiktoken==0.9.0 google-auth==2.40.3 oauthlib==3.2.2",  # pip pins
    "hf_load_pretrained_model_from_checkpoint_files shf_Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2",
    "my task-implementation-of-the-feature-x, disk-0123456789abcdefghijk",
    "sk-this-is-a-branch-name-without-digits AKIAshort AIzaShort xoxb- Bearer short",
    "aten::_flash_attention_forward token::kernel<true> http://host:8080/x author=Jane",
    "void cub::DeviceReduceByKeyKernel<int*> packaging/version.py(407): _key",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
]


@pytest.mark.parametrize("text,want", CAUGHT)
def test_each_kind_is_caught(text, want):
    from tracecols.model.secrets import redact_string

    assert redact_string(text) == want
    assert redact_string(want) == want  # redacting again changes nothing


@pytest.mark.parametrize("text", KEPT)
def test_near_misses_are_kept(text):
    from tracecols.model.secrets import redact_string

    assert redact_string(text) is text


def test_prefilter_finds_every_secret_in_pyarrow_and_duckdb():
    """The one RE2 expression that picks the rows to look at must match every string that
    redaction changes, through pyarrow and through DuckDB alike."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from tracecols.model.secrets import PREFILTER

    texts = (
        [t for t, _ in CAUGHT]
        + ['{"GITHUB_PAT": 1}', '{"encryption-key": "x"}', '{"Cookie": "x"}', '{"creds": {"a": 1}}']
        + [f"{k}=v" for k in SECRET_KEYS]
    )
    assert pc.all(pc.match_substring_regex(pa.array(texts), PREFILTER)).as_py()
    con = duckdb.connect()
    assert all(con.execute("select regexp_matches(?, ?)", [t, PREFILTER]).fetchone()[0] for t in texts)


SECRET_KEYS = (
    "GITHUB_PAT",
    "gh-pat",
    "creds",
    "Authorization",
    "accessToken",
    "botTokenValue",
    "--hf-token",
    "x-auth-token",
    "refresh_token",
    "token",
    "SESSION_KEY",
    "api.key",
)


def test_new_key_rule():
    for k in SECRET_KEYS:
        assert is_secret_key(k), k
    for k in (
        "num_tokens",
        "max-num-batched-tokens",
        "tokenizer",
        "TOKENIZERS_PARALLELISM",
        "tiktoken",
        "author",
        "certificate_authority",
        "ssl-keyfile",
        "path",
        "compat",
        "keyframes",
        "Python id",
        "myTokenIndex",
    ):
        assert not is_secret_key(k), k


def test_values_that_carry_nothing():
    got = redact(
        {
            "HF_TOKEN": None,
            "use_auth": True,
            "password": "",
            "token_count": 5,
            "max_token": 4096,
            "password2": 1234,
            "token_ids": [1, 2],
            "api_key": {"a": "b"},
            "tokens": "abc",
        }
    )
    assert got == {
        "HF_TOKEN": None,
        "use_auth": True,
        "password": "",
        "token_count": 5,
        "max_token": 4096,
        "password2": REDACTED,
        "token_ids": REDACTED,
        "api_key": REDACTED,
        "tokens": "abc",
    }
    assert count_redacted({"env": ["A=1", "SECRET_KEY=x"], "password": 1, "n": 2}) == 2


def test_json_text_keeps_every_other_byte():
    from tracecols.model.secrets import redact_string

    text = '{"n": 1.50, "s": "--api-key zz9 --x 1",  "creds": {"u": "a", "p": [1, {"q": 2}]}, "e": 1E+400}'
    assert redact_string(text) == ('{"n": 1.50, "s": "--api-key <redacted> --x 1",  "creds": "<redacted>", "e": 1E+400}')
    assert redact_string('{"a": 1}') == '{"a": 1}'
    assert redact_string('{"password": "é\\n"}') == '{"password": "<redacted>"}'


def test_json_text_in_pieces_equals_whole():
    """The streaming redactor (augment) fed in pieces cut between tokens gives the whole text's result,
    a secret key's object spanning pieces included."""
    from tracecols.model.secrets import JsonTextRedactor, redact_string

    text = (
        '{"a": [1, 2], "auth": {"x": [{"y": "v"}, 3], "z": {}}, "b": "HF_TOKEN=abc", '
        '"c": {"d": "sk-ant-api03-Zq8Xw2Ev4Rt6Yu8Io0Pa1Sd3Fg5Hj7Kl9"}}'
    )
    cuts = [i + 1 for i, ch in enumerate(text) if ch in "{}[]"]
    for step in (1, 2, 3):
        r = JsonTextRedactor()
        bounds = [0] + cuts[::step] + [len(text)]
        out = "".join(r.feed(text[a:b]) for a, b in zip(bounds, bounds[1:]))
        assert out == redact_string(text)
        assert json.loads(out) == redact(json.loads(text))


def _reference_column(values):
    """Deliberately simple: every value through redact_string, one by one."""
    from tracecols.model.secrets import redact_string

    return [None if v is None else [redact_string(x) for x in v] if isinstance(v, list) else redact_string(v) for v in values]


def test_redact_column_equals_the_value_by_value_reference():
    import pyarrow as pa

    from tracecols.model.secrets import redact_column, redact_table

    texts = ([t for t, _ in CAUGHT] + KEPT + [None, "", "aten::mm", '{"password": 1}']) * 3
    chunked = pa.chunked_array([pa.array(texts[:17]), pa.array(texts[17:40]), pa.array(texts[40:])])
    assert redact_column(chunked).to_pylist() == _reference_column(texts)
    assert redact_column(pa.array(texts, pa.large_string())).to_pylist() == _reference_column(texts)
    assert redact_column(pa.array(texts).dictionary_encode()).to_pylist() == _reference_column(texts)
    lists = [texts[i : i + 3] for i in range(0, len(texts), 3)] + [None, []]
    assert redact_column(pa.array(lists)).to_pylist() == _reference_column(lists)
    plain = pa.array(KEPT * 2)
    assert redact_column(plain) is plain  # nothing to redact: the very same array
    t = pa.table({"n": list(range(len(texts))), "s": texts})
    assert redact_table(t).column("s").to_pylist() == _reference_column(texts)


def test_augment_redacts_across_chunks(tmp_path, monkeypatch):
    """A secret object bigger than a chunk of the augment rewriter is still dropped whole."""
    from tracecols.store import augment as aug

    doc = {
        "filler": ["x" * 50] * 40,
        "credentials": {"rows": [{"k": "v" * 30, "n": i} for i in range(60)]},
        "cmd": "--hf-token abc",
        "traceEvents": [
            {"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "args": {"note": "AKIAZ7QW3ERT5YUI8OPA", "n": 1}}
        ],
    }
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    monkeypatch.setattr(aug, "CHUNK", 97)
    aug.write_augmented(p, tmp_path / "out.json", {0: {"kernel_flop": 7}})
    out = json.loads((tmp_path / "out.json").read_text())
    want = redact(doc)
    want["traceEvents"][0]["args"] = dict(kernel_flop=7, **want["traceEvents"][0]["args"])
    assert out == want and "AKIA" not in (tmp_path / "out.json").read_text()
    aug.write_augmented(p, tmp_path / "kept.json", {}, keep_secrets=True)
    assert (tmp_path / "kept.json").read_bytes() == p.read_bytes()


def test_formats_are_compiled_when_a_string_first_could_hold_a_secret():
    # compiling every credential format costs a small trace's command more than reading it: a
    # process that meets no candidate string never compiles them
    import subprocess
    import sys

    code = (
        "import pyarrow as pa; from tracecols.model import secrets as s; "
        "t = pa.table({'name': ['aten::mm', 'cudaLaunchKernel'], 'args': ['{\"Input Dims\": [[2, 3]]}', None]}); "
        "assert s.redact_table(t) is t; assert s.redact({'hostname': 'node-1', 'world_size': 8})['hostname'] == 'node-1'; "
        "print(s._formats.cache_info().currsize); "
        "print(s.redact_text('--hf-token hf_abcdefghijklmnopqrstuvwxyz0123456789')); print(s._formats.cache_info().currsize)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["0", f"--hf-token {REDACTED}", "1"]
