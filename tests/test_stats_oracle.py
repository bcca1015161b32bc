"""scipy as an oracle for the campaign statistics (issue 57, item 5; the core stays numpy):
the Mann-Whitney U test (U, and the p-value of its normal approximation with tie and
continuity corrections), the Wilson score interval, the two-sided Poisson test of the
tail's check, and the percentile bootstrap, each against scipy's on random samples shaped
like a campaign's (small integer scores, many ties)."""

from __future__ import annotations

import numpy as np
import pytest

from e2store.campaign import bootstrap, compare_arms, poisson_p, wilson

stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("seed", range(12))
def test_mann_whitney_as_scipy(seed):
    rng = np.random.default_rng(seed)
    n_a, n_b = rng.integers(3, 400, 2)
    spread = int(rng.integers(2, 30))  # few distinct values: ties, as depths have
    a = rng.integers(0, spread, n_a) + 200
    b = rng.integers(0, spread, n_b) + 200 + int(rng.integers(0, 3))
    ours = compare_arms(a, b)
    theirs = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic",
                                use_continuity=True)
    assert ours.u == pytest.approx(theirs.statistic, abs=1e-9)
    assert ours.p == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-15)
    assert ours.effect == pytest.approx(theirs.statistic / (n_a * n_b))


@pytest.mark.parametrize("k, n", [(0, 10), (1, 10), (5, 10), (10, 10), (3, 1000),
                                  (997, 1000), (250, 521), (12, 521)])
def test_wilson_as_scipy(k, n):
    ours = wilson(k, n)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert (ours.low, ours.high) == pytest.approx((ci.low, ci.high), abs=1e-12)


@pytest.mark.parametrize("seen, expected", [(0, 0.3), (1, 0.3), (3, 13.8), (13, 13.8),
                                            (30, 13.8), (1, 4.0), (9, 4.0)])
def test_the_poisson_check_as_scipy(seen, expected):
    below = stats.poisson.cdf(seen, expected)
    above = stats.poisson.sf(seen - 1, expected)
    assert poisson_p(seen, expected) == pytest.approx(min(1.0, 2 * min(below, above)),
                                                      rel=1e-9)


def test_the_bootstrap_interval_as_scipys():
    """Both percentile bootstraps of one sample's mean, 4,000 resamples each: intervals
    that agree within the resampling noise (a tenth of the interval's width)."""
    rng = np.random.default_rng(7)
    x = rng.integers(440, 466, 3000)
    ours = bootstrap(x, resamples=4000, seed=1)["mean"]
    theirs = stats.bootstrap((x,), np.mean, n_resamples=4000, method="percentile",
                             random_state=2).confidence_interval
    width = theirs.high - theirs.low
    assert ours.value == pytest.approx(x.mean())
    assert abs(ours.low - theirs.low) < 0.1 * width
    assert abs(ours.high - theirs.high) < 0.1 * width
