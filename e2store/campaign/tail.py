"""The tail of a campaign's filled scores: expected core-hours to a full board of a score,
with a 95% range, given only where the data can speak for it (docs/campaigns.md, *The
tail*).

* A target some restarts reached: P = seen / restarts ("observed"), its Wilson interval.
* A target no restart reached, at most `REACH` points above the highest score that at least
  `ENOUGH` restarts reached (the anchor): P = P(anchor) x ratio^d ("model"), the ratio per
  point that of a geometric tail fitted to the upper scores by maximum likelihood
  (`fit_tail`).  Its range: the fit's 95% interval (the anchor's count and the ratio's
  standard error), its pessimistic end further divided by `WALL` per point beyond the
  anchor, because tails steepen at the top (eii's 466 -> 467 was 16 times steeper than its
  ratio below) and no fit of the lower scores can see that.
* Anything higher: not estimated ("beyond" the data).  A model that fails its own check
  against the restarts above its fit (`tail_verdict`, a Poisson test) estimates nothing
  ("rejected").

`calibrate` replays a ladder of counts (published, or a run's own) as if the campaign had
stopped early, and measures how far the rule's claims fall below what the whole ladder
then saw (`LADDERS`: the field's and e2store's own).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from e2store.campaign.stats import E2_JOINS, Z95, board_targets, wilson

REJECT_P = 0.01  # a tail model whose check is less likely than this is not used
MIN_COUNT = 10  # the fit: the `POINTS` highest scores at least this many restarts reached
POINTS = 8
ENOUGH = MIN_COUNT  # restarts at or above a score that make it the model's anchor
REACH = 2  # points above the anchor the model may estimate
WALL = 16.0  # per point beyond the anchor: how much steeper the range allows the tail


@dataclass(frozen=True)
class TailModel:
    """A geometric tail above `scores[0]`: P(filled >= s) = P(>= scores[0]) x ratio^(s -
    scores[0]), the ratio the maximum-likelihood one of the restarts at or above
    scores[0]; as a line, log P(filled >= s) = intercept + slope * s."""

    intercept: float
    slope: float  # log ratio
    scores: tuple[int, ...]  # the scores fitted: those at least MIN_COUNT restarts reached
    slope_se: float = 0.0  # standard error of the slope (the log ratio)

    @property
    def ratio(self) -> float:
        """P(filled >= s + 1) / P(filled >= s)."""
        return math.exp(self.slope)

    def probability(self, score: float) -> float:
        """P(filled >= score) per restart under the model (at most 1)."""
        return min(1.0, math.exp(self.intercept + self.slope * score))


@dataclass(frozen=True)
class TailTarget:
    """Expected core-hours to a board of at least `score` (`tail_hours`)."""

    score: int
    seen: int  # restarts with filled >= score
    probability: float  # per restart: seen / restarts if seen, else the model's (NaN: none)
    source: str  # "observed"; "model"; "beyond" (no restart reached it and it lies beyond
    # what the data supports: not estimated); "rejected" (the model failed its check: not
    # estimated); "none" (no restart at all)
    model_probability: float | None  # the fitted tail's P, for comparison (None: no model)
    core_hours: float  # mean seconds per restart / probability / 3600 (NaN: not estimated)
    low: float = math.nan  # the 95% range of core_hours: the optimistic end
    high: float = math.nan  # the pessimistic end (with WALL per point beyond the anchor)

    @property
    def estimated(self) -> bool:
        return self.source in ("observed", "model")


@dataclass(frozen=True)
class TailVerdict:
    """The model's check point (above the fitted scores) least likely under its own
    predictions: restarts `seen` at or above `score` where `expected` were predicted, `p`
    its two-sided Poisson p-value times the points checked (Bonferroni); `rejected` when
    that is under REJECT_P."""

    score: int
    seen: int
    expected: float
    p: float
    rejected: bool


@dataclass(frozen=True)
class Tail:
    """The tail of one arm's filled scores: targets, model, its anchor and check."""

    restarts: int
    seconds_per_restart: float
    targets: list[TailTarget]
    model: TailModel | None
    check: list[tuple[int, int, float]]  # (score, restarts seen >= score, model's expected)
    verdict: TailVerdict | None = None  # None without a score above the fitted ones
    anchor: int | None = None  # the highest score at least ENOUGH restarts reached
    limit: int | None = None  # the highest target the model may estimate: anchor + REACH


class _Counts:
    """Restarts per distinct score: `values` ascending, `surv[i]` the restarts at or above
    values[i]; what every step of the tail reads (a ladder of a million boards is a few
    numbers)."""

    def __init__(self, values: np.ndarray, counts: np.ndarray):
        keep = counts > 0
        self.values = np.asarray(values, dtype=np.int64)[keep]
        self.counts = np.asarray(counts, dtype=np.int64)[keep]
        self.n = int(self.counts.sum())
        self.surv = self.n - np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    @classmethod
    def of(cls, filled) -> _Counts:
        values, counts = np.unique(np.asarray(filled).astype(np.int64), return_counts=True)
        return cls(values, counts)

    def at_least(self, s: int) -> int:
        """Restarts with a score of at least s."""
        i = int(np.searchsorted(self.values, s))
        return int(self.surv[i]) if i < len(self.values) else 0


def fit_tail(filled, *, min_count: int = MIN_COUNT, points: int = POINTS) -> TailModel | None:
    """The geometric tail fitted over the `points` highest integer scores that at least
    `min_count` restarts reached: the restarts at or above the lowest of them, s0, their
    excess e = filled - s0 taken as geometric, P(e = k) = (1 - r) r^k, so the maximum-
    likelihood ratio is r = mean(e) / (1 + mean(e)), with var(log r) = (1 - r)^2 / (r m)
    over m restarts (the Fisher information).  None with fewer than 2 such scores or no
    restart above s0."""
    return _fit(_Counts.of(filled), min_count, points)


def _fit(c: _Counts, min_count: int, points: int) -> TailModel | None:
    """`fit_tail` on counts."""
    if c.n == 0:
        return None
    top = c.values[c.surv >= min_count]
    if len(top) == 0:
        return None
    hi = int(top.max())
    s0 = max(int(c.values[0]), hi - points + 1)
    if hi - s0 < 1:
        return None
    above = c.values >= s0
    m = int(c.counts[above].sum())
    mean = float(np.dot(c.counts[above], c.values[above] - s0)) / m
    if mean <= 0:
        return None
    r = mean / (1 + mean)
    slope = math.log(r)
    se = (1 - r) / math.sqrt(r * m)
    return TailModel(math.log(m / c.n) - slope * s0, slope, tuple(range(s0, hi + 1)), se)


def poisson_p(seen: int, expected: float) -> float:
    """Two-sided p-value of `seen` events where a Poisson count of mean `expected` was
    predicted: twice the smaller tail, at most 1."""
    if expected <= 0:
        return 1.0 if seen == 0 else 0.0
    at = math.exp(-expected)  # P(X = k), k = 0, 1, ..., seen
    below = at  # P(X <= seen)
    for k in range(1, seen + 1):
        at *= expected / k
        below += at
    above = 1.0 - below + at  # P(X >= seen)
    return min(1.0, 2 * min(below, max(above, 0.0)))


def tail_verdict(check: Sequence[tuple[int, int, float]],
                 fitted: Sequence[int]) -> TailVerdict | None:
    """The check point above the `fitted` scores least likely under the model
    (`TailVerdict`): the points the model extrapolates to, as it does to the targets (the
    fitted points carry its own estimation error); None without one."""
    beyond = [c for c in check if c[0] > max(fitted, default=c[0])]
    if not beyond:
        return None
    s, seen, expected = min(beyond, key=lambda c: poisson_p(c[1], c[2]))
    p = min(1.0, poisson_p(seen, expected) * len(beyond))
    return TailVerdict(s, seen, expected, p, p < REJECT_P)


def tail_hours(filled, seconds, targets: Sequence[int] | None = None, *,
               min_count: int = MIN_COUNT, points: int = POINTS, enough: int = ENOUGH,
               reach: int = REACH, wall: float = WALL, joins: int | None = None) -> Tail:
    """Expected core-hours to a full board of at least each target, with its 95% range,
    at the arm's cost per restart (the mean of `seconds`: each restart's search, fill and
    whatever else it did): observed where restarts reached the target, modelled at most
    `reach` points above the anchor (the highest score `enough` restarts reached), not
    estimated beyond (module docstring).  `targets` default: `board_targets(joins)` of a
    board of `joins` inner joins, Eternity II's 466, 467, 468 without `joins`."""
    if targets is None:
        targets = board_targets(E2_JOINS if joins is None else joins)
    n = len(np.asarray(filled))
    per = float(np.sum(seconds, dtype=np.float64)) / n if n else math.nan
    return _tail(_Counts.of(filled), per, targets, min_count=min_count, points=points,
                 enough=enough, reach=reach, wall=wall)


def tail_counts(values, counts, seconds_per_restart: float,
                targets: Sequence[int]) -> Tail:
    """`tail_hours` of an arm folded: its distinct filled scores (ascending), the restarts
    that reached each, and its mean seconds a restart."""
    return _tail(_Counts(np.asarray(values), np.asarray(counts)), seconds_per_restart,
                 targets)


def _tail(c: _Counts, per: float, targets: Sequence[int], *, min_count: int = MIN_COUNT,
          points: int = POINTS, enough: int = ENOUGH, reach: int = REACH,
          wall: float = WALL) -> Tail:
    """`tail_hours` on counts, at `per` seconds a restart."""
    n = c.n
    model = _fit(c, min_count, points)
    anchor: int | None = None
    anchor_seen = 0
    if (c.surv >= enough).any():
        i = int(np.flatnonzero(c.surv >= enough)[-1])
        anchor, anchor_seen = int(c.values[i]), int(c.surv[i])
    check = [] if model is None else [
        (s, c.at_least(s), n * model.probability(s))
        for s in range(model.scores[0], int(c.values[-1]) + 1)]
    verdict = tail_verdict(check, model.scores if model else ())
    rejected = verdict is not None and verdict.rejected
    limit = None if anchor is None or model is None or rejected else anchor + reach

    def hours(p: float) -> float:
        return per / p / 3600 if p > 0 else math.inf

    out = []
    for s in (int(s) for s in targets):
        seen = c.at_least(s)
        mp = model.probability(s) if model else None
        if n == 0:
            out.append(TailTarget(s, 0, math.nan, "none", mp, math.nan))
        elif seen:
            w = wilson(seen, n)
            out.append(TailTarget(s, seen, seen / n, "observed", mp, hours(seen / n),
                                  hours(w.high), hours(w.low)))
        elif rejected:
            out.append(TailTarget(s, 0, math.nan, "rejected", mp, math.nan))
        elif model is None or anchor is None or limit is None or s > limit:
            out.append(TailTarget(s, 0, math.nan, "beyond", mp, math.nan))
        else:
            d = s - anchor
            log_p = math.log(anchor_seen / n) + d * model.slope
            sd = math.sqrt(1 / anchor_seen + (d * model.slope_se) ** 2)
            p = math.exp(log_p)
            out.append(TailTarget(s, 0, p, "model", mp, hours(p),
                                  hours(math.exp(log_p + Z95 * sd)),
                                  hours(math.exp(log_p - Z95 * sd)) * wall ** d))
    return Tail(n, per, out, model, check, verdict, anchor, limit)


# -- calibration -----------------------------------------------------------------------------

LADDERS: dict[str, dict[int, int]] = {
    # boards at each score (or depth), as published; docs/campaigns.md gives the sources
    "eii (Verhaard, 82 days on one PC)": {463: 4_017_182, 464: 227_245, 465: 13_637,
                                           466: 625, 467: 2},
    "Blackwood's 469 campaign (depths)": {252: 2832, 253: 97, 254: 10, 255: 1, 256: 1},
    # e2store's hours on two cores, centre clue (docs/benchmarks.md), restarts of 459 up
    "e2store hour, 2026-11-27": {459: 77, 460: 133, 461: 125, 462: 82, 463: 54, 464: 26,
                                 465: 4, 466: 3},
    "e2store hour, 2026-11-28": {459: 62, 460: 128, 461: 106, 462: 85, 463: 55, 464: 26,
                                 465: 4},
}


@dataclass(frozen=True)
class Claim:
    """One estimate the rule made on part of a ladder: the `fraction` of its effort,
    `target` and the whole ladder's restarts per board of at least it (`truth`) against
    the claim's point and pessimistic end (`point`, `high`, restarts per board);
    `cheaper` = truth / high, how many times cheaper than the truth the claim's most
    expensive end is (above 1: the range missed the truth on the cheap side)."""

    fraction: float
    target: int
    source: str
    truth: float
    point: float
    high: float

    @property
    def cheaper(self) -> float:
        return self.truth / self.high


def calibrate(ladder: Mapping[int, int], *, fractions: Sequence[float] | None = None,
              draws: int = 20, seed: int = 0, **rule) -> list[Claim]:
    """Replay `ladder` (boards at each score) as campaigns stopped early: each restart kept
    with probability `fraction` (binomial thinning, `draws` times per fraction), the tail
    rule (`tail_hours`, `rule` its parameters) asked for every score of the ladder above
    those the part saw, and each estimate it gave compared with the whole ladder's
    restarts per board at that score (the ladder's restarts are its boards)."""
    scores = np.array(sorted(ladder), dtype=np.int64)
    counts = np.array([ladder[int(s)] for s in scores], dtype=np.int64)
    n = int(counts.sum())
    surv = n - np.concatenate([[0], np.cumsum(counts)[:-1]])
    truth = {int(s): n / int(k) for s, k in zip(scores, surv, strict=True)}
    if fractions is None:
        fractions = [float(x) for x in np.geomspace(0.5, max(20 / n, 1e-7), 40)]
    rng = np.random.default_rng(seed)
    out = []
    for q in fractions:
        for _ in range(draws):
            kept = rng.binomial(counts, q)
            if kept.sum() == 0:
                continue
            c = _Counts(scores, kept)
            unseen = [int(v) for v in scores if v > c.values[-1]]
            t = _tail(c, 3600.0, unseen, **rule)
            out += [Claim(q, g.score, g.source, truth[g.score], g.core_hours, g.high)
                    for g in t.targets if g.source == "model"]
    return out
