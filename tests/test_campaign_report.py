"""e2store.campaign.stats: each statistic against a naive twin or a value worked by hand,
and the report file with its sections."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2store.campaign import (
    arm_stats,
    bootstrap,
    campaign_markdown,
    campaign_report,
    compare_arms,
    restarts_needed,
    tail_hours,
    wilson,
)
from e2store.campaign.stats import Z95


def naive_u(a, b) -> float:
    """U of A by counting every pair: A > B counts 1, a tie 1/2."""
    return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)


def test_u_by_hand_with_ties():
    """A = 1 2 2 5, B = 2 3 4 6 7.  Ranks: 1 | 2 2 2 -> 3 each | 3 -> 5, 4 -> 6, 5 -> 7,
    6 -> 8, 7 -> 9; R_A = 1 + 3 + 3 + 7 = 14, U_A = 14 - 4*5/2 = 4; mean 4*5/2 = 10; ties:
    one group of 3, factor 1 - 24/720; variance 4*5*10/12 * (1 - 24/720) = 145/9;
    z = -(6 - 0.5) / sqrt(145/9) = -1.3703, two-sided p = 0.1707 (normal table)."""
    c = compare_arms([1, 2, 2, 5], [2, 3, 4, 6, 7])
    assert c.u == 4.0
    assert c.z == pytest.approx(-5.5 / math.sqrt(145 / 9))
    assert c.z == pytest.approx(-1.3703, abs=1e-4)
    assert c.p == pytest.approx(0.1707, abs=2e-4)
    assert c.effect == pytest.approx(4 / 20)
    assert not c.significant


def test_u_without_ties_textbook():
    """A = 1..10 against B = 11..20: U = 0, mean 50, variance 10*10*21/12 = 175,
    z = -(50 - 0.5)/sqrt(175) = -3.7418, p = 1.83e-4."""
    c = compare_arms(range(1, 11), range(11, 21))
    assert c.u == 0.0 and c.effect == 0.0
    assert c.z == pytest.approx(-49.5 / math.sqrt(175))
    assert c.p == pytest.approx(1.83e-4, rel=0.01)
    assert c.significant and c.more_restarts == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=25),
       st.lists(st.integers(0, 6), min_size=1, max_size=25))
def test_u_and_effect_against_pair_counting(a, b):
    c = compare_arms(a, b)
    assert c.u == pytest.approx(naive_u(a, b))
    assert c.effect == pytest.approx(naive_u(a, b) / (len(a) * len(b)))
    swapped = compare_arms(b, a)
    assert swapped.p == pytest.approx(c.p)
    assert swapped.effect == pytest.approx(1 - c.effect)
    assert 0 <= c.p <= 1


def test_identical_arms_are_not_different():
    c = compare_arms([3, 3, 3], [3, 3, 3])
    assert c.p == 1.0 and c.effect == 0.5 and c.restarts_needed is None


def test_restarts_needed_is_the_smallest_significant_n():
    for effect in (0.45, 0.52, 0.6, 0.9):
        n = restarts_needed(effect)
        assert n is not None
        c = compare_arms(*_arms_with_effect(effect, n))
        assert c.effect == pytest.approx(effect, abs=0.02)
    n = restarts_needed(0.6)
    assert n is not None and n > 1
    # by the model itself: p < 0.05 at n, not at n - 1
    for m, want in ((n, True), (n - 1, False)):
        mu, sd = m * m / 2, math.sqrt(m * m * (2 * m + 1) / 12)
        z = (0.1 * m * m - 0.5) / sd
        assert (math.erfc(z / math.sqrt(2)) < 0.05) is want, (m, mu)


def _arms_with_effect(effect: float, n: int):
    """Two arms of n restarts of continuous values with P(A > B) near `effect`."""
    rng = np.random.default_rng(0)
    shift = math.sqrt(2) * statistics.NormalDist().inv_cdf(effect)
    return rng.normal(shift, 1, 4000), rng.normal(0, 1, 4000)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.5005, 0.99), st.floats(0.5005, 0.99), st.floats(0.3, 1.0))
def test_more_restarts_monotone(e1, e2, ties):
    """A larger effect (either side of 0.5) never needs more restarts."""
    lo, hi = sorted((e1, e2))
    n_lo, n_hi = restarts_needed(lo, ties), restarts_needed(hi, ties)
    assert n_lo is not None and n_hi is not None and n_hi <= n_lo
    assert restarts_needed(1 - hi, ties) == n_hi
    assert restarts_needed(hi, ties * 0.5) is not None


def test_more_restarts_shrinks_as_the_arms_grow():
    """The same two samples repeated k times: the same effect, ever fewer restarts to add,
    none once the arms reach the restarts needed."""
    a, b = [3, 4, 5, 5, 6, 7, 8], [2, 3, 4, 5, 5, 6, 6]
    seen = [compare_arms(a * k, b * k) for k in (1, 2, 4, 8, 16, 64)]
    assert len({round(c.effect, 12) for c in seen}) == 1
    mores = [c.more_restarts for c in seen]
    assert mores == sorted(mores, reverse=True) and mores[0] > 0 and mores[-1] == 0
    for c in seen:
        assert c.significant == (c.p < 0.05)
        if not c.significant:
            assert c.more_restarts == (c.restarts_needed or 0) - c.n_a


def test_wilson_bounds_solve_the_score_equation():
    """The Wilson bounds are the p0 with (phat - p0)^2 = z^2 p0 (1 - p0) / n."""
    for x, n in ((0, 10), (3, 10), (10, 10), (7, 1000), (500, 1000)):
        w = wilson(x, n)
        assert w.value == x / n
        for p0 in (w.low, w.high):
            if p0 in (0.0, 1.0) and p0 == w.value:
                continue
            assert (x / n - p0) ** 2 == pytest.approx(Z95 ** 2 * p0 * (1 - p0) / n, abs=1e-12)
        assert w.low <= w.value <= w.high
    assert wilson(0, 10).low == 0.0 and wilson(10, 10).high == 1.0


def naive_bootstrap(values, resamples, seed):
    """Mean and median intervals by resampling with Python's random module."""
    rnd = random.Random(seed)
    means, medians = [], []
    for _ in range(resamples):
        s = [rnd.choice(values) for _ in values]
        means.append(statistics.fmean(s))
        medians.append(statistics.median(s))
    q = statistics.quantiles
    return q(means, n=40)[0], q(means, n=40)[-1], q(medians, n=40)[0], q(medians, n=40)[-1]


@pytest.mark.parametrize("method", ["counts", "indices"])
def test_bootstrap_reproducible_and_like_the_naive_one(method):
    rng = np.random.default_rng(5)
    values = [int(v) for v in rng.integers(230, 250, 60)]
    b = bootstrap(values, resamples=2000, seed=7, method=method)
    assert b == bootstrap(values, resamples=2000, seed=7, method=method)
    assert b["mean"].value == pytest.approx(statistics.fmean(values))
    assert b["median"].value == statistics.median(values)
    for e in b.values():
        assert e.low <= e.value <= e.high
    lo_m, hi_m, lo_d, hi_d = naive_bootstrap(values, 2000, 7)
    sd = statistics.stdev(values) / math.sqrt(len(values))
    assert b["mean"].low == pytest.approx(lo_m, abs=0.25 * sd)
    assert b["mean"].high == pytest.approx(hi_m, abs=0.25 * sd)
    assert b["median"].low == pytest.approx(lo_d, abs=1.5)
    assert b["median"].high == pytest.approx(hi_d, abs=1.5)


def test_arm_stats_against_loops():
    depth = [240, 248, 249, 250, 250, 231, 248]
    filled = [440, 450, 455, 460, 461, 430, 449]
    nodes = [10, 20, 30, 40, 50, 60, 70]
    seconds = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0]
    s = arm_stats(depth, filled, nodes, seconds, resamples=500, seed=1)
    assert s.restarts == 7
    assert s.rate == pytest.approx(sum(nodes) / sum(seconds))
    assert s.depth_mean.value == pytest.approx(statistics.fmean(depth))
    assert s.filled_median.value == statistics.median(filled)
    for d in (248, 249, 250):
        k = sum(1 for v in depth if v >= d)
        assert s.reach[d] == wilson(k, 7)
    assert s == arm_stats(depth, filled, nodes, seconds, resamples=500, seed=1)


def test_report_written_with_its_sections(tmp_path):
    rng = np.random.default_rng(2)
    rows = {}
    for k, name in enumerate(("base", "wide")):
        n = 3000
        rows[name] = {"depth": np.clip(rng.normal(240 + k, 4, n).round(), 0, 256).astype(int),
                      "filled": 440 + k + rng.geometric(0.4, n) - 1,
                      "nodes": rng.integers(10 ** 5, 10 ** 6, n),
                      "seconds": rng.uniform(1, 2, n)}
    out = tmp_path / "campaign.md"
    written = campaign_report(rows, out, resamples=200)
    assert written == [out, tmp_path / "campaign-depth.png", tmp_path / "campaign-filled.png"]
    text = out.read_text()
    for section in ("## Arms", "## Comparisons: deepest depth", "## Comparisons: filled score",
                    "## Tail: core-hours", "### base", "### wide", "Model check", "## Plots",
                    "Wilson", "Mann-Whitney"):
        assert section in text
    assert "| base | wide |" in text
    for png in written[1:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left


def test_restart_arrays_pair_each_best_board_with_its_filled_one():
    """One value per (seed, restart) of each arm: the deepest board's depth, nodes and
    seconds, and its final board's score (finished, else filled, else its own), the
    filled score before the finish, and the seconds after the search and of the finish."""
    from e2store.boards import restart_arrays
    from e2store.boards.table import make_boards

    rows = [  # (seed, restart, source, depth, score, nodes, seconds, found)
        (1, 0, "best", 30, 50, 100, 1.0, 1000.0), (1, 0, "filled", 36, 55, 100, 1.0, 1000.5),
        (0, 1, "best", 31, 52, 200, 2.0, 1001.0),  # not filled
        (0, 0, "best", 29, 49, 300, 3.0, 0.0), (0, 0, "filled", 36, 51, 300, 3.0, 9.0),
        (0, 0, "finished", 36, 53, 300, 3.0, 9.25),
        (1, 1, "best", 33, 54, 50, 0.5, 1002.0), (1, 1, "filled", 36, 56, 50, 0.5, 1002.5),
        (1, 1, "finished", 36, 58, 50, 0.5, 1003.0)]
    stats = [{"seed": s, "restart": k, "source": src, "depth": d, "score": sc,
              "joins": 60, "mismatches": 0, "holes": 0, "nodes": n, "seconds": t, "found": f,
              "url": f"u{s}{k}{src[0]}"} for s, k, src, d, sc, n, t, f in rows]
    boards = make_boards(36, [np.full(36, -1)] * len(rows), stats)
    arms = np.array(["a", "a", "a", "b", "b", "b", "a", "a", "a"], dtype=object)
    got = restart_arrays(boards, arms)
    want = {"a": {"depth": [31, 30, 33], "filled": [52, 55, 58], "before": [52, 55, 56],
                  "finished": [0, 0, 1], "nodes": [200, 100, 50],
                  "seconds": [2.0, 1.0, 0.5], "fill_seconds": [0.0, 0.5, 1.0],
                  "finish_seconds": [0.0, 0.0, 0.5], "seed": [0, 1, 1],
                  "restart": [1, 0, 1], "url": ["u01b", "u10f", "u11f"],
                  "cells": [36, 36, 36], "joins": [60, 60, 60], "key": ["", "", ""]},
            "b": {"depth": [29], "filled": [53], "before": [51], "finished": [1],
                  "nodes": [300], "seconds": [3.0],
                  "fill_seconds": [0.0],  # a time unknown: none counted
                  "finish_seconds": [0.25], "seed": [0], "restart": [0], "url": ["u00f"],
                  "cells": [36], "joins": [60], "key": [""]}}
    assert {a: {k: v.tolist() for k, v in r.items()} for a, r in got.items()} == want
    assert set(restart_arrays(boards)) == {"default"}


def test_the_report_links_each_arm_s_best_boards():
    """*Best boards*: per arm its best restarts by filled score then depth (at most 3),
    each with its URL; without URLs in the rows, no such section."""
    r = {"depth": np.array([240, 250, 245, 250, 230]),
         "filled": np.array([450, 455, 455, 455, 440]),
         "nodes": np.full(5, 10), "seconds": np.ones(5), "seed": np.array([0, 0, 1, 1, 2]),
         "restart": np.array([0, 1, 2, 3, 4]), "url": np.array(list("abcde"), dtype=object)}
    text = campaign_markdown({"x": r})
    table = text[text.index("## Best boards"):]
    rows = [line for line in table.splitlines() if line.startswith("| x |")]
    # 455 at depth 250 twice (restarts 1, 3: the first first), then 455 at depth 245
    assert [line.split(" | ")[4] for line in rows] == ["1", "3", "2"]
    assert "[open in the viewer](b)" in rows[0] and "(c)" in rows[2]
    assert "## Best boards" not in campaign_markdown({"x": {k: v for k, v in r.items()
                                                           if k != "url"}})


def test_one_cost_per_restart_search_and_fill():
    """A restart costs its search and its fill: the report's s/restart is their sum, its
    rates per core-second and per core-hour count the sum, the search and fill columns
    add up to it, and the tail's core-hours count it too."""
    from e2store.campaign import restart_seconds

    filled = np.array([450, 451, 452, 453])
    r = {"depth": np.full(4, 240), "filled": filled, "nodes": np.full(4, 100),
         "seconds": np.full(4, 3.0), "fill_seconds": np.full(4, 1.0)}
    assert restart_seconds(r).tolist() == [4.0] * 4
    s = arm_stats(r["depth"], filled, r["nodes"], r["seconds"], fill_seconds=r["fill_seconds"],
                  resamples=10)
    assert s.search_seconds + s.fill_seconds == s.seconds_per_restart == 4.0
    assert s.rate == 25.0 and s.search_rate == pytest.approx(100 / 3)
    assert s.restarts_per_hour == 900.0
    text = campaign_markdown({"a": r}, targets=[453])
    row = next(line for line in text.splitlines() if line.startswith("| a | 4 |"))
    assert row.split(" | ")[2:7] == ["4", "3", "1", "900", "25"]
    # P(>= 453) = 1/4 per restart, 4 s a restart: 16 s = 0.00444 core-hours
    assert tail_hours(filled, restart_seconds(r), [453]).targets[0].core_hours == \
        pytest.approx(16 / 3600)
    assert "| 0.004444 [" in text and "| 0.003333 [" not in text  # not 12 s: the search's


def test_summary_of_a_boards_dataset_is_its_campaign_report(tmp_path):
    """`e2store summary --boards DIR` prints the report of the dataset's arms; -o writes it
    with its plots; a store is not summarised with it."""
    from click.testing import CliRunner
    from naive_best import unsolvable_pieces

    from e2store.boards import campaign_rows
    from e2store.campaign import campaign_markdown
    from e2store.cli import main
    from e2store.instance.model import Instance
    from e2store.solver.best import solve_best

    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    out = tmp_path / "camp"
    for arm, breaks in (("one", "blackwood"), ("two", "none")):
        solve_best(inst, f"{out}/", arm=arm, breaks=breaks, restarts=4, restart_nodes=2000,
                   kernel="generic")
    rows = campaign_rows(out, inst)
    assert set(rows) == {"one", "two"} and all(len(r["depth"]) == 4 for r in rows.values())
    r = CliRunner().invoke(main, ["summary", "--boards", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output == campaign_markdown(rows)
    assert "| one | two |" in r.output
    assert "depth >= 28 | depth >= 29 | depth >= 30 |" in r.output  # the 6x6 board's
    assert "| >= 46 |" in r.output and "| >= 466 |" not in r.output
    r = CliRunner().invoke(main, ["summary", "--boards", str(out), "-o",
                                  str(tmp_path / "r.md")])
    assert r.exit_code == 0, r.output
    assert {p.name for p in tmp_path.iterdir()} >= {"r.md", "r-depth.png", "r-filled.png"}
    written = (tmp_path / "r.md").read_text()
    assert written.startswith(campaign_markdown(rows)) and "## Best boards" in written
    r = CliRunner().invoke(main, ["summary", "--boards", str(out), "--store", str(tmp_path)])
    assert r.exit_code == 2 and "--boards takes no --store" in r.output
    # the depths and targets given: the report's, as the library's with them
    r = CliRunner().invoke(main, ["summary", "--boards", str(out), "--depths", "20,25",
                                  "--targets", "40,41"])
    assert r.exit_code == 0, r.output
    assert r.output == campaign_markdown(rows, depths=(20, 25), targets=(40, 41))
    assert "depth >= 20 | depth >= 25 |" in r.output and "| >= 41 |" in r.output
    for bad in ("41,40", "x", "0,1"):
        r = CliRunner().invoke(main, ["summary", "--boards", str(out), "--targets", bad])
        assert r.exit_code == 2 and "--targets" in r.output
    r = CliRunner().invoke(main, ["summary", "--store", str(tmp_path), "--targets", "40"])
    assert r.exit_code == 2 and "go with --boards" in r.output


def naive_joins(width: int, height: int) -> int:
    """The inner joins of a W x H board, counted pair by pair."""
    return sum(1 for y in range(height) for x in range(width)
               for dx, dy in ((1, 0), (0, 1)) if x + dx < width and y + dy < height)


def test_thresholds_follow_the_board():
    from e2store.campaign.stats import board_depths, board_targets

    assert board_depths(256) == (248, 249, 250) and board_targets(480) == (466, 467, 468)
    assert naive_joins(16, 16) == 480
    for w, h in ((6, 6), (4, 7), (10, 10), (16, 16)):
        cells, joins = w * h, naive_joins(w, h)
        assert board_depths(cells) == (cells - 8, cells - 7, cells - 6)
        assert board_targets(joins) == (joins - 14, joins - 13, joins - 12)
    assert board_depths(6) == () and board_depths(8) == (1, 2)
    assert board_targets(12) == () and board_targets(14) == (1, 2)
    s = arm_stats([30, 28, 25], [50, 47, 40], [1, 1, 1], [1.0, 1.0, 1.0], cells=36,
                  resamples=50)
    assert list(s.reach) == [28, 29, 30] and s.reach[28].value == pytest.approx(2 / 3)
    assert list(arm_stats([1], [1], [1], [1.0], resamples=10).reach) == [248, 249, 250]
    t = tail_hours([47, 46, 40], [3600.0] * 3, joins=60)
    assert [(g.score, g.seen) for g in t.targets] == [(46, 2), (47, 1), (48, 0)]
    assert [g.score for g in tail_hours([1], [1.0]).targets] == [466, 467, 468]


def _rows(n_cells: int, joins: int, seed: int = 5) -> dict:
    """Two arms of restarts around 92% of the cells and 85% of the joins."""
    rng = np.random.default_rng(seed)
    out = {}
    for k, name in enumerate(("base", "wide")):
        n = 400
        out[name] = {"depth": np.minimum(n_cells, rng.normal(0.95 * n_cells, 3, n).round()
                                         .astype(int) + k),
                     "filled": np.minimum(joins, joins - 30 + k + rng.geometric(0.3, n)),
                     "nodes": rng.integers(10 ** 5, 10 ** 6, n),
                     "seconds": rng.uniform(1, 2, n),
                     "cells": np.full(n, n_cells), "joins": np.full(n, joins)}
    return out


def targets_of(text: str) -> list[int]:
    """The scores of the tail tables' rows (`| >= s | seen | P | from | ...`), in order."""
    import re

    return [int(m[1]) for m in re.finditer(
        r"^\| >= (\d+) \| \d+ \| [^|]+ \| (?:observed|model|beyond|rejected|none) \|", text, re.M)]


def test_a_6x6_campaign_reports_its_own_depths_and_targets(tmp_path):
    from e2store.campaign import campaign_markdown

    rows = _rows(36, 60)
    text = campaign_markdown(rows, resamples=100)
    assert "| depth >= 28 | depth >= 29 | depth >= 30 |" in text
    assert targets_of(text) == [46, 47, 48] * 2  # per arm
    assert "248" not in text and "466" not in text
    given = campaign_markdown(rows, resamples=100, depths=(20,), targets=(50,))
    assert "| depth >= 20 |" in given and "depth >= 28" not in given
    assert targets_of(given) == [50, 50]
    written = campaign_report(rows, tmp_path / "r.md", resamples=100, plots=False)
    assert written[0].read_text() == text
    rows["wide"]["cells"] = np.full(400, 49)
    with pytest.raises(ValueError, match="different sizes"):
        campaign_markdown(rows, resamples=100)


def test_an_e2_campaign_report_is_unchanged():
    """Rows of 16x16 boards, or rows that do not say their board: 248-250 and 466-468, the
    same report as the thresholds given by hand (what it was before they followed the
    board)."""
    from e2store.campaign import campaign_markdown

    rows = _rows(256, 480)
    old = campaign_markdown(rows, resamples=100, depths=(248, 249, 250),
                            targets=(466, 467, 468))
    assert campaign_markdown(rows, resamples=100) == old
    bare = {a: {k: v for k, v in r.items() if k not in ("cells", "joins")}
            for a, r in rows.items()}
    assert campaign_markdown(bare, resamples=100) == old
    assert "| depth >= 248 | depth >= 249 | depth >= 250 |" in old
    assert targets_of(old) == [466, 467, 468] * 2
