"""slices.is_recompute (activation checkpointing) against a plain walk up the tree, and its split
of tracelens_ops_summary on the checkpointed ResNet trace."""

import re

import pytest
from conftest import CORPUS

import tracecols

TRACE = CORPUS / "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"


@pytest.fixture(scope="module")
def trace():
    return tracecols.open(TRACE)


@pytest.mark.corpus
def test_is_recompute_is_being_under_a_recompute_fn_frame(trace):
    s = trace.sql("select uid, parent_uid, cat, name, is_recompute from slices")
    parent = dict(zip(s["uid"], s["parent_uid"]))
    frame = {
        u
        for u, c, n in zip(s["uid"], s["cat"], s["name"])
        if c == "python_function" and "torch/utils/checkpoint.py" in n and re.search("recompute_fn", n)
    }
    want = {}
    for u in s["uid"]:
        x, hit = u, False
        while x is not None:
            if x in frame:
                hit = True
                break
            x = parent[x]
        want[u] = hit
    assert dict(zip(s["uid"], s["is_recompute"])) == want
    assert 0 < sum(want.values()) < len(want)


@pytest.mark.corpus
def test_ops_summary_splits_recomputed_instances(trace):
    # ORACLES.md: TraceLens's reference for this trace has 25 rows for 21 names
    r = trace.sql("""select count(distinct name) AS names, count(distinct (name, is_recompute)) AS rows
                     from tracelens_ops_summary""").row(0, named=True)
    assert (r["names"], r["rows"]) == (21, 25)
    # recomputed forward ops run inside backward: never more instances than the forward ones
    per = trace.sql("""select name, sum("Count") FILTER (WHERE is_recompute) AS rc,
                              sum("Count") FILTER (WHERE NOT is_recompute) AS fw
                       from tracelens_ops_summary group by name having rc is not null""")
    assert per.height > 0 and all(rc <= fw for rc, fw in zip(per["rc"], per["fw"]))
