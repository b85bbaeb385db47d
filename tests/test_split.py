"""Reading one file in parts (read/split.py) gives exactly what reading it whole gives.

The reference is the ordinary one-pass reader, itself checked event by event against
json+Decimal on the whole corpus (test_reader_corpus.py). Files are cut even when small
(MIN_BYTES is lowered), into 2 and 3 parts.
"""

import gzip
import json
import shutil

import pyarrow.parquet as pq
import pytest
from conftest import CORPUS, DATA_TRACE
from reference import short

from tracecols.errors import Malformed
from tracecols.pipeline import read_tables, write_events
from tracecols.read import split
from tracecols.read.kineto import read_head
from tracecols.read.source import Source


@pytest.fixture
def cut_small_files(monkeypatch):
    # the Python reader's processes: the compiled reader cuts a file between its threads itself
    monkeypatch.setenv("TRACECOLS_READER", "python")
    monkeypatch.setattr(split, "MIN_BYTES", 0)


def _plain(path, tmp_path):
    """An uncompressed copy of a corpus trace (only those are cut)."""
    out = tmp_path / "plain.json"
    if str(path).endswith(".gz"):
        with gzip.open(path, "rb") as f, open(out, "wb") as g:
            shutil.copyfileobj(f, g)
    else:
        shutil.copyfile(path, out)
    return out


def _both(path, tmp_path, parts):
    whole = write_events([path], tmp_path / "whole.parquet", parts=1)
    cut = write_events([path], tmp_path / "cut.parquet", parts=parts)
    return (whole, pq.read_table(tmp_path / "whole.parquet")), (cut, pq.read_table(tmp_path / "cut.parquet"))


def _plan(path, parts):
    src = Source(path)
    form, _ = read_head(src)
    return split.plan(src, form, parts)


def _assert_same(whole, cut):
    (wi, wt), (ci, ct) = whole, cut
    _assert_same_rows(wt, ct)
    assert len(ci) == len(wi)
    for c, w in zip(ci, wi):
        for key in ("trace_id", "n_events", "metadata", "sha256", "size", "rank", "rank_source", "form", "gzip"):
            assert c[key] == w[key], key


def _assert_same_rows(wt, ct):
    # rows are grouped by kind within each batch, and batches start where parts do: the
    # same rows, in uid (file) order. The JSON text of leftover keys (args, extra) lists them
    # in the order of the first event of their group in the batch: compared as objects.
    order = [("trace_id", "ascending"), ("uid", "ascending")]
    ct, wt = ct.sort_by(order), wt.sort_by(order)
    text = ("args", "extra")
    assert ct.drop_columns(list(text)).equals(wt.drop_columns(list(text)))
    for c in text:
        assert [None if v is None else json.loads(v) for v in ct.column(c).to_pylist()] == [
            None if v is None else json.loads(v) for v in wt.column(c).to_pylist()
        ], c


# A spread of the corpus: old and new torch, AMD, MTIA, NCCL metadata, ns timestamps,
# metadata-heavy heads (the bundled trace), uncompressed files.
_PICK = (
    "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "HolisticTraceAnalysis/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",
    "HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz",
    "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "HolisticTraceAnalysis/tests/data/call_stack/backward_thread.json",
    "kineto/tb_plugin/test/gpu_metrics_input.json",
    "param/et_replay/tests/inputs/dlrm_kineto.tar.gz.extracted/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
    "generated/cpu_train_step.pt.trace.json",
)


def _picked():
    return [DATA_TRACE] + [CORPUS / p for p in _PICK]


@pytest.mark.corpus
@pytest.mark.parametrize("path", _picked(), ids=short)
def test_corpus_trace_cut_in_parts_reads_the_same(path, tmp_path, cut_small_files):
    plain = _plain(path, tmp_path)
    planned = _plan(plain, 3)
    assert planned is not None, "a cut was found"
    whole, cut = _both(plain, tmp_path, 3)
    assert cut[0][0]["parts"] == 3 and whole[0][0]["parts"] == 1
    _assert_same(whole, cut)
    assert sorted(cut[1].column("uid").to_pylist()) == list(range(whole[0][0]["n_events"]))


def _events(n, **extra):
    return [
        dict(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": f"op{i}",
                "pid": 1,
                "tid": 1,
                "ts": 10 * i,
                "dur": 5,
                "args": {"External id": i},
            },
            **extra,
        )
        for i in range(n)
    ]


def test_keys_after_the_events_and_a_rank_only_known_at_the_end(tmp_path, cut_small_files):
    p = tmp_path / "t.json"
    doc = {
        "schemaVersion": 1,
        "traceEvents": _events(500),
        "distributedInfo": {"rank": 5, "world_size": 8},
        "traceName": "x]}",
        "list": [1, [2]],
    }
    p.write_text(json.dumps(doc))
    whole, cut = _both(p, tmp_path, 2)
    assert cut[0][0]["parts"] == 2
    _assert_same(whole, cut)
    assert cut[0][0]["rank"] == 5 and set(cut[1].column("rank").to_pylist()) == {5}
    assert cut[0][0]["metadata"]["traceName"] == "x]}"


def test_a_trace_read_into_memory_is_cut_too_and_gives_the_same_events(tmp_path, cut_small_files, monkeypatch):
    """read_tables (tracecols.open, analyze without -o) reads as write_events does: in parts,
    the rank known only at the end put on every event."""
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": _events(500), "distributedInfo": {"rank": 5, "world_size": 8}}))
    started = []
    start_workers = split.start_workers
    monkeypatch.setattr(split, "start_workers", lambda *a: started.append(a) or start_workers(*a))
    events = read_tables([p])[0]["events"]
    assert [a[-1] for a in started] == [1]  # two processes: one worker beside this one
    write_events([p], tmp_path / "whole.parquet", parts=1)
    _assert_same_rows(pq.read_table(tmp_path / "whole.parquet"), events)
    assert set(events.column("rank").to_pylist()) == {5}


def test_a_bare_event_array(tmp_path, cut_small_files):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(_events(300)) + "\n")
    assert _plan(p, 2) is not None
    whole, cut = _both(p, tmp_path, 2)
    assert cut[0][0]["parts"] == 2
    _assert_same(whole, cut)


def test_a_cut_inside_a_string_is_caught_and_the_file_read_whole(tmp_path, cut_small_files):
    # A quote inside a JSON string is escaped, so `}, {"` can only falsely match where a
    # string *ends* in "}, {": put one such string across the middle of the file.
    ev = _events(20)
    ev[10]["args"]["note"] = "z" * 50_000 + "}, {"
    p = tmp_path / "t.json"
    text = json.dumps({"traceEvents": ev})
    p.write_text(text)
    parts, _ = _plan(p, 2)
    start = text.index('"z')
    assert start < parts[0].end < start + 50_010, "the planned cut is inside the string"
    whole, cut = _both(p, tmp_path, 2)
    assert cut[0][0]["parts"] == 1  # the bad cut was caught: read whole
    _assert_same(whole, cut)
    assert cut[1].num_rows == 20


def test_a_broken_file_gives_the_same_error_as_a_whole_read(tmp_path, cut_small_files):
    p = tmp_path / "t.json"
    text = json.dumps({"traceEvents": _events(400)})
    p.write_text(text[: len(text) * 3 // 4])  # truncated in the last part
    with pytest.raises(Malformed) as whole:
        write_events([p], tmp_path / "a.parquet", parts=1)
    with pytest.raises(Malformed) as cut:
        write_events([p], tmp_path / "b.parquet", parts=2)
    with pytest.raises(Malformed) as in_memory:
        read_tables([p])
    assert str(cut.value) == str(whole.value) == str(in_memory.value) and "truncated" in str(cut.value)


@pytest.mark.parametrize("where", [1, 3], ids=["in-process part", "child part"])
def test_a_number_too_long_for_python_in_a_part_is_the_whole_read_error(tmp_path, cut_small_files, where):
    # ijson's C parser crashes the process on such a number: the part reader is guarded too
    ev = _events(300)
    text = json.dumps({"traceEvents": ev})
    cut = len(text) * where // 4
    at = text.index('"External id": ', cut) + len('"External id": ')
    p = tmp_path / "t.json"
    p.write_text(text[:at] + "9" * 5000 + text[at:].lstrip("0123456789"))
    with pytest.raises(Malformed) as whole:
        write_events([p], tmp_path / "a.parquet", parts=1)
    with pytest.raises(Malformed) as cut_err:
        write_events([p], tmp_path / "b.parquet", parts=2)
    assert str(cut_err.value) == str(whole.value) and "digits" in str(whole.value)


def test_small_files_are_read_whole(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": _events(50)}))
    assert p.stat().st_size < split.MIN_BYTES and _plan(p, 2) is None


@pytest.mark.corpus
@pytest.mark.parametrize("path", [DATA_TRACE, CORPUS / _PICK[2]], ids=short)
def test_gzip_files_are_cut_once_inflated_and_read_the_same(path, tmp_path, cut_small_files):
    assert split.FORK, "these machines run Linux: gzip files are cut in forked parts"
    whole, cut = _both(path, tmp_path, 3)
    assert cut[0][0]["parts"] == 3 and cut[0][0]["gzip"] and whole[0][0]["gzip"]
    _assert_same(whole, cut)


def test_gzip_files_over_the_limit_or_damaged_are_read_as_a_stream(tmp_path, cut_small_files, monkeypatch):
    p = tmp_path / "t.json.gz"
    body = json.dumps({"traceEvents": _events(500)}).encode()
    p.write_bytes(gzip.compress(body[:3000]) + gzip.compress(body[3000:]))  # two members, as gzip allows
    src = Source(p)
    assert split.worth_cutting(src) and split.inflate(src)[0] == body
    monkeypatch.setattr(split, "MIN_BYTES", 10 * len(body))  # its size field says it is small
    assert not split.worth_cutting(src)
    monkeypatch.setattr(split, "MIN_BYTES", 0)
    assert _plan(p, 2) is None, "no plan without the inflated data"
    monkeypatch.setattr(split, "GZIP_MAX", len(body) - 1)
    assert split.inflate(src) is None
    monkeypatch.undo()
    damaged = tmp_path / "d.json.gz"
    z = bytearray(p.read_bytes())
    z[len(z) // 4] ^= 0xFF
    damaged.write_bytes(bytes(z))
    assert split.inflate(Source(damaged)) is None
    with pytest.raises(Malformed) as whole:  # and the stream read names the damage, as before
        write_events([damaged], tmp_path / "w.parquet", parts=1)
    with pytest.raises(Malformed) as cut:
        write_events([damaged], tmp_path / "c.parquet", parts=2)
    assert str(cut.value) == str(whole.value)


@pytest.mark.corpus
def test_two_gzip_traces_in_one_file_each_cut_after_the_other(tmp_path, cut_small_files):
    """The second trace's parts are forked after the writer has taken the first trace's rows."""
    paths = [DATA_TRACE, CORPUS / _PICK[2]]
    whole = write_events(paths, tmp_path / "whole.parquet", parts=1)
    cut = write_events(paths, tmp_path / "cut.parquet", parts=2)
    assert [i["parts"] for i in cut] == [2, 2]
    _assert_same((whole, pq.read_table(tmp_path / "whole.parquet")), (cut, pq.read_table(tmp_path / "cut.parquet")))


def test_pieces_are_shared_out_once_each_between_the_ends():
    """Claims: this process takes pieces from the front, a fork from the back, at the same time;
    every piece goes to exactly one of them, the front's in order from 0."""
    import os

    assert split.FORK
    claims = split.Claims(500)
    first = claims.front()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker's side
        taken = []
        while (i := claims.back()) is not None:
            taken.append(i)
        os.write(w, " ".join(map(str, taken)).encode())
        os._exit(0)
    os.close(w)
    mine = [first]
    while (i := claims.front()) is not None:
        mine.append(i)
    os.waitpid(pid, 0)
    chunks = []
    while b := os.read(r, 1 << 16):
        chunks.append(b)
    os.close(r)
    theirs = [int(x) for x in b"".join(chunks).split()]
    assert mine == list(range(len(mine))) and theirs == list(range(499, len(mine) - 1, -1))
    assert claims.front() is None and claims.back() is None


def test_an_uneven_file_is_read_by_both_processes_in_many_pieces(tmp_path, cut_small_files):
    """Big events in the first half, many small ones in the second (resnet50's shape): cut into
    pieces, read by two processes, the same events in the same order as a whole read."""
    big = _events(300, note="x" * 2000)
    small = _events(6000)
    for k, e in enumerate(small):
        e["ts"] = 10 * (300 + k)
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": big + small}))
    planned = _plan(p, 2 * split.PIECES_PER_PROCESS)
    assert planned is not None and len(planned[0]) == 2 * split.PIECES_PER_PROCESS
    whole, cut = _both(p, tmp_path, 2)
    assert cut[0][0]["parts"] == 2
    _assert_same(whole, cut)


def test_idle_cores_are_the_cores_other_work_leaves(monkeypatch):
    """cpu_count less the one-minute load average, this process's own core counted idle; at least
    one; every core where the machine has no load average."""
    from tracecols.read import split as split_module

    monkeypatch.setattr(split_module, "cpu_count", lambda: 2)
    for load, idle in [(0.1, 2), (1.0, 2), (1.7, 1), (4.5, 1)]:
        monkeypatch.setattr(split_module.os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert split_module.idle_cores() == idle, load
    monkeypatch.setattr(split_module, "cpu_count", lambda: 16)
    monkeypatch.setattr(split_module.os, "getloadavg", lambda: (5.2, 0.0, 0.0))
    assert split_module.idle_cores() == 12

    def none():
        raise OSError("no load average")

    monkeypatch.setattr(split_module.os, "getloadavg", none)
    assert split_module.idle_cores() == 16
