"""Statistics of a best-score campaign: parameter sets (arms) compared with confidence.

Pure statistics over plain per-restart arrays (numpy; no scipy), one row per restart of
`e2store best` (its deepest depth, its filled score, nodes, seconds), and the
report writer (`campaign_report`: Markdown and PNG plots, written atomically).  The
methods and their models are stated in docs/campaigns.md:

* `arm_stats`: rate, mean and median with percentile-bootstrap 95% intervals, the fraction
  of restarts reaching each depth with its Wilson score interval;
* `compare_arms`: the two-sided Mann-Whitney U test (normal approximation, tie and
  continuity corrections), the common-language effect size and the restarts per arm
  that would make the same effect significant;
* the tail (`e2store.campaign.tail`): expected core-hours to a full board of at least a
  score, where the data can speak for it.

A restart's cost is its search's seconds plus its fill's (`fill_seconds`): every rate and
cost here is per core-second of that sum; the search's own rate is kept beside it.

The depths and target scores follow the board (`board_depths`, `board_targets`): cells-8,
cells-7, cells-6 and joins-14, joins-13, joins-12 of a W x H board (cells = W*H, joins =
2WH - W - H), Eternity II's 248, 249, 250 and 466, 467, 468 on 16x16; the report takes
the board's size from its rows' "cells" and "joins" (`restart_arrays` adds them), and
falls back to Eternity II's when the rows do not say it.  Every caller may give its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile: two-sided 95%, p < 0.05
ALPHA = 0.05
_COUNTS_UP_TO = 4096  # distinct values up to which the bootstrap draws value counts
_CHUNK = 1 << 22  # resampled indices per chunk of the index bootstrap
DEPTHS_BELOW_FULL = (8, 7, 6)  # depths reported: cells - 8, - 7, - 6 (248, 249, 250 on E2)
TARGETS_BELOW_ALL = (14, 13, 12)  # targets: joins - 14, - 13, - 12 (466, 467, 468 on E2)
E2_CELLS, E2_JOINS = 256, 480  # Eternity II's 16x16: the thresholds when no size is known


@dataclass(frozen=True)
class Estimate:
    """A value with its 95% interval [low, high]."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class ArmStats:
    """One arm's restarts summarised (`arm_stats`)."""

    restarts: int
    rate: float  # placements (search nodes) per core-second: nodes / (search + fill seconds)
    seconds_per_restart: float  # mean core-seconds of a restart: its search and its fill
    depth_mean: Estimate  # bootstrap intervals
    depth_median: Estimate
    filled_mean: Estimate
    filled_median: Estimate
    reach: dict[int, Estimate]  # depth -> fraction of restarts reaching it (Wilson interval)
    search_seconds: float = math.nan  # mean seconds of a restart's search
    fill_seconds: float = 0.0  # mean seconds of a restart's fill and finish (after its search)
    search_rate: float = math.nan  # placements per second of search: nodes / search seconds

    @property
    def restarts_per_hour(self) -> float:
        """Restarts per core-hour (search and fill)."""
        return 3600 / self.seconds_per_restart if self.seconds_per_restart > 0 else math.nan


@dataclass(frozen=True)
class Comparison:
    """Two arms compared by the Mann-Whitney U test (`compare_arms`)."""

    n_a: int
    n_b: int
    u: float  # U of arm A: pairs with A > B, plus half the ties
    z: float  # continuity-corrected, tie-corrected normal deviate (signed: > 0 when A > B)
    p: float  # two-sided
    effect: float  # P(A > B) + 0.5 P(A = B) = U / (n_a n_b)
    significant: bool  # p < 0.05
    restarts_needed: int | None  # n per arm giving p < 0.05 at this effect (None: no effect)
    more_restarts: int  # restarts_needed minus the smaller arm's restarts, at least 0


# -- thresholds -----------------------------------------------------------------------------

def board_depths(cells: int) -> tuple[int, ...]:
    """The depths whose fraction of restarts a report gives, for a board of `cells` cells:
    cells - 8, cells - 7, cells - 6 (248, 249, 250 on Eternity II's 256), those above 0 (a
    board of at most 8 cells has fewer than three)."""
    return tuple(v for v in (int(cells) - k for k in DEPTHS_BELOW_FULL) if v > 0)


def board_targets(joins: int) -> tuple[int, ...]:
    """The scores whose core-hours a report gives, for a board of `joins` inner joins
    (2WH - W - H): joins - 14, joins - 13, joins - 12 (466, 467, 468 on Eternity II's 480),
    those above 0."""
    return tuple(v for v in (int(joins) - k for k in TARGETS_BELOW_ALL) if v > 0)


def _board_size(rows: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
                ) -> tuple[int, int]:
    """(cells, joins) of the board the rows' restarts searched: from their "cells" and
    "joins" arrays (`restart_arrays`), else Eternity II's; ValueError when rows disagree."""
    found = {}
    for key, default in (("cells", E2_CELLS), ("joins", E2_JOINS)):
        values = {int(v) for r in rows.values() if key in r
                  for v in np.unique(np.asarray(r[key]))}
        if len(values) > 1:
            raise ValueError(f"the rows hold restarts of boards of different sizes ({key} "
                             f"{sorted(values)[:4]}): one campaign is one board")
        found[key] = values.pop() if values else default
    return found["cells"], found["joins"]


def report_thresholds(rows: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]], *,
                      depths: Sequence[int] | None = None,
                      targets: Sequence[int] | None = None,
                      ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(depths, targets) of a report on `rows`: those given, else the board's
    (`board_depths`, `board_targets`) of the size the rows say (Eternity II's when they
    do not)."""
    if depths is not None and targets is not None:
        return tuple(int(d) for d in depths), tuple(int(t) for t in targets)
    cells, joins = _board_size(rows)
    return (tuple(int(d) for d in depths) if depths is not None else board_depths(cells),
            tuple(int(t) for t in targets) if targets is not None else board_targets(joins))


# -- intervals -------------------------------------------------------------------------------

def wilson(successes: int, trials: int, z: float = Z95) -> Estimate:
    """The fraction successes / trials with its Wilson score interval (95% by default)."""
    if trials <= 0:
        return Estimate(math.nan, 0.0, 1.0)
    p = successes / trials
    d = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / d
    half = z / d * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Estimate(p, low, high)


def _quantile_of_counts(values: np.ndarray, cum: np.ndarray, n: int) -> np.ndarray:
    """Per row of cumulative counts over sorted `values`: the median of the n values."""
    lo = (cum > (n - 1) // 2).argmax(axis=1)
    hi = (cum > n // 2).argmax(axis=1)
    return (values[lo] + values[hi]) / 2.0


def bootstrap(values, *, resamples: int = 2000, seed: int = 0,
              method: str = "auto") -> dict[str, Estimate]:
    """Mean and median of `values` with percentile-bootstrap 95% intervals.

    Each resample draws len(values) values with replacement.  `method`: "indices" resamples
    index arrays (in chunks); "counts" draws how often each distinct value is drawn (one
    multinomial per resample: the same distribution, far faster for integer scores);
    "auto" takes counts up to 4096 distinct values.  Reproducible with `seed`.
    """
    v = np.asarray(values)
    if len(v) == 0:
        nan = Estimate(math.nan, math.nan, math.nan)
        return {"mean": nan, "median": nan}
    distinct, counts = np.unique(v, return_counts=True)  # integers: no float copy of v
    if method == "auto":
        method = "counts" if len(distinct) <= _COUNTS_UP_TO else "indices"
    if method == "counts":
        return bootstrap_counts(distinct, counts, resamples=resamples, seed=seed)
    if method != "indices":
        raise ValueError(f"unknown bootstrap method {method!r}: auto, counts or indices")
    n = len(v)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    medians = np.empty(resamples)
    x = v.astype(np.float64)
    step = max(1, _CHUNK // n)
    for i in range(0, resamples, step):
        k = min(step, resamples - i)
        sample = x[rng.integers(0, n, size=(k, n))]
        means[i:i + k] = sample.mean(axis=1)
        medians[i:i + k] = np.median(sample, axis=1)
    median = float(_quantile_of_counts(distinct.astype(np.float64),
                                       np.cumsum(counts)[None, :], n)[0])
    return _intervals(float(x.mean()), median, means, medians)


def bootstrap_counts(values, counts, *, resamples: int = 2000,
                     seed: int = 0) -> dict[str, Estimate]:
    """`bootstrap` of the restarts that took each of the distinct `values` (ascending)
    `counts` times: one multinomial draw per resample, memory in the distinct values
    alone (what a report of 10^8 restarts keeps)."""
    distinct = np.asarray(values).astype(np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        nan = Estimate(math.nan, math.nan, math.nan)
        return {"mean": nan, "median": nan}
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    medians = np.empty(resamples)
    pvals = counts / n
    step = max(1, _CHUNK // max(1, len(distinct)))
    for i in range(0, resamples, step):
        k = min(step, resamples - i)
        drawn = rng.multinomial(n, pvals, size=k)
        means[i:i + k] = drawn @ distinct / n
        medians[i:i + k] = _quantile_of_counts(distinct, np.cumsum(drawn, axis=1), n)
    median = float(_quantile_of_counts(distinct, np.cumsum(counts)[None, :], n)[0])
    return _intervals(float(distinct @ counts) / n, median, means, medians)


def _intervals(mean: float, median: float, means: np.ndarray,
               medians: np.ndarray) -> dict[str, Estimate]:
    """The point estimates with the resamples' 2.5% and 97.5% quantiles."""
    out = {}
    for name, point, boot in (("mean", mean, means), ("median", median, medians)):
        lo, hi = np.quantile(boot, [0.025, 0.975])
        out[name] = Estimate(float(point), float(lo), float(hi))
    return out


def arm_stats(depth, filled, nodes, seconds, *, depths: Sequence[int] | None = None,
              resamples: int = 2000, seed: int = 0, cells: int | None = None,
              fill_seconds=None) -> ArmStats:
    """One arm's restarts: cost (`seconds` of search, `fill_seconds` of fill, their sum)
    and rates per core-second of the sum, deepest depth and filled score (mean, median
    with bootstrap intervals) and the fraction reaching each of `depths` (Wilson
    intervals; default: `board_depths(cells)` of a board of `cells` cells, Eternity II's
    248, 249, 250 without `cells`).  `arm_stats_of` on the arrays' value counts."""
    d = np.asarray(depth)
    f = np.asarray(filled)
    n = len(d)
    if len(f) != n or len(nodes) != n or len(seconds) != n:
        raise ValueError("depth, filled, nodes and seconds need one value per restart")
    fill = np.zeros(n) if fill_seconds is None else np.asarray(fill_seconds, np.float64)
    if len(fill) != n:
        raise ValueError("fill_seconds needs one value per restart")
    return arm_stats_of(np.unique(d, return_counts=True), np.unique(f, return_counts=True),
                        float(np.sum(nodes, dtype=np.float64)),
                        float(np.sum(seconds, dtype=np.float64)), float(fill.sum()),
                        depths=depths, resamples=resamples, seed=seed, cells=cells)


def arm_stats_of(depth: tuple[np.ndarray, np.ndarray], filled: tuple[np.ndarray, np.ndarray],
                 nodes: float, search_seconds: float, fill_seconds: float, *,
                 depths: Sequence[int] | None = None, resamples: int = 2000, seed: int = 0,
                 cells: int | None = None) -> ArmStats:
    """`arm_stats` of an arm folded: (distinct values, counts) of its deepest depths and
    filled scores, and the sums of its nodes, search seconds and fill seconds (memory in
    the distinct values, whatever the number of restarts)."""
    if depths is None:
        depths = board_depths(E2_CELLS if cells is None else cells)
    dv, dc = np.asarray(depth[0]), np.asarray(depth[1], dtype=np.int64)
    n = int(dc.sum())

    def per(x: float, y: float) -> float:
        return x / y if y > 0 else math.nan

    total_s = search_seconds + fill_seconds
    bd = bootstrap_counts(dv, dc, resamples=resamples, seed=seed)
    bf = bootstrap_counts(filled[0], filled[1], resamples=resamples, seed=seed + 1)
    reach = {int(k): wilson(int(dc[dv >= k].sum()), n) for k in depths}
    return ArmStats(n, per(nodes, total_s), per(total_s, n),
                    bd["mean"], bd["median"], bf["mean"], bf["median"], reach,
                    per(search_seconds, n), per(fill_seconds, n), per(nodes, search_seconds))


# -- Mann-Whitney U --------------------------------------------------------------------------

def normal_p(z: float) -> float:
    """The two-sided p-value of a standard normal deviate z."""
    return math.erfc(abs(z) / math.sqrt(2))


def _u_test(u: float, n_a: int, n_b: int, tie_factor: float) -> tuple[float, float]:
    """(z, p) of U under the normal approximation; `tie_factor` = 1 - sum(t^3 - t) /
    (N^3 - N) scales the variance for ties; continuity correction 0.5."""
    mu = n_a * n_b / 2
    var = n_a * n_b * (n_a + n_b + 1) / 12 * tie_factor
    if var <= 0:
        return 0.0, 1.0
    dev = max(0.0, abs(u - mu) - 0.5)
    z = math.copysign(dev, u - mu) / math.sqrt(var)
    return z, normal_p(z)


def restarts_needed(effect: float, tie_factor: float = 1.0, alpha: float = ALPHA) -> int | None:
    """The smallest n such that two arms of n restarts each, with U = effect * n^2 and the
    same relative ties, give p < alpha under the normal approximation (None if effect is
    0.5: no effect to detect)."""
    if abs(effect - 0.5) < 1e-12 or tie_factor <= 0:
        return None

    def significant(n: int) -> bool:
        return _u_test(effect * n * n, n, n, tie_factor)[1] < alpha

    if significant(1):
        return 1
    lo, hi = 1, 2  # not significant at lo
    while not significant(hi):  # z grows about as sqrt(n): doubling ends
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if significant(mid) else (mid, hi)
    return hi


def compare_arms(a, b) -> Comparison:
    """Arm A against arm B on one per-restart value (depth or filled score): the two-sided
    Mann-Whitney U test by average ranks, its effect size and the restarts needed
    (`compare_counts` on the arrays' value counts)."""
    x, y = np.asarray(a), np.asarray(b)
    if len(x) == 0 or len(y) == 0:
        raise ValueError("each arm needs at least one restart")
    return compare_counts(*np.unique(x, return_counts=True), *np.unique(y, return_counts=True))


def compare_counts(va, ca, vb, cb) -> Comparison:
    """`compare_arms` of two arms folded: each arm's distinct values (ascending) and how
    many restarts took each (no per-restart array: 10^8 restarts in a few numbers)."""
    va, vb = np.asarray(va), np.asarray(vb)
    ca, cb = np.asarray(ca, dtype=np.int64), np.asarray(cb, dtype=np.int64)
    n_a, n_b = int(ca.sum()), int(cb.sum())
    if n_a == 0 or n_b == 0:
        raise ValueError("each arm needs at least one restart")
    values = np.union1d(va, vb)
    count_a = np.zeros(len(values), np.int64)
    np.add.at(count_a, np.searchsorted(values, va), ca)
    counts = count_a.copy()
    np.add.at(counts, np.searchsorted(values, vb), cb)
    ends = np.cumsum(counts, dtype=np.float64)
    ranks = ends - (counts - 1) / 2.0  # the average rank of each distinct value (1-based)
    r_a = float(ranks @ count_a)
    u = r_a - n_a * (n_a + 1) / 2
    big_n = n_a + n_b
    t = counts.astype(np.float64)
    tie_factor = 1.0 - float(np.sum(t ** 3 - t)) / (big_n ** 3 - big_n) if big_n > 1 else 0.0
    z, p = _u_test(u, n_a, n_b, tie_factor)
    effect = u / (n_a * n_b)
    needed = restarts_needed(effect, tie_factor)
    more = 0 if p < ALPHA or needed is None else max(0, needed - min(n_a, n_b))
    return Comparison(n_a, n_b, u, z, p, effect, p < ALPHA, needed, more)


# -- the report ------------------------------------------------------------------------------
