"""e2store.campaign.tail: the fit against a naive twin, the rule's three answers (observed,
model, beyond), its check, and its calibration on the published ladders."""

from __future__ import annotations

import math

import numpy as np
import pytest

from e2store.campaign import (
    ENOUGH,
    LADDERS,
    REACH,
    calibrate,
    campaign_markdown,
    fit_tail,
    poisson_p,
    tail_hours,
)

# The published ladders, as the sources give them (docs/campaigns.md, ../shared/notes):
# boards at each score (eii) or depth (Blackwood's 469 campaign).
EII = {463: 4_017_182, 464: 227_245, 465: 13_637, 466: 625, 467: 2}
BLACKWOOD_469 = {252: 2832, 253: 97, 254: 10, 255: 1, 256: 1}


def naive_ratio(filled, s0: int) -> float:
    """The geometric ratio of the excess over s0 maximising the log-likelihood, on a grid
    refined around its best point (the pure-Python twin of `fit_tail`'s closed form)."""
    e = [v - s0 for v in filled if v >= s0]

    def loglik(r: float) -> float:
        return sum(math.log(1 - r) + k * math.log(r) for k in e)

    lo, hi = 1e-6, 1 - 1e-6
    for _ in range(6):
        grid = [lo + (hi - lo) * i / 200 for i in range(201)]
        best = max(grid, key=loglik)
        step = (hi - lo) / 200
        lo, hi = max(1e-9, best - step), min(1 - 1e-9, best + step)
    return best


def test_the_fit_is_the_maximum_likelihood_ratio():
    rng = np.random.default_rng(3)
    filled = (440 + rng.geometric(0.45, 3000) - 1).tolist()
    model = fit_tail(filled, min_count=10, points=8)
    assert model is not None
    assert model.ratio == pytest.approx(naive_ratio(filled, model.scores[0]), abs=1e-4)
    n_above = sum(1 for v in filled if v >= model.scores[0])
    assert model.probability(model.scores[0]) == pytest.approx(n_above / len(filled))


def test_the_fit_recovers_a_geometric_tail_within_its_interval():
    """filled = 440 + Geometric: P(filled >= 440 + k) = r^k.  Over 40 samples the 95%
    interval of the log ratio holds the true one about 95% of the time."""
    r = 0.6
    held = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        model = fit_tail(440 + rng.geometric(1 - r, 2000) - 1, min_count=10, points=8)
        assert model is not None
        held += abs(model.slope - math.log(r)) <= 1.96 * model.slope_se
    assert held >= 33


def test_observed_targets_and_a_model_within_reach():
    """A geometric tail of 300,000 restarts, those above the anchor (the highest score
    ENOUGH restarts reached) put at it: a target seen is observed (its Wilson range); the
    REACH scores above the anchor are modelled, their ranges holding the truth; higher
    ones are not estimated."""
    r = 0.6
    rng = np.random.default_rng(11)
    filled = 440 + rng.geometric(1 - r, 300_000) - 1
    anchor = max(s for s in range(440, 500) if np.count_nonzero(filled >= s) >= ENOUGH)
    filled = np.minimum(filled, anchor)  # none above the anchor
    targets = (450, *range(anchor + 1, anchor + REACH + 2))
    t = tail_hours(filled, np.full(len(filled), 36.0), targets=targets)
    assert t.anchor == anchor and t.limit == anchor + REACH
    seen, *near, far = t.targets
    assert seen.source == "observed" and seen.seen == int(np.count_nonzero(filled >= 450))
    assert seen.low < seen.core_hours < seen.high
    for g in near:
        assert g.source == "model" and g.seen == 0
        truth = 0.01 / r ** (g.score - 440)  # 36 s a restart / P / 3600
        assert g.low < truth < g.high and g.low < g.core_hours < g.high
        assert g.high / g.low > 16 ** (g.score - anchor)  # the wall allowance
    assert far.source == "beyond" and math.isnan(far.core_hours)


def test_observed_counts_and_no_model():
    filled = [460, 466, 467, 450]
    t = tail_hours(filled, [3600.0] * 4, targets=(466, 467, 468))
    assert t.model is None
    assert [g.seen for g in t.targets] == [2, 1, 0]
    assert t.targets[0].probability == 0.5 and t.targets[0].core_hours == pytest.approx(2.0)
    assert t.targets[2].source == "beyond" and math.isnan(t.targets[2].core_hours)
    assert tail_hours([], [], targets=(1,)).targets[0].source == "none"


def test_the_readme_campaign_is_not_promised_a_467():
    """What the hunter met: 105 short restarts, filled scores around 440-455, a tail fitted
    over 447-454.  The old rule extrapolated 13 points and promised a 467 in 0.15
    core-hours; now nothing above anchor + REACH gets a figure."""
    rng = np.random.default_rng(1)
    filled = np.minimum(455, 447 + rng.geometric(0.2, 105) - 1)
    t = tail_hours(filled, np.full(105, 5.0), targets=(466, 467, 468))
    assert t.model is not None and t.anchor is not None and t.anchor < 466 - REACH
    assert [g.source for g in t.targets] == ["beyond"] * 3
    text = campaign_markdown({"verhaard": {"depth": np.full(105, 230), "filled": filled,
                                           "nodes": np.full(105, 5e6),
                                           "seconds": np.full(105, 0.16),
                                           "fill_seconds": np.full(105, 4.0)}})
    assert text.count("not estimated: beyond the data") == 3


def test_the_published_ladders_are_the_libraries():
    assert LADDERS["eii (Verhaard, 82 days on one PC)"] == EII
    assert LADDERS["Blackwood's 469 campaign (depths)"] == BLACKWOOD_469


@pytest.mark.parametrize("name", sorted(LADDERS))
def test_the_rule_never_claims_a_target_far_cheaper_than_seen(name):
    """Each ladder replayed as campaigns stopped early (20 draws at 40 fractions of its
    effort): no range the rule gives for a score the part had not reached has its most
    expensive end more than 2 times below what the whole ladder then paid for it."""
    claims = calibrate(LADDERS[name], draws=20, seed=0)
    assert claims, "the rule estimated nothing: the calibration checks nothing"
    worst = max(c.cheaper for c in claims)
    assert worst <= 2.0, f"{name}: a range {worst:.3g} times cheaper than the truth"


def test_without_the_wall_allowance_eii_is_promised_its_467_cheap():
    """The check can fail: a plain geometric range (wall 1) claims eii's 467 more than 10
    times cheaper than the 82 days paid; so does an unlimited reach on e2store's hours."""
    claims = calibrate(EII, draws=10, seed=0, wall=1.0)
    assert max(c.cheaper for c in claims if c.target == 467) > 10
    hour = LADDERS["e2store hour, 2026-11-27"]
    claims = calibrate(hour, draws=10, seed=0, wall=1.0, reach=20)
    assert max(c.cheaper for c in claims) > 3


def test_a_tail_with_a_wall_rejects_its_model_and_estimates_nothing():
    """Scores piled against a ceiling (a break budget's wall, as on the five clues): the
    geometric fit predicts far more restarts at the top than were seen, the verdict
    rejects it and the unseen targets get no core-hours; a geometric tail keeps it."""
    counts = {448: 2, 449: 3, 450: 4, 451: 6, 452: 9, 453: 14, 454: 22, 455: 40, 456: 70,
              457: 60, 458: 4}
    filled = np.repeat(list(counts), list(counts.values()))
    t = tail_hours(filled, np.full(len(filled), 20.0), targets=(458, 459, 460))
    assert t.model is not None and t.verdict is not None and t.verdict.rejected
    beyond = [(o, e) for s, o, e in t.check if s > t.model.scores[-1]]
    assert t.verdict.score > t.model.scores[-1] and beyond
    assert t.verdict.p == pytest.approx(min(1.0, min(
        poisson_p(o, e) for o, e in beyond) * len(beyond)))
    assert t.targets[0].source == "observed" and t.targets[0].seen == 4
    assert [g.source for g in t.targets[1:]] == ["rejected", "rejected"]
    assert all(math.isnan(g.core_hours) for g in t.targets[1:])
    rng = np.random.default_rng(5)
    geo = 440 + rng.geometric(0.4, 5000) - 1
    kept = tail_hours(geo, np.full(len(geo), 20.0), targets=(int(geo.max()),))
    assert kept.verdict is not None and not kept.verdict.rejected
    assert kept.targets[0].source == "observed" and math.isfinite(kept.targets[0].core_hours)


def test_poisson_p_against_the_sum_of_the_distribution():
    """Two-sided: twice the smaller of P(X <= k) and P(X >= k), summed term by term."""
    def pmf(k: int, lam: float) -> float:
        return math.exp(-lam) * lam ** k / math.factorial(k)

    for k, lam in ((0, 0.5), (4, 13.2), (13, 13.2), (30, 13.2), (7, 7.0), (2, 40.0)):
        below = sum(pmf(j, lam) for j in range(k + 1))
        above = 1 - below + pmf(k, lam)
        assert poisson_p(k, lam) == pytest.approx(min(1.0, 2 * min(below, above)), rel=1e-9)
    assert poisson_p(0, 0.0) == 1.0 and poisson_p(3, 0.0) == 0.0
