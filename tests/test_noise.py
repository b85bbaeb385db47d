"""The statistics behind `compare`'s "beyond noise", each against a plain reference: the exact
permutation distribution of U, every pairwise difference written out, q-values by hand."""

import itertools
import random
import statistics

import numpy as np
import pytest

from tracecols.model.noise import benjamini_hochberg, hodges_lehmann, mann_whitney


def _u(xs, ys):
    return sum((x > y) + 0.5 * (x == y) for x in xs for y in ys)


def _exact_p(a, b):
    """Two-sided permutation p of U: the share of every relabelling of the pooled samples whose
    U lies at least as far from its mean as the observed one."""
    pooled, n1 = list(a) + list(b), len(a)
    mu, u0 = n1 * len(b) / 2, _u(a, b)
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), n1):
        picked = set(chosen)
        xs = [pooled[i] for i in chosen]
        ys = [pooled[i] for i in range(len(pooled)) if i not in picked]
        total += 1
        hits += abs(_u(xs, ys) - mu) >= abs(u0 - mu) - 1e-9
    return hits / total


def test_mann_whitney_is_close_to_the_exact_permutation_p():
    rng = random.Random(7)
    checked = 0
    for n1, n2 in [(5, 5), (6, 6), (5, 8), (7, 7)]:
        for _ in range(25):
            shift = rng.choice([0.0, 1.0, 1.5])
            a = [rng.gauss(0, 1) for _ in range(n1)]
            b = [rng.gauss(shift, 1) for _ in range(n2)]
            exact = _exact_p(a, b)
            if 0.01 < exact < 0.2:
                checked += 1
                assert mann_whitney(np.array(a), np.array(b)) == pytest.approx(exact, abs=0.01)
    assert checked >= 10


def test_mann_whitney_with_ties_and_edge_cases():
    # all equal: nothing differs; one sample a side: nothing to test
    assert mann_whitney(np.array([3.0, 3.0, 3.0]), np.array([3.0, 3.0])) == 1.0
    assert mann_whitney(np.array([1.0]), np.array([2.0, 3.0])) is None
    # fully separated samples of 10: exact two-sided p = 2 / C(20, 10)
    p = mann_whitney(np.arange(10.0), np.arange(10.0) + 100)
    assert p < 0.001
    # heavy ties: the tie-corrected variance, against the exact p
    a, b = [1, 1, 2, 2, 2, 3], [2, 3, 3, 3, 4, 4]
    assert mann_whitney(np.array(a, float), np.array(b, float)) == pytest.approx(_exact_p(a, b), abs=0.02)


def test_hodges_lehmann_is_the_median_pairwise_difference():
    rng = random.Random(3)
    a = [rng.uniform(0, 10) for _ in range(9)]
    b = [rng.uniform(2, 12) for _ in range(11)]
    diffs = sorted(y - x for x in a for y in b)
    shift, lo, hi = hodges_lehmann(np.array(a), np.array(b))
    assert shift == pytest.approx(statistics.median(diffs))
    # the interval: order statistics k+1 and m-k of the differences, k from U's normal quantile
    k = int(9 * 11 / 2 - 1.959963984540054 * (9 * 11 * 21 / 12) ** 0.5)
    assert (lo, hi) == (pytest.approx(diffs[k]), pytest.approx(diffs[len(diffs) - 1 - k]))
    assert lo <= shift <= hi
    assert hodges_lehmann(np.array([1.0]), np.array([4.0, 6.0]))[1:] == (None, None)


def test_benjamini_hochberg_by_hand():
    p = [0.01, 0.04, None, 0.03, 0.5]
    # sorted: 0.01 (rank 1), 0.03 (2), 0.04 (3), 0.5 (4); m = 4
    # raw: 0.04, 0.06, 0.0533, 0.5; running minimum from the largest rank down
    assert benjamini_hochberg(p) == [
        pytest.approx(0.04),
        pytest.approx(0.16 / 3),
        None,
        pytest.approx(0.16 / 3),
        pytest.approx(0.5),
    ]
    assert benjamini_hochberg([None, None]) == [None, None]
