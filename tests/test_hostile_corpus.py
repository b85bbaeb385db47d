"""The hostile corpus (tests/hostile_corpus.py) through every command that prints or writes
trace content: each ends with exit code 0, or 2 and one line that is not an internal error; no
planted secret reaches any byte of any output (Parquet read back, HTML, JSON, the augmented trace
decoded, the merged trace decoded); nothing a trace holds reaches the terminal as a control character."""

import json
import re

import pytest
from hostile_corpus import CONTROL_NAMES, SECRETS, build
from test_secrets import _all_text, run

# what a trace can make the CLI print: C0 controls but the newline and tab the CLI writes itself,
# DEL, C1 controls and the bidi/format controls that reorder or hide text
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build(tmp_path_factory.mktemp("hostile"))


def _commands(path, out):
    return {
        "info": (["info", path], None),
        "analyze": (["analyze", path], None),
        "analyze -o": (["analyze", path, "-o", out / "an"], out / "an"),
        "report": (["report", path, "-o", out / "r.html"], out / "r.html"),
        "sql": (["sql", path, "select name, args from events order by uid"], None),
        "sql json": (["sql", path, "select * from events order by uid", "--format", "json"], None),
        "augment": (["augment", path, out / "aug.json"], out / "aug.json"),
        "merge": (
            ["merge", path, "-o", out / "merged.json", "--overlay", "critical-path,queue-depth,memory-bw"],
            out / "merged.json",
        ),
    }


def _augmented(path):
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    try:
        return text + json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        return text


@pytest.mark.parametrize(
    "name",
    [
        "secrets.json",
        "secrets.json.gz",
        "control.json",
        "huge_name.json",
        "outlier.json",
        "odd_json.json",
        "truncated.json",
        "binary.json",
    ],
)
def test_every_command_over_the_hostile_corpus(corpus, tmp_path, name):
    path = corpus[name]
    for what, (args, output) in _commands(path, tmp_path).items():
        if name == "huge_name.json" and what in ("sql json", "augment", "merge"):
            continue  # they print or copy the 10 MB name whole, as asked
        r = run(*args)
        out, err = r.stdout.decode(), r.stderr
        assert r.returncode in (0, 2), (name, what, err)
        if r.returncode == 2:
            assert err.count("\n") == 1 and err.startswith("tracecols: "), (name, what, err)
            assert "internal error" not in err and "Traceback" not in err, (name, what, err)
            assert output is None or not output.exists(), (name, what)
        written = ""
        if output is not None and output.exists():
            written = _augmented(output) if what in ("augment", "merge") else _all_text(output)
        text = out + err + written
        leaks = [k for k, s in SECRETS.items() if s in text]
        assert not leaks, (name, what, leaks)
        if what != "sql json":  # JSON escapes control characters itself
            assert not RAW_CONTROL.search(out + err), (name, what, RAW_CONTROL.search(out + err))


def test_the_corpus_plants_what_it_checks(corpus, tmp_path):
    """With --keep-secrets the same commands show the planted secrets and names: the checks above can fail."""
    r = run("sql", corpus["secrets.json"], "select * from events", "--format", "json", "--keep-secrets")
    r2 = run("sql", corpus["secrets.json"], "select metadata from traces", "--format", "json", "--keep-secrets")
    text = r.stdout.decode() + r2.stdout.decode()
    assert [k for k, s in SECRETS.items() if s not in text and k != "escaped_key"] == []
    assert run("augment", corpus["secrets.json"], tmp_path / "kept.json", "--keep-secrets").returncode == 0
    assert (tmp_path / "kept.json").read_bytes() == corpus["secrets.json"].read_bytes()
    r = run("sql", corpus["control.json"], "select name from events", "--format", "json")
    names = {json.loads(line)["name"] for line in r.stdout.decode().splitlines()}
    assert set(CONTROL_NAMES) <= names  # the tables keep every byte; only the terminal view escapes


def test_huge_name_report_is_bounded(corpus, tmp_path):
    r = run("report", corpus["huge_name.json"], "-o", tmp_path / "r.html")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.html").stat().st_size < 5 << 20  # labels are cut; the tables keep the name
