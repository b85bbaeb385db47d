"""One secret of each kind, planted in a trace's metadata, event names, args and extra keys and in
an Execution Trace, never reaches any output unless --keep-secrets; with it, every byte stays."""

import gzip
import json

import pytest
from test_secrets import _all_text, run

import tracecols
from tracecols.read.restore import restore_event

HF = "hf_Q7xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2"
GITHUB = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_PAT = "github_pat_11ABCDEFG0aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
AWS_ID = "AKIAZ7QW3ERT5YUI8OPA"
AWS_SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYplant"
GOOGLE = "AIzaSyD4-x9Qw2Er5Ty8Ui1Op3As6Df0Gh7Jk2L"
SLACK = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"
OPENAI = "sk-proj-4fT9kQ2mX7vB1nZ8cR5wL3yH6jD0gS"
ANTHROPIC = "sk-ant-api03-Zq8Xw2Ev4Rt6Yu8Io0Pa1Sd3Fg5Hj7Kl9"
STRIPE = "sk_live_51HqLyjWDarjtT1zdp7dc"
BEARER = "bearertokenplant9f8e7d6c5b4a"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjplant"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwbGFudCIsIm5hbWUiOiJ0cmFjZSJ9.c2lnbmF0dXJlcGxhbnQxMjM0NTY3"
URL_PASSWORD = "urlpassplant77"
FLAG_PASSWORD = "hunter2plant"
HF_TOKEN_VALUE = "hfkeyplant1"  # under the HF_TOKEN key: no format, the key gives it away
PAT_VALUE = "patplant2"  # under GITHUB_PAT
ENV_TOKEN = "envtokenplant9"  # in "HUGGING_FACE_HUB_TOKEN=…", a string of a list
NESTED = "nestedplant7"  # inside an object under a secret key
STORE_AUTH = "storeplant5"  # distributedInfo
DEVICE_KEY = "devplant6"  # deviceProperties
ARG_SECRET = "argsecretplant8"  # an event arg under a secret key
ET_FLAG = "etapikeyplant10"  # an Execution Trace op's string input
ET_META = "wandbplant11"  # an Execution Trace's top-level key
SECRETS = (
    HF,
    GITHUB,
    GITHUB_PAT,
    AWS_ID,
    AWS_SECRET,
    GOOGLE,
    SLACK,
    OPENAI,
    ANTHROPIC,
    STRIPE,
    BEARER,
    PEM_BODY,
    JWT,
    URL_PASSWORD,
    FLAG_PASSWORD,
    HF_TOKEN_VALUE,
    PAT_VALUE,
    ENV_TOKEN,
    NESTED,
    STORE_AUTH,
    DEVICE_KEY,
    ARG_SECRET,
)
ET_SECRETS = (ET_FLAG, ET_META)
# formats and structures that once leaked (hand-made, each of its format's length and alphabet)
AZURE_KEY = "Zm9vYmFyYmF6cXV4QXp1cmVLZXlQbGFudA=="  # AccountKey= of a storage connection string
SAS_SIG = "Rz8qW3xY9kLsasplant0"  # sig= of a SAS URL
K8S_VALUE = "k8senvplant1"  # {"name": "HF_TOKEN", "value": …} in an env list
MYSQL_PWD = "mysqlpwdplant2"
DB_PASS = "dbpassplant3"  # --db-pass
PW_REPR = "pwreprplant4"  # pw="…" in a Python repr
REDIS_PW = "redisplant5"  # redis://:pw@host
GITLAB = "glpat-Ab3dEf6hIj9kLm2nOp5q"
NPM = "npm_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3d"
GOOGLE_OAUTH = "ya29.a0AfH6SMBxPlantTokenValue_0123456789"
DATABRICKS = "dapi0123456789abcdef0123456789abcdef"
SENDGRID = "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"
SLACK_HOOK = "T0PLANT00/B0PLANT00/slackhookplant0123456789"
PGP_BODY = "lQOYBGZ0pgpplant"
OPENAI_GLUED = "sk-proj-9gT2kQ7mX1vB4nZ6cR8wL0yH3jD5gSglued"  # kern_sk-proj-…, in a kernel name
HF_ESCAPED = "hf_Q9xLmN2pR4sT6vW8yZ0aB1cD3eF5gH9jKesc"  # hf\u005f… in the file
PW_ESCAPED = "pwescplant6"  # under "pass\u0077ord" in the file
PG_ESCAPED = "pgescplant7"  # postgres:\/\/u:…@ in the file
NEW_SECRETS = (
    AZURE_KEY,
    SAS_SIG,
    K8S_VALUE,
    MYSQL_PWD,
    DB_PASS,
    PW_REPR,
    REDIS_PW,
    GITLAB,
    NPM,
    GOOGLE_OAUTH,
    DATABRICKS,
    SENDGRID,
    SLACK_HOOK,
    PGP_BODY,
    OPENAI_GLUED,
    HF_ESCAPED,
    PW_ESCAPED,
    PG_ESCAPED,
)
SECRETS = SECRETS + NEW_SECRETS

# near misses, kept as they are
CMDLINE_KEPT = "--max-num-batched-tokens 8192 --tokenizer meta-llama/Llama-3.1-8B"
KEPT = (
    CMDLINE_KEPT,
    "TOKENIZERS_PARALLELISM=false",
    "hf_load_pretrained_model_from_checkpoint_files",
    "task-implementation-of-the-feature-x",
    "trainer",
)

METADATA = {
    "schemaVersion": 1,
    "HF_TOKEN": HF_TOKEN_VALUE,
    "GITHUB_PAT": PAT_VALUE,
    "cmdline": f"vllm serve meta-llama/Llama-3.1-8B {CMDLINE_KEPT} --hf-token {HF} --password={FLAG_PASSWORD}"
    f" MYSQL_PWD={MYSQL_PWD} --db-pass {DB_PASS}",
    "storage": f"DefaultEndpointsProtocol=https;AccountName=acc;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
    "blob": f"https://acc.blob.core.windows.net/c/b?sv=2022-11-02&sig={SAS_SIG}&sp=r",
    "pod_env": [{"name": "HOME", "value": "/root"}, {"name": "HF_TOKEN", "value": K8S_VALUE}],
    "cache": f"redis://:{REDIS_PW}@cache:6379/0",
    "notes": f"{GITLAB} {NPM} {GOOGLE_OAUTH} {DATABRICKS} {SENDGRID} https://hooks.slack.com/services/{SLACK_HOOK}",
    "signing": f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{PGP_BODY}\n-----END PGP PRIVATE KEY BLOCK-----",
    "env": [
        "TOKENIZERS_PARALLELISM=false",
        f"HUGGING_FACE_HUB_TOKEN={ENV_TOKEN}",
        f"AWS_ACCESS_KEY_ID={AWS_ID}",
        f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
        f"GH_CLI={GITHUB_PAT}",
    ],
    "db_url": f"postgresql://trainer:{URL_PASSWORD}@db.internal:5432/runs",
    "deploy": f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n",
    "creds": {"user": "trainer", "pw": NESTED},
    "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1, "store_auth": STORE_AUTH},
    "deviceProperties": [
        {
            "id": 0,
            "name": "NVIDIA H100 80GB HBM3",
            "totalGlobalMem": 85520809984,
            "computeMajor": 9,
            "computeMinor": 0,
            "numSms": 132,
            "access_key": DEVICE_KEY,
        }
    ],
}


def _events():
    step = {
        "ph": "X",
        "cat": "user_annotation",
        "name": f"fetch Authorization: Bearer {BEARER}",
        "pid": 1,
        "tid": 1,
        "ts": 1,
        "dur": 98,
        "args": {"payload": f"OPENAI_KEY {OPENAI}"},
    }
    py = {
        "ph": "X",
        "cat": "python_function",
        "name": "hf_load_pretrained_model_from_checkpoint_files",
        "pid": 1,
        "tid": 1,
        "ts": 2,
        "dur": 90,
        "args": {"Python id": 1, "note": f"client {ANTHROPIC}"},
    }
    mm = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "aten::mm",
        "pid": 1,
        "tid": 1,
        "ts": 3,
        "dur": 40,
        "args": {
            "External id": 1,
            "Record function id": 10,
            "Input Dims": [[2, 2], [2, 2]],
            "Input type": ["float", "float"],
            "Concrete Inputs": ["", GITHUB],
            "client_secret": ARG_SECRET,
            "token": 12,
            "num_tokens": 128,
        },
    }
    launch = {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": "cudaLaunchKernel",
        "pid": 1,
        "tid": 1,
        "ts": 5,
        "dur": 5,
        "args": {"External id": 1, "correlation": 7, "cbid": 211, "endpoint": f"https://x.googleapis.com/v1?key={GOOGLE}"},
    }
    kernel = {
        "ph": "X",
        "cat": "kernel",
        "name": f"kern_{OPENAI_GLUED} void gemm_kernel<float>(float const*, float*)",
        "pid": 0,
        "tid": 7,
        "ts": 10,
        "dur": 20,
        "trace_note": JWT,
        "args": {"device": 0, "stream": 7, "correlation": 7, "External id": 1, "grid": [1, 1, 1], "block": [128, 1, 1]},
    }
    comm = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "c10d::allreduce_",
        "pid": 1,
        "tid": 1,
        "ts": 50,
        "dur": 5,
        "billing": STRIPE,
        "args": {
            "External id": 2,
            "Record function id": 11,
            "Process Group Name": "0",
            "Process Group Description": f"pg {SLACK}",
        },
    }
    near = {
        "ph": "X",
        "cat": "user_annotation",
        "name": "task-implementation-of-the-feature-x",
        "pid": 1,
        "tid": 1,
        "ts": 60,
        "dur": 10,
    }
    escaped = {
        "ph": "i",
        "cat": "user_annotation",
        "name": "escaped",
        "pid": 1,
        "tid": 1,
        "ts": 70,
        "s": "t",
        "args": {
            "cfg": f'Cfg(pw="{PW_REPR}", n=1)',
            "note": HF_ESCAPED,
            "password": PW_ESCAPED,
            "db": f"postgres://u:{PG_ESCAPED}@db/x",
        },
    }
    return [step, py, mm, launch, kernel, comm, near, escaped]


def _trace(path):
    """The trace file, with three secrets JSON-escaped as a hostile writer would hide them."""
    text = json.dumps(dict(METADATA, traceEvents=_events()), indent=1)
    for plain, hidden in (
        (f'"{HF_ESCAPED}"', f'"hf\\u005f{HF_ESCAPED[3:]}"'),
        ('"password": ', '"pass\\u0077ord": '),
        (f'"postgres://u:{PG_ESCAPED}@', f'"postgres:\\/\\/u:{PG_ESCAPED}@'),
    ):
        assert text.count(plain) == 1, plain
        text = text.replace(plain, hidden)
    path.write_text(text)
    return path


def _execution_trace(path):
    """A schema 1.0.1 ET of the same process: aten::mm (rf_id 10, as the Kineto op) with a string input."""
    nodes = [
        {
            "name": "[pytorch|profiler|execution_trace|thread]",
            "id": 2,
            "rf_id": 0,
            "parent": 1,
            "fw_parent": 0,
            "seq_id": -1,
            "scope": 7,
            "tid": 1,
            "fw_tid": 0,
            "op_schema": "",
            "inputs": [],
            "input_shapes": [],
            "input_types": [],
            "outputs": [],
            "output_shapes": [],
            "output_types": [],
        },
        {
            "name": "aten::mm",
            "id": 3,
            "rf_id": 10,
            "parent": 2,
            "fw_parent": 0,
            "seq_id": -1,
            "scope": 0,
            "tid": 1,
            "fw_tid": 0,
            "op_schema": "aten::mm(Tensor self, Tensor mat2) -> Tensor",
            "inputs": [[1, 2, 0, 4, 4, "cpu"], f"--api-key {ET_FLAG}"],
            "input_shapes": [[2, 2], []],
            "input_types": ["Tensor(float)", "String"],
            "outputs": [],
            "output_shapes": [],
            "output_types": [],
        },
    ]
    path.write_text(
        json.dumps(
            {"schema": "1.0.1", "pid": 1, "time": "2026-01-01 00:00:00", "start_ts": 0, "WANDB_API_KEY": ET_META, "nodes": nodes}
        )
    )
    return path


def _outputs(tmp_path, keep):
    """{what: every byte it wrote or printed} for each command and API that writes or prints trace content."""
    p = _trace(tmp_path / "rank0.json")
    et = _execution_trace(tmp_path / "et.json")
    flag = ["--keep-secrets"] if keep else []
    got = {}

    def cli(what, *args, files=()):
        r = run(*args, *flag)
        assert r.returncode == 0, (what, r.stderr)
        got[what] = r.stdout.decode() + r.stderr + "".join(_all_text(f) for f in files)

    cli("info", "info", p)
    for table in ("events", "traces", "devices", "slices", "kernels"):
        cli(f"sql {table}", "sql", p, f"select * from {table}", "--format", "json")
    cli("sql table", "sql", p, "select name, args, extra from events", "--max-rows", "20")
    cli(
        "sql -o parquet",
        "sql",
        p,
        "select * from events",
        "--format",
        "parquet",
        "-o",
        tmp_path / "q.parquet",
        files=[tmp_path / "q.parquet"],
    )
    cli("tree", "tree", p, "--name", "aten::mm", "--parents", "--fields", "Concrete Inputs,client_secret")
    cli("analyze -o", "analyze", p, "-o", tmp_path / "an", files=[tmp_path / "an"])
    cli("analyze", "analyze", p)
    cli("ingest", "ingest", p, "-o", tmp_path / "lake", "-j", "1", files=[tmp_path / "lake"])
    cli("sql lake", "sql", tmp_path / "lake", "select * from events", "--format", "json")
    cli("export", "export", tmp_path / "lake", "--duckdb", tmp_path / "x.duckdb", files=[tmp_path / "x.duckdb"])
    cli("report", "report", p, "-o", tmp_path / "r.html", files=[tmp_path / "r.html"])
    cli("stacks", "stacks", p, "-o", tmp_path / "s.folded", files=[tmp_path / "s.folded"])
    cli("augment", "augment", p, tmp_path / "aug.json.gz")
    augmented = gzip.decompress((tmp_path / "aug.json.gz").read_bytes()).decode()
    got["augment"] += augmented + json.dumps(json.loads(augmented), ensure_ascii=False)  # its bytes, and decoded
    cli("link", "link", "--et", et, "--kineto", p, "-o", tmp_path / "link", files=[tmp_path / "link"])
    cli("diff", "diff", p, p, "--by", "callpath", "-o", tmp_path / "diff", files=[tmp_path / "diff"])
    t = tracecols.open(str(p), keep_secrets=keep)
    got["open().sql"] = str(t.sql("select * from events").rows()) + str(t.sql("select * from traces").rows())
    got["open().save"] = _all_text(t.save(tmp_path / "saved"))
    lake = tracecols.Lake(tmp_path / "lake", keep_secrets=keep)
    got["Lake.sql"] = str(lake.sql("select * from events").rows()) + str(lake.sql("select * from traces").rows())
    return got


@pytest.fixture(scope="module")
def redacted(tmp_path_factory):
    return _outputs(tmp_path_factory.mktemp("redacted"), keep=False)


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    return _outputs(tmp_path_factory.mktemp("kept"), keep=True)


def test_no_output_holds_a_secret(redacted):
    leaks = {(what, s) for what, text in redacted.items() for s in SECRETS + ET_SECRETS if s in text}
    assert not leaks
    assert "<redacted>" in redacted["sql events"] and "<redacted>" in redacted["augment"]
    assert "<redacted>" in redacted["link"]


def test_the_grep_can_fail(kept):
    """With --keep-secrets the same outputs hold them: every secret in the full-content outputs,
    some in each of the others (those that show names or only aggregates)."""
    kept = dict(kept, sql=kept["sql events"] + kept["sql traces"])
    for what in ("sql", "ingest", "export", "augment", "open().sql", "open().save", "Lake.sql", "analyze -o"):
        assert [s for s in SECRETS if s not in kept[what]] == [], what
    assert all(s in kept["link"] for s in ET_SECRETS)
    for what, text in kept.items():
        # info lists metadata keys only; the kernels table, analyze's summary and the report
        # show kernels and the ops that launched them, where no secret is planted
        if what not in ("info", "sql kernels", "analyze", "report"):
            assert any(s in text for s in SECRETS + ET_SECRETS), what


def test_near_misses_and_keys_stay(redacted):
    redacted = dict(redacted, sql=redacted["sql events"] + redacted["sql traces"])
    for what in ("sql", "ingest", "augment", "open().sql"):
        for s in KEPT:
            assert s in redacted[what], (what, s)
    # the key or flag stays beside the redaction, so a reader sees one was there
    text = redacted["sql traces"]
    for s in (
        "--hf-token <redacted>",
        "--password=<redacted>",
        "HUGGING_FACE_HUB_TOKEN=<redacted>",
        "AWS_SECRET_ACCESS_KEY=<redacted>",
        "postgresql://trainer:<redacted>@db.internal",
        "-----BEGIN RSA PRIVATE KEY-----<redacted>-----END RSA PRIVATE KEY-----",
    ):
        assert s in text or s in json.loads(text)["metadata"], s


def _planted_replaced(v):
    """A kept value with each planted secret replaced by the mark: what redaction must give."""
    if isinstance(v, list):
        return [_planted_replaced(x) for x in v]
    if isinstance(v, str):
        for s in SECRETS:
            v = v.replace(s, "<redacted>")
    return v


def test_events_redacted_exactly_and_kept_losslessly(tmp_path):
    p = _trace(tmp_path / "t.json")
    kept = tracecols.open(str(p), keep_secrets=True).table("events").sort_by("uid").to_pylist()
    # kept: every event is the trace's own, exactly
    assert [restore_event(r) for r in kept] == _events()
    # redacted: only the secrets change, every other byte of every column stays
    red = tracecols.open(str(p)).table("events").sort_by("uid").to_pylist()
    assert red == [{k: _planted_replaced(v) for k, v in r.items()} for r in kept]
    assert red != kept
    mm = next(r for r in red if r["name"] == "aten::mm")
    assert json.loads(mm["args"]) == {"client_secret": "<redacted>", "token": 12, "num_tokens": 128}
    assert mm["concrete_inputs"] == ["", "<redacted>"]


def test_stores_written_with_secrets_are_redacted_on_the_way_out(tmp_path):
    """A saved trace or lake written with --keep-secrets is redacted when read without it
    (only the rows that need it are rewritten); an export of such a lake stores no secret."""
    p = _trace(tmp_path / "t.json")
    saved = tracecols.open(str(p), keep_secrets=True).save(tmp_path / "kept")
    kept = _all_text(saved)
    assert all(s in kept for s in SECRETS)
    t = tracecols.open(str(saved))
    text = str(t.sql("select * from events").rows()) + str(t.sql("select * from traces").rows())
    assert not [s for s in SECRETS if s in text] and "<redacted>" in text
    assert t.sql("select count(*) from events").item() == len(_events())
    again = _all_text(t.save(tmp_path / "again"))  # once: it reads every table of the output
    assert not [s for s in SECRETS if s in again]
    assert json.loads((tmp_path / "again" / "_tracecols.json").read_text())["secrets_redacted"] is True
    lake = tmp_path / "lake"
    assert run("ingest", p, "-o", lake, "-j", "1", "--keep-secrets").returncode == 0
    r = run("sql", lake, "select * from events", "--format", "json")
    assert not [s for s in SECRETS if s in r.stdout.decode()] and r.stdout.decode().count("\n") == len(_events())
    assert run("export", lake, "--duckdb", tmp_path / "x.duckdb").returncode == 0
    exported = _all_text(tmp_path / "x.duckdb")  # once: it runs every view of the file
    assert not [s for s in SECRETS if s in exported]


def test_info_counts_every_redaction(tmp_path):
    r = run("info", _trace(tmp_path / "t.json"))
    # metadata: HF_TOKEN, GITHUB_PAT, two in cmdline, four in env, db_url, the PEM, creds,
    # store_auth, access_key (deviceProperties is part of the metadata); events: bearer, OpenAI,
    # Anthropic, GitHub, client_secret, Google (a format: its key= then holds nothing more), JWT,
    # Stripe, Slack; then, in metadata, MYSQL_PWD and --db-pass in cmdline, AccountKey, sig, the
    # env list entry, the Redis URL, six formats in notes and the PGP block (13 more), and in
    # events the glued sk-… kernel name, pw="…", and the three escaped ones (5 more)
    assert "secrets      40 value(s) redacted (26 in metadata, 14 in events" in r.stdout.decode()
