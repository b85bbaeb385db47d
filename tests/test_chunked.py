"""The chunked event decoder (read/chunked.py) against the plain ijson read it stands in for.

The reference is the same Items object with the fast path switched off: everything handed
to ijson from byte 0 (Items._hand_over), which is how the reader worked before chunking. Both must give the
same elements (same Python types: int, Decimal, str, list, dict), the same bytes after the
array, the same errors; the fast path must actually have been taken where it can be.
"""

import io
import json
import re
from decimal import Decimal

import ijson
import pytest
from conftest import CORPUS
from corpus_files import kineto_files, rel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracecols.read.chunked as chunked
from tracecols.errors import Malformed
from tracecols.read.chunked import Items
from tracecols.read.jsontext import Exact
from tracecols.read.kineto import _Tap, parse_tail, read_trace
from tracecols.read.toplevel import one_line


def _ijson_items(reader, prefix):
    return ijson.items(reader, prefix, use_float=False)


class _Counting:
    """Stands in for chunked._DECODE and counts the elements the fast path decoded."""

    def __init__(self):
        self.elements = 0

    def decode(self, b):
        out = _REAL_DECODE.decode(b)
        if isinstance(out, list):
            self.elements += len(out)
        return out


_REAL_DECODE = chunked._DECODE


def _read(doc, prefix="traceEvents.item", fast=True):
    """(elements, tail bytes after the array, elements decoded by the fast path)."""
    items = Items(io.BytesIO(doc), prefix, _ijson_items, _Tap)
    counter = _Counting()
    chunked._DECODE = counter
    try:
        it = iter(items) if fast else (e for run in items._hand_over(b"", b"", 0) for e in run)
        got = list(it)
    finally:
        chunked._DECODE = _REAL_DECODE
    return got, items.tap.tail_bytes(), counter.elements


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few hundred bytes, so that a small document is cut in many places."""
    monkeypatch.setattr(chunked, "READ", 64)
    monkeypatch.setattr(chunked, "BLOCK", 256)


def _events(n):
    return [
        {
            "ph": "X",
            "name": f"op{i}",
            "ts": Decimal(f"{i}.125"),
            "dur": i,
            "pid": 1,
            "tid": 2,
            "args": {"shape": [[i, 3]], "big": 2**70 + i},
        }
        for i in range(n)
    ]


def _json(v):
    """JSON text with Decimals written as the exact numbers they are."""
    return re.sub(r'"@D([^"]*)@"', r"\1", json.dumps(v, default=lambda d: f"@D{d}@", ensure_ascii=False))


def _doc(events, head=None, tail=None):
    parts = [f'"{k}": {_json(v)}' for k, v in (head or {}).items()]
    parts.append('"traceEvents": [' + ", ".join(_json(e) for e in events) + "]")
    parts += [f'"{k}": {_json(v)}' for k, v in (tail or {}).items()]
    return ("{" + ", ".join(parts) + "}").encode()


def test_doc_helper_writes_exact_decimals():
    got = json.loads(_doc(_events(2)), parse_float=Decimal)["traceEvents"]
    assert got[1]["ts"] == Decimal("1.125") and got[1]["args"]["big"] == 2**70 + 1


def test_many_blocks_same_elements_and_fast_path_taken(small_blocks):
    doc = _doc(_events(300), head={"schemaVersion": 1}, tail={"deviceProperties": [{"id": 0}]})
    fast, tail, decoded = _read(doc)
    slow, slow_tail, _ = _read(doc, fast=False)
    assert fast == slow and len(fast) == 300
    # an exact Decimal (jsontext.Exact: one pyarrow will not truncate into an integer column)
    assert type(fast[7]["ts"]) is Exact and type(slow[7]["ts"]) is Decimal and type(fast[7]["args"]["big"]) is int
    assert decoded >= 290  # all but the last block's elements
    assert parse_tail(tail) == parse_tail(slow_tail) == {"deviceProperties": [{"id": 0}]}


def test_elements_holding_lists_of_objects_are_cut_between_elements(small_blocks, monkeypatch):
    """An ET node's attrs are a list of objects: most `}, {` lie inside a node, and a part cut
    there does not decode. Cuts go before an element opening with the first element's key, so
    the parts decode and none is left to ijson."""
    nodes = [
        {"id": i, "name": f"aten::op{i}", "attrs": [{"name": k, "type": "uint64", "value": i} for k in ("rf_id", "tid", "scope")]}
        for i in range(300)
    ]
    doc = json.dumps({"schema": "1.1.1", "nodes": nodes, "finish_ts": 5}).encode()
    failed = []

    class Failing:
        def decode(self, b):
            try:
                return _REAL_DECODE.decode(b)
            except ValueError:
                failed.append(len(b))
                raise

    monkeypatch.setattr(chunked, "_DECODE", Failing())
    items = Items(io.BytesIO(doc), "nodes.item", _ijson_items, _Tap)
    got = list(items)
    assert got == nodes and parse_tail(items.tap.tail_bytes()) == {"finish_ts": 5}
    # nothing went to ijson; the only part that failed is the one whose sole cut lay inside the last node
    assert items._counted is None and len(failed) <= 1


def test_cut_inside_a_string_is_never_taken_for_an_element_boundary(small_blocks):
    events = _events(200)
    for i in range(0, 200, 3):
        events[i]["name"] = "a}, {b" * (i % 7 + 1)  # the cut pattern inside a string
        events[i]["args"]["s"] = ['}, {"ph": "X"}', "]}"]
    doc = _doc(events, tail={"traceName": "x}, {y"})
    fast, tail, decoded = _read(doc)
    slow, slow_tail, _ = _read(doc, fast=False)
    assert fast == slow and parse_tail(tail) == parse_tail(slow_tail) == {"traceName": "x}, {y"}


def test_keys_after_the_array_with_the_cut_pattern(small_blocks):
    tail = {"deviceProperties": [{"id": i, "name": "gpu"} for i in range(50)], "baseTimeNanoseconds": 2**62}
    fast, got_tail, _ = _read(_doc(_events(100), tail=tail))
    assert len(fast) == 100 and parse_tail(got_tail) == tail


def test_key_named_in_the_head_before_the_array(small_blocks):
    head = {"note": '"traceEvents": [', "traceEvents_x": [1], "m": {"traceEvents": []}}
    doc = _doc(_events(80), head=head)
    fast, _, decoded = _read(doc)
    assert fast == _read(doc, fast=False)[0] and len(fast) == 80 and decoded > 0


def test_bare_array_and_empty_array(small_blocks):
    doc = json.dumps([{"ph": "i", "name": f"m{i}", "ts": i} for i in range(100)]).encode()
    fast, _, decoded = _read(doc, prefix="item")
    assert fast == json.loads(doc) and decoded > 0
    for doc in (b'{"traceEvents": []}', b'{"a": 1, "traceEvents": [], "b": [2]}', b"[]", b" [ ] "):
        prefix = "item" if doc.strip().startswith(b"[") else "traceEvents.item"
        got, tail, _ = _read(doc, prefix=prefix)
        assert got == [] and got == _read(doc, prefix=prefix, fast=False)[0]


def test_one_element_bigger_than_any_block_goes_to_ijson(small_blocks):
    events = _events(40)
    events[10]["args"]["huge"] = list(range(2000))  # no `}, {` for far more than 4 blocks
    doc = _doc(events)
    fast, _, decoded = _read(doc)
    assert fast == _read(doc, fast=False)[0]
    assert decoded <= 10  # the fast path stopped before the huge element


# (a number too long for Python is stopped before either parser by source.py's digit guard)
@pytest.mark.parametrize("bad", [b'"name": "\xff\xfe"', b'"x": NaN'])
def test_values_msgspec_declines_are_left_to_ijson(small_blocks, bad):
    doc = _doc(_events(60))
    i = doc.index(b'"name": "op30"')
    doc = doc[:i] + bad + doc[i + len(b'"name": "op30"') :]
    try:
        slow = _read(doc, fast=False)[0]
    except ijson.JSONError as e:
        with pytest.raises(ijson.JSONError) as fast_err:
            _read(doc)
        assert one_line(fast_err.value) == one_line(e)  # yajl's snippet lines differ
    else:
        fast, _, decoded = _read(doc)
        assert fast == slow and 0 < decoded <= 30


def test_lone_surrogates_are_read_as_the_json_module_reads_them(small_blocks):
    # msgspec refuses them and ijson's C backend turns them into '?' or fails; the json module
    # reads them, exactly, as the reference does
    doc = _doc(_events(60))
    for k in (30, 59):  # in a block before the last, and in the last
        i = doc.index(b'"name": "op%d"' % k)
        doc = doc[:i] + b'"name": "a\\udfff\\ud800b"' + doc[i + len(b'"name": "op%d"' % k) :]
    fast, _, decoded = _read(doc)
    ref = json.loads(doc, parse_float=Decimal)["traceEvents"]
    assert fast == ref and fast[30]["name"] == fast[59]["name"] == "a\udfff\ud800b" and decoded == 60


def test_malformed_json_mid_file_gives_the_plain_error_near_the_same_byte(tmp_path):
    events = _events(20000)  # several real 4 MB blocks
    doc = _doc(events)
    pos = doc.index(b'"name": "op15000"')
    doc = doc[:pos] + b'"name" "op15000"' + doc[pos + len(b'"name": "op15000"') :]
    p = tmp_path / "bad.json"
    p.write_bytes(doc)
    errors = []
    for fast in (True, False):
        orig = Items.runs
        if not fast:
            Items.runs = lambda self: self._hand_over(b"", b"", 0)
        try:
            with pytest.raises(Malformed) as e:
                read_trace(str(p), lambda b: None)
        finally:
            Items.runs = orig
        errors.append(e.value)
    fast_err, slow_err = errors
    assert str(fast_err).split(" (near byte")[0] == str(slow_err).split(" (near byte")[0]
    assert fast_err.message == slow_err.message
    for err in errors:  # each read stopped within two reads past the bad byte
        assert pos < err.offset <= pos + 2 * chunked.READ + (1 << 16)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(st.text(alphabet=st.sampled_from('ab}{,] ["\\\u00e9\u4e2d\n\t'), max_size=12), min_size=0, max_size=60),
    numbers=st.lists(
        st.one_of(st.integers(-(2**80), 2**80), st.decimals(allow_nan=False, allow_infinity=False, places=4)),
        min_size=1,
        max_size=5,
    ),
    read=st.integers(1, 300),
    block=st.integers(1, 2000),
    spaces=st.sampled_from(["", " ", "\n  "]),
)
def test_random_documents_decode_as_ijson_does(monkeypatch, names, numbers, read, block, spaces):
    monkeypatch.setattr(chunked, "READ", read)
    monkeypatch.setattr(chunked, "BLOCK", block)
    events = [{"name": n, "args": {"v": numbers, "n": len(n)}} for n in names]
    body = ("," + spaces).join(_json(e) for e in events).encode()
    doc = b'{"schemaVersion": 1,' + spaces.encode() + b'"traceEvents": [' + body + b'], "t": "}, {"}'
    fast, tail, _ = _read(doc)
    slow, slow_tail, _ = _read(doc, fast=False)
    assert fast == slow == events
    assert parse_tail(tail) == parse_tail(slow_tail) == {"t": "}, {"}


_SAMPLE = [p for p in kineto_files() if p.stat().st_size < (8 << 20)][::6]


@pytest.mark.parametrize("path", _SAMPLE, ids=[rel(p) for p in _SAMPLE])
def test_corpus_traces_read_the_same_either_way(monkeypatch, path):
    monkeypatch.setattr(chunked, "BLOCK", 1 << 16)  # many blocks even in a small trace

    def read(fast):
        batches = []
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(Items, "runs", lambda self: self._hand_over(b"", b"", 0))
            info = read_trace(str(path), batches.append)
        return info, batches

    (fast_info, fast_b), (slow_info, slow_b) = read(True), read(False)
    assert fast_info == slow_info
    assert [b.to_pylist() for b in fast_b] == [b.to_pylist() for b in slow_b]


def test_the_corpus_sample_is_not_empty():
    assert CORPUS.is_dir() and len(_SAMPLE) >= 5
