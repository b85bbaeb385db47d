"""Is a change between two sets of per-step samples beyond noise?

The samples are one number per profiler step (a key's GPU time in that step, the step's
duration …), pooled over the steps of every trace on a side. Steps of one run are not normal:
the first after a pause, a garbage collection, a data-loader stall give long tails. So the test
is rank-based and the size is a robust shift:

- `mann_whitney`: two-sided p-value of the Mann-Whitney U test, by the normal approximation
  with the tie correction and a continuity correction of 1/2. With 5 to 8 samples a side it is
  within 0.01 of the exact permutation p wherever that lies between 0.01 and 0.2 (checked in
  tests/test_noise.py), and closer with more samples.
- `hodges_lehmann`: the median of every difference b - a (the shift of B against A that the
  U test is about) and its confidence interval: the order statistics of those differences
  at the U distribution's normal-approximation quantiles.
- `benjamini_hochberg`: q-values, so that a comparison of hundreds of kernels at once does not
  report the few that pass a per-row test by chance.
"""

import math

import numpy as np

# Above this many pairwise differences the sides are thinned to evenly spaced order statistics
# (a lake of thousands of steps a side): the shift and its interval move by far less than the
# noise they measure, and the cost stays bounded per row.
MAX_PAIRS = 200_000


def _phi_upper(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _z_quantile(p: float) -> float:
    """z with P(Z > z) = p, by bisection on erfc (no table, no scipy)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if _phi_upper(mid) > p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def mann_whitney(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sided p-value that samples `a` and `b` come from one distribution; None when a side
    has fewer than two samples (no spread to compare against)."""
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return None
    both = np.concatenate([np.asarray(a, np.float64), np.asarray(b, np.float64)])
    order = np.argsort(both, kind="stable")
    ranks = np.empty(len(both), np.float64)
    sorted_vals = both[order]
    # average ranks of ties
    starts = np.flatnonzero(np.r_[True, sorted_vals[1:] != sorted_vals[:-1]])
    ends = np.r_[starts[1:], len(both)]
    avg = (starts + ends + 1) / 2.0  # ranks are 1-based
    ranks[order] = np.repeat(avg, ends - starts)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    n = n1 + n2
    t = (ends - starts).astype(np.float64)
    var = n1 * n2 / 12.0 * ((n + 1) - (t**3 - t).sum() / (n * (n - 1)))
    if var <= 0:  # every sample equal: nothing differs
        return 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    return min(1.0, 2.0 * _phi_upper(max(z, 0.0)))


def _thin(x: np.ndarray, k: int) -> np.ndarray:
    s = np.sort(x)
    if len(s) <= k:
        return s
    return s[np.round(np.linspace(0, len(s) - 1, k)).astype(np.int64)]


def hodges_lehmann(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> tuple[float, float | None, float | None]:
    """(shift, low, high): the median of the differences b_j - a_i and its `confidence`
    interval (None, None when a side has fewer than two samples)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if len(a) * len(b) > MAX_PAIRS:
        k = int(math.sqrt(MAX_PAIRS))
        a, b = _thin(a, k), _thin(b, k)
    d = np.sort((b[None, :] - a[:, None]).ravel())
    shift = float(np.median(d))
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return shift, None, None
    z = _z_quantile((1 - confidence) / 2)
    m = len(d)
    k = int(math.floor(n1 * n2 / 2.0 - z * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12.0)))
    k = max(0, min(k, m // 2 - (1 - m % 2)))
    return shift, float(d[k]), float(d[m - 1 - k])


def benjamini_hochberg(p: list[float | None]) -> list[float | None]:
    """q-values of the p-values `p` (None stays None and does not count among the tests)."""
    idx = [i for i, v in enumerate(p) if v is not None]
    m = len(idx)
    out: list[float | None] = [None] * len(p)
    if not m:
        return out
    order = sorted(idx, key=lambda i: p[i])  # type: ignore[arg-type, return-value]
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, float(p[i]) * m / rank)  # type: ignore[arg-type]
        out[i] = running
    return out
