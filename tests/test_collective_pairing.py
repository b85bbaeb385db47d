"""Collectives paired across ranks by the sequence number the trace records, by call order
otherwise (collectives.paired_by, collective_skew.paired_by).

HTA's sampled rank pair (ranks 0 and 1 of one job, ten NCCL kernels each) is edited in copies:
every NCCL kernel gets the process group's sequence number in its args (`Seq`, as recent PyTorch
writes it: the call's place in rank 0's order, the k-th call of each collective being the same
call on every rank; the two ranks interleave their collectives differently); on rank 1 the
first alltoall is dropped (the rank skipped that call) and its first two allreduces carry each
other's number (issued in the other order). Pairing by the recorded number pairs what was meant; call order cannot.
"""

import copy
import gzip
import json
from collections import Counter
from decimal import Decimal

import pytest
from conftest import CORPUS
from test_fleet import reference

import tracecols

pytestmark = pytest.mark.corpus

PAIR = CORPUS / "HolisticTraceAnalysis/tests/data/trace_filter"


def _number(v):
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    raise TypeError(type(v))


def _nccl(doc):
    ks = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel" and e["name"].startswith("nccl")]
    return sorted(ks, key=lambda e: e["ts"])


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """{with_seq: (paths, {rank: {kernel start µs: its Seq}})}."""
    docs = {}
    for src in sorted(PAIR.glob("*.json.gz")):
        doc = json.loads(gzip.decompress(src.read_bytes()), parse_float=Decimal)
        docs[doc["distributedInfo"]["rank"]] = (src, doc)
    # which collective each NCCL kernel ran, from the plain reference (its nccl: annotation)
    kinds = {rank: [c[0] for c in reference(src)[3]] for rank, (src, _) in docs.items()}
    assert Counter(kinds[0]) == Counter(kinds[1]) and kinds[0] != kinds[1]  # the ranks interleave them differently
    # the group's number of each call: its place in rank 0's order, the k-th call of a
    # collective being the same call on every rank
    number = {}
    for i, kind in enumerate(kinds[0]):
        number.setdefault(kind, []).append(i)
    out = {}
    for with_seq in (True, False):
        d = tmp_path_factory.mktemp("seq" if with_seq else "order")
        paths, seqs = [], {}
        for rank, (src, doc) in docs.items():
            doc = copy.deepcopy(doc)
            ks = _nccl(doc)
            seen = Counter()
            for k, kind in zip(ks, kinds[rank]):
                k["args"]["Seq"] = number[kind][seen[kind]]
                seen[kind] += 1
            if rank == 1:
                ar = [k for k, kind in zip(ks, kinds[1]) if kind == "allreduce"]
                # issued in the other order
                ar[0]["args"]["Seq"], ar[1]["args"]["Seq"] = ar[1]["args"]["Seq"], ar[0]["args"]["Seq"]
                first = next(k for k, kind in zip(ks, kinds[1]) if kind == "alltoall")
                doc["traceEvents"].remove(first)  # skipped its first alltoall
                ks.remove(first)
            if not with_seq:
                for k in ks:
                    del k["args"]["Seq"]
            seqs[rank] = {int(k["ts"]): k["args"].get("Seq") for k in ks}
            p = d / src.name.replace(".gz", "")
            p.write_text(json.dumps(doc, default=_number))
            paths.append(p)
        out[with_seq] = (paths, seqs)
    return out


def _partners(t):
    """{(collective, seq): {rank: kernel start µs}} from collective_skew's pairing."""
    rows = t.sql("""SELECT s.collective, s.seq, s.paired_by, c.rank, c.ts_ns
                    FROM collective_skew s JOIN collectives c
                      ON c.pg_key = s.pg_key AND c.collective = s.collective AND c.match_seq = s.seq""").rows()
    out = {}
    for coll, seq, _, rank, ts in rows:
        out.setdefault((coll, seq), {})[rank] = ts // 1000
    return out, {r[2] for r in rows}


def test_paired_by_recorded_sequence_number(pair):
    paths, seqs = pair[True]
    t = tracecols.open(*paths)
    c = t.sql("SELECT rank, ts_ns, trace_seq, paired_by FROM collectives ORDER BY rank, ts_ns").rows()
    assert {r[3] for r in c} == {"seq"}
    assert [(r[0], r[2]) for r in c] == [(rank, s) for rank in (0, 1) for _, s in sorted(seqs[rank].items())]
    partners, how = _partners(t)
    assert how == {"seq"}
    # every instance joins the two ranks' kernels that carry the same number
    for (_coll, seq), by_rank in partners.items():
        for rank, ts in by_rank.items():
            assert seqs[rank][ts] == seq
    skew = {(r["collective"], r["seq"]): r for r in t.sql("SELECT * FROM collective_skew").to_dicts()}
    assert len(skew) == 10
    assert skew[("alltoall", 0)]["ranks"] == 1
    assert sum(r["ranks"] for r in skew.values()) == 19
    assert all(r["ranks"] == 2 for k, r in skew.items() if k != ("alltoall", 0))


def test_paired_by_call_order_without_numbers(pair):
    paths, _ = pair[False]
    _, truth = pair[True]  # what each kernel's number would have been
    t = tracecols.open(*paths)
    assert set(t.sql("SELECT DISTINCT paired_by FROM collectives")["paired_by"]) == {"order"}
    assert set(t.sql("SELECT DISTINCT trace_seq FROM collectives")["trace_seq"]) == {None}
    partners, how = _partners(t)
    assert how == {"order"}
    # call order pairs rank 1's first alltoall (really Seq 1) with rank 0's first (Seq 0), and
    # its first allreduce (Seq 3) with rank 0's first (Seq 2): the calls the numbers keep apart
    wrong = {
        (coll, seq)
        for (coll, seq), by_rank in partners.items()
        if len(by_rank) == 2 and truth[0][by_rank[0]] != truth[1][by_rank[1]]
    }
    assert ("alltoall", 0) in wrong and ("allreduce", 0) in wrong and ("allreduce", 1) in wrong
    assert len(partners) == 10 and sum(len(v) for v in partners.values()) == 19
