"""Builds a corpus of hostile traces: files someone else wrote to leak a secret through an output,
to take over the terminal, to skew the headline or to break a command. tests/test_hostile_corpus.py
runs every command that prints or writes trace content over each of them.

    python tests/hostile_corpus.py DIR    writes the files into DIR (to try them by hand)
"""

import gzip
import json
import sys
from pathlib import Path

# planted secrets: none of these may appear in any byte of any output (decoded where it is JSON)
SECRETS = {
    "hf": "hf_Hq7LmN2pR4sT6vW8yZ0aB1cD3eF5gH9jK2",
    "azure": "QXp1cmVTdG9yYWdlS2V5SG9zdGlsZVBsYW50",
    "sas": "SasSigHostilePlant0",
    "k8s": "k8shostileplant1",
    "mysql": "mysqlhostileplant2",
    "dbpass": "dbpasshostileplant3",
    "pw": "pwhostileplant4",
    "redis": "redishostileplant5",
    "gitlab": "glpat-Hx3dEf6hIj9kLm2nOp5q",
    "npm": "npm_Hx3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3d",
    "google_oauth": "ya29.a0HostilePlantToken_0123456789abcdef",
    "databricks": "dapi0123456789abcdef0123456789abcdee",
    "sendgrid": "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",
    "slack_hook": "T0HOSTILE/B0HOSTILE/slackhookhostile0123456",
    "pgp": "lQOYBGZ0hostilepgp",
    "openai_glued": "sk-proj-7hT2kQ7mX1vB4nZ6cR8wL0yH3jD5gShostile",
    "escaped_hf": "hf_Hz9LmN2pR4sT6vW8yZ0aB1cD3eF5gH9jKesc",
    "escaped_pw": "pwescapedhostile6",
    "escaped_pg": "pgescapedhostile7",
    "escaped_key": "pwdupplant",  # under a key written as escapes only
}
S = SECRETS

# strings that would act on a terminal: escape sequences, a forged summary row, a bidi override
CONTROL_NAMES = [
    "aten::mm\x1b[2J\x1b[H",
    "\x1b]0;pwned\x07title",
    "bell\x07\x07",
    "row\r\nFAKE: line 1  50.0%",
    "rtl\u202eevil",
    "c1\x9b31m",
]


def _event(name, ts, dur, cat="cpu_op", pid=1, tid=1, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def _launch_pair(name, kernel, ts, ext, corr):
    """A cpu_op, its launch and its kernel, linked by correlation."""
    return [
        _event(name, ts, 30, **{"External id": ext}),
        _event("cudaLaunchKernel", ts + 2, 5, cat="cuda_runtime", correlation=corr, **{"External id": ext}),
        _event(kernel, ts + 10, 15, cat="kernel", pid=0, tid=7, device=0, stream=7, correlation=corr),
    ]


DEVICE = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85520809984, "computeMajor": 9, "numSms": 132}]


def _doc(events, **meta):
    return dict({"schemaVersion": 1, "deviceProperties": DEVICE}, **meta, traceEvents=events)


def secrets_trace():
    """Every kind of secret that once leaked, in the metadata, names and args; three JSON-escaped."""
    meta = {
        "cmdline": f"python train.py --hf-token {S['hf']} MYSQL_PWD={S['mysql']} --db-pass {S['dbpass']}",
        "storage": f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={S['azure']};EndpointSuffix=x",
        "blob": f"https://a.blob.core.windows.net/c?sv=2022&sig={S['sas']}&sp=r",
        "pod_env": [{"value": S["k8s"], "name": "HF_TOKEN"}, {"name": "HOME", "value": "/root"}],
        "cache": f"redis://:{S['redis']}@cache:6379",
        "notes": f"{S['gitlab']} {S['npm']} {S['google_oauth']} {S['databricks']} {S['sendgrid']}",
        "hook": f"https://hooks.slack.com/services/{S['slack_hook']}",
        "signing": f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{S['pgp']}\n-----END PGP PRIVATE KEY BLOCK-----",
    }
    events = _launch_pair("aten::mm", f"kern_{S['openai_glued']}", 10, 1, 7)
    events += _launch_pair("aten::add", "void add_kernel<float>()", 100, 2, 8)
    events.append(
        _event(
            "load",
            200,
            20,
            cat="user_annotation",
            cfg=f'Cfg(pw="{S["pw"]}")',
            note=S["escaped_hf"],
            password=S["escaped_pw"],
            db=f"postgres://u:{S['escaped_pg']}@db/x",
        )
    )
    text = json.dumps(_doc(events, **meta))
    for plain, hidden in (
        (f'"{S["escaped_hf"]}"', '"hf\\u005f' + S["escaped_hf"][3:] + '"'),
        ('"password": ', '"pass\\u0077ord": '),
        (f'"postgres://u:{S["escaped_pg"]}@', f'"postgres:\\/\\/u:{S["escaped_pg"]}@'),
    ):
        assert text.count(plain) == 1, plain
        text = text.replace(plain, hidden)
    return text.encode()


def control_trace():
    """Op, kernel and annotation names that hold terminal control characters."""
    events = []
    for i, name in enumerate(CONTROL_NAMES):
        events += _launch_pair(name, f"kernel {name}", 100 * i + 10, i + 1, 50 + i)
        events.append(_event(f"ProfilerStep#{i} {name}", 100 * i + 5, 60, cat="user_annotation"))
    return json.dumps(_doc(events)).encode()


def huge_name_trace(mb=10):
    """One op with a name of `mb` megabytes."""
    events = _launch_pair("aten::" + "x" * (mb << 20), "void k()", 10, 1, 7) + _launch_pair("aten::mm", "void g()", 100, 2, 8)
    return json.dumps(_doc(events)).encode()


def outlier_trace():
    """Ordinary steps, and one kernel at ts 0 far before them (a clock that was not set)."""
    base = 1_700_000_000_000_000  # µs
    events = []
    for i in range(20):
        events += _launch_pair("aten::mm", "void gemm()", base + 1000 * i, i + 1, 100 + i)
    events.append(_event("void stray()", 0, 5, cat="kernel", pid=0, tid=7, device=0, stream=7, correlation=999))
    return json.dumps(_doc(events)).encode()


def odd_json_trace():
    """Duplicate keys, a lone surrogate, exponents and a key that is only escapes."""
    return (
        b'{"schemaVersion": 1, "traceEvents": ['
        b'{"ph": "X", "cat": "cpu_op", "name": "a", "name": "b\\ud800", "pid": 1, "tid": 1, "ts": 1e1, "dur": 5,'
        b' "args": {"\\u0070\\u0077": "pwdupplant", "n": 1E+400}},'
        b'{"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 20, "dur": 5}]}'
    )


FILES = {
    "secrets.json": secrets_trace,
    "secrets.json.gz": lambda: gzip.compress(secrets_trace()),
    "control.json": control_trace,
    "huge_name.json": huge_name_trace,
    "outlier.json": outlier_trace,
    "odd_json.json": odd_json_trace,
    "truncated.json": lambda: secrets_trace()[:-300],
    "binary.json": lambda: bytes(range(256)) * 4,
}


def build(directory):
    """Write every file of the corpus into `directory`; {name: path}."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, make in FILES.items():
        (d / name).write_bytes(make())
        out[name] = d / name
    return out


if __name__ == "__main__":
    for path in build(sys.argv[1]).values():
        print(path)
