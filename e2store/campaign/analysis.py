"""A campaign's analysis, computed once (`analyse`) and rendered three ways: Markdown
(`e2store.campaign.report`, what `summary --boards` and `campaign report` print), JSON
(`CampaignAnalysis.to_dict`, `--json`) and the web's campaign page (`e2store.web`).

From the rows per restart of each arm (`e2store.boards.restart_columns`: deepest depth,
final score, nodes, seconds...): each arm's statistics (`arm_stats`, its bootstrap seeded
`seed + 2k` for the k-th arm), its tail (`tail_hours`), what its finish did, its best
restarts and its repeats (equal final boards, turned too, found again); every pair of arms
compared on deepest depth and on final score (`compare_arms`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from e2store.campaign.stats import (
    E2_CELLS,
    E2_JOINS,
    ArmStats,
    Comparison,
    Estimate,
    arm_stats_of,
    board_depths,
    board_targets,
    compare_counts,
)
from e2store.campaign.tail import ENOUGH, REACH, REJECT_P, WALL, Tail, tail_counts
from e2store.campaign.tally import Rows, Tally, at_least, board_size, tallies

RESAMPLES = 2000  # bootstrap resamples of the report and the page
REACH_SHOWN = 3  # the finish's table: restarts reaching each of the top 3 scores

TAIL_RULE = (
    "P(filled >= s) per restart: observed (the restarts that reached s, with the Wilson "
    "interval) when some did; else modelled, at most "
    f"{REACH} points above the anchor (the highest score at least {ENOUGH} restarts "
    "reached): P(anchor) times the per-point ratio of a geometric tail fitted by maximum "
    "likelihood to the upper scores, its range the fit's 95% interval, the pessimistic end "
    f"also {WALL:g} times steeper per point beyond the anchor (tails steepen at the top, "
    "as the published ladders show); higher targets are not estimated.  A model that "
    "fails its check against the restarts above its fit (two-sided Poisson test, "
    "Bonferroni over the scores, "
    f"p < {REJECT_P}) estimates nothing.  Core-hours = mean seconds per restart (its search "
    "and its fill) / P / 3600.  docs/campaigns.md gives the rule's calibration on published "
    "ladders.")


@dataclass(frozen=True)
class FinishSummary:
    """What an arm's finish made of the restarts it finished: their filled scores before
    and after it, the restarts it raised, those reaching each of the top scores before and
    after, its seconds per restart and share of the arm's time."""

    finished: int
    before_mean: float
    after_mean: float
    gain_mean: float
    raised: int
    max_gain: int
    before_max: int
    after_max: int
    reach: list[tuple[int, int, int]]  # (score, restarts reaching it before, after)
    seconds_per_restart: float
    share: float


@dataclass(frozen=True)
class ArmAnalysis:
    """One arm: its statistics, tail, maxima, finish, best restarts and repeats."""

    name: str
    stats: ArmStats
    tail: Tail
    depth_max: int
    filled_max: int
    reached: dict[int, int]  # depth -> restarts reaching it
    finish: FinishSummary | None
    best: list[dict[str, Any]] = field(default_factory=list)  # filled, depth, seed, ...
    repeats: int | None = None  # final boards equal to one found before (None: not known)


@dataclass(frozen=True)
class PairComparison:
    """Two arms compared on one value ("depth" or "filled")."""

    value: str
    a: str
    b: str
    result: Comparison


@dataclass(frozen=True)
class CampaignAnalysis:
    """Every arm analysed and every pair compared (`analyse`)."""

    depths: tuple[int, ...]
    targets: tuple[int, ...]
    resamples: int
    seed: int
    arms: dict[str, ArmAnalysis]
    comparisons: list[PairComparison]

    @property
    def restarts(self) -> int:
        return sum(a.stats.restarts for a in self.arms.values())

    def to_dict(self) -> dict[str, Any]:
        """The analysis as JSON-ready values (NaN and infinity as None)."""
        arms = []
        for a in self.arms.values():
            s, t = a.stats, a.tail
            arms.append({
                "arm": a.name, "restarts": s.restarts, "rate": num(s.rate),
                "seconds_per_restart": num(s.seconds_per_restart),
                "search_seconds": num(s.search_seconds), "fill_seconds": num(s.fill_seconds),
                "restarts_per_hour": num(s.restarts_per_hour),
                "depth": {"mean": est(s.depth_mean), "median": est(s.depth_median),
                          "max": a.depth_max},
                "filled": {"mean": est(s.filled_mean), "median": est(s.filled_median),
                           "max": a.filled_max},
                "reach": [{"depth": v, "seen": a.reached[v], **est(s.reach[v])}
                          for v in self.depths],
                "tail": [{"score": g.score, "seen": g.seen, "probability": num(g.probability),
                          "source": g.source, "core_hours": num(g.core_hours),
                          "low": num(g.low), "high": num(g.high)} for g in t.targets],
                "tail_anchor": t.anchor, "tail_limit": t.limit,
                "finish": None if a.finish is None else {
                    k: (num(v) if isinstance(v, float) else v)
                    for k, v in a.finish.__dict__.items()},
                "best_restarts": a.best, "repeats": a.repeats})
        comparisons = [{"value": c.value, "a": c.a, "b": c.b, "u": c.result.u,
                        "z": num(c.result.z), "p": num(c.result.p),
                        "effect": num(c.result.effect), "significant": c.result.significant,
                        "restarts_needed": c.result.restarts_needed,
                        "more_restarts": c.result.more_restarts} for c in self.comparisons]
        return {"arms": arms, "comparisons": comparisons, "depths": list(self.depths),
                "targets": list(self.targets), "tail_rule": TAIL_RULE, "tail_enough": ENOUGH,
                "resamples": self.resamples, "seed": self.seed, "restarts": self.restarts}


def analyse(rows: Rows, *, depths: Sequence[int] | None = None,
            targets: Sequence[int] | None = None, resamples: int = RESAMPLES,
            seed: int = 0, repeats: Mapping[str, int] | None = None) -> CampaignAnalysis:
    """The analysis of `rows`: per arm, its restarts folded (a `Tally`, as a report at
    scale adds them a file at a time) or its per-restart arrays "depth", "filled",
    "nodes", "seconds", and when known "fill_seconds", "before", "finished",
    "finish_seconds", "seed", "restart", "url", "cells", "joins", "key" (folded first:
    one path); `depths`, `targets` default the board's (`report_thresholds`); `repeats`:
    per arm, its final boards equal to one found before, when not known from the rows'
    keys."""
    folded = tallies(rows)
    if depths is None or targets is None:
        cells, joins = board_size(folded, (E2_CELLS, E2_JOINS))
        depths = board_depths(cells) if depths is None else depths
        targets = board_targets(joins) if targets is None else targets
    depths_, targets_ = tuple(int(d) for d in depths), tuple(int(t) for t in targets)
    arms = {}
    for k, (name, t) in enumerate(folded.items()):
        st = arm_stats_of(t.depth, t.filled, t.nodes, t.seconds, t.fill_seconds,
                          depths=depths_, resamples=resamples, seed=seed + 2 * k)
        per = (t.seconds + t.fill_seconds) / t.restarts if t.restarts else math.nan
        known = t.repeats if repeats is None else int(repeats.get(name, 0))
        arms[name] = ArmAnalysis(
            name, st, tail_counts(*t.filled, per, targets_),
            int(t.depth[0].max()) if t.restarts else 0,
            int(t.filled[0].max()) if t.restarts else 0,
            {v: at_least(t.depth, v) for v in depths_},
            finish_of(t), t.best_restarts(), known)
    names = list(folded)
    comparisons = [PairComparison(value, a, b, compare_counts(
        *getattr(folded[a], value), *getattr(folded[b], value)))
                   for value in ("depth", "filled")
                   for i, a in enumerate(names) for b in names[i + 1:]]
    return CampaignAnalysis(depths_, targets_, resamples, seed, arms, comparisons)


def restart_seconds(r: Mapping[str, Sequence[float] | np.ndarray]) -> np.ndarray:
    """Each restart's core-seconds: its search's `seconds` and its fill's `fill_seconds`
    (when given): what the tail's core-hours count; placements per second count the
    search alone."""
    sec = np.asarray(r["seconds"], dtype=np.float64)
    fill = r.get("fill_seconds")
    return sec if fill is None else sec + np.asarray(fill, dtype=np.float64)


def finish_summary(r: Mapping[str, Sequence[float] | np.ndarray] | Tally,
                   ) -> FinishSummary | None:
    """What the finish did to an arm's restarts (arrays or a `Tally`), or None when it
    finished none."""
    return finish_of(r if isinstance(r, Tally) else Tally.of(r))


def finish_of(t: Tally) -> FinishSummary | None:
    """`finish_summary` of an arm folded."""
    if not t.finished:
        return None
    n = t.finished
    before, after = t.before_finish, t.after_finish
    total = t.seconds + t.fill_seconds
    top = int(after[0].max())
    return FinishSummary(
        n, float(before[0] @ before[1]) / n, float(after[0] @ after[1]) / n, t.gain / n,
        t.raised, t.max_gain, int(before[0].max()), top,
        [(s, at_least(before, s), at_least(after, s))
         for s in range(top - REACH_SHOWN + 1, top + 1)],
        t.finish_seconds / n, t.finish_seconds / total if total > 0 else 0.0)


def best_restarts(r: Mapping[str, Sequence[float] | np.ndarray]) -> list[dict[str, Any]]:
    """An arm's best restarts (`BEST_LISTED`), by final score then depth: filled, depth,
    seed, restart and url, when the rows carry them."""
    return Tally.of(r).best_restarts()


def num(x: float) -> float | None:
    """A float for JSON: None for NaN and infinity (JSON has neither)."""
    x = float(x)
    return x if math.isfinite(x) else None


def est(e: Estimate) -> dict[str, float | None]:
    """An `Estimate` as JSON: value, low, high."""
    return {"value": num(e.value), "low": num(e.low), "high": num(e.high)}
