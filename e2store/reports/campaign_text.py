"""Campaign reports as Markdown (`campaign_markdown`, what `e2store summary --boards`
prints) and as files with plots (`campaign_report`): the statistics of
`e2store.reports.campaign` per arm, the arms compared, the tail, the best boards
(docs/campaigns.md)."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from e2store.files import atomic_write_bytes, atomic_write_text
from e2store.reports.campaign import (
    Estimate,
    arm_stats,
    compare_arms,
    report_thresholds,
)
from e2store.reports.tail import (
    ENOUGH,
    REACH,
    REJECT_P,
    WALL,
    Z95,
    Tail,
    TailTarget,
    tail_hours,
)


def _e(e: Estimate, digits: int = 2) -> str:
    return f"{e.value:.{digits}f} [{e.low:.{digits}f}, {e.high:.{digits}f}]"


def _hours(h: float) -> str:
    return "not estimated" if math.isnan(h) else "inf" if math.isinf(h) else f"{h:.4g}"


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


def tail_lines(t: Tail) -> list[str]:
    """One arm's tail as Markdown: model, targets with their ranges, check, verdict."""
    lines = []
    if t.model:
        m = t.model
        steeper, flatter = (math.exp(-m.slope + k * Z95 * m.slope_se) for k in (1, -1))
        lines.append(f"Model: log P = {m.intercept:.4f} {m.slope:+.4f} s, fitted over "
                     f"{m.scores[0]}..{m.scores[-1]}: each point {1 / m.ratio:.3g} times "
                     f"rarer than the one below (95% [{flatter:.3g}, {steeper:.3g}]).")
    else:
        lines.append("No tail model (fewer than 2 scores reached by 10 restarts).")
    if t.limit is not None:
        lines.append(f"Estimated up to {t.limit}: {REACH} points above {t.anchor}, the "
                     f"highest score at least {ENOUGH} restarts reached.")
    lines += ["", "| score | seen | P per restart | from | core-hours [95% range] |",
              "|---|---|---|---|---|"]
    for g in t.targets:
        lines.append(f"| >= {g.score} | {g.seen} | "
                     f"{'-' if math.isnan(g.probability) else f'{g.probability:.3g}'} | "
                     f"{g.source} | {_target_hours(g, t)} |")
    if t.check:
        lines += ["", "Model check (restarts reaching each upper observed score):", "",
                  "| score | seen | predicted |", "|---|---|---|"]
        lines += [f"| >= {s} | {o} | {e:.1f} |" for s, o, e in t.check]
    if t.verdict is not None:
        v = t.verdict
        lines += ["", f"Verdict: the model is **{'rejected' if v.rejected else 'kept'}**"
                  f": its least likely check is >= {v.score}, {v.seen} seen where "
                  f"{v.expected:.1f} were predicted (p = {v.p:.3g})"
                  + (", so the core-hours of unseen scores are not estimated."
                     if v.rejected else ".")]
    return lines


def _target_hours(g: TailTarget, t: Tail) -> str:
    """A target's core-hours with its range, or why it has none."""
    if g.estimated:
        return f"{_hours(g.core_hours)} [{_hours(g.low)}, {_hours(g.high)}]"
    if g.source == "rejected":
        return "not estimated: the model failed its check"
    if g.source == "none":
        return "not estimated: no restart"
    if t.anchor is None or t.model is None:
        return "not estimated: beyond the data (too few restarts for a model)"
    return (f"not estimated: beyond the data (more than {REACH} points above {t.anchor}, "
            f"the highest score {ENOUGH} restarts reached)")


def _survival(path: Path, arms: Mapping[str, np.ndarray], label: str) -> None:
    """A PNG of the fraction of each arm's restarts reaching at least each value (survival
    curves, log scale: the upper tail a record hunt lives on stays readable however few
    restarts reach it; integer ticks)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(8, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for k, (name, v) in enumerate(arms.items()):
        v = np.sort(np.asarray(v, dtype=np.int64))
        if len(v) == 0:
            continue
        xs, first = np.unique(v, return_index=True)
        ax.step(xs, (len(v) - first) / len(v), where="post", color=f"C{k % 10}",
                marker=".", label=f"{name} ({len(v)} restarts)")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(label)
    ax.set_ylabel("fraction of restarts reaching it")
    ax.set_title(f"{label}: fraction of restarts reaching at least each value")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    atomic_write_bytes(path, buf.getvalue())


def _arrays(r: Mapping[str, Sequence[float] | np.ndarray]) -> dict[str, np.ndarray]:
    """A row's arrays the report reads (`fill_seconds` zeros when not given)."""
    out = {k: np.asarray(r[k]) for k in ("depth", "filled", "nodes", "seconds")}
    out["fill_seconds"] = np.asarray(r.get("fill_seconds", np.zeros(len(out["seconds"]))),
                                     dtype=np.float64)
    return out


def restart_seconds(r: Mapping[str, Sequence[float] | np.ndarray]) -> np.ndarray:
    """Each restart's core-seconds: its search's `seconds` and its fill's `fill_seconds`
    (when given): what the tail's core-hours count; placements per second count the
    search alone."""
    sec = np.asarray(r["seconds"], dtype=np.float64)
    fill = r.get("fill_seconds")
    return sec if fill is None else sec + np.asarray(fill, dtype=np.float64)


def campaign_report(rows: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
                    path: str | Path, *, depths: Sequence[int] | None = None,
                    targets: Sequence[int] | None = None, resamples: int = 2000,
                    seed: int = 0, plots: bool = True) -> list[Path]:
    """Write the Markdown report of a campaign (arm -> per-restart arrays "depth",
    "filled", "nodes", "seconds", and "cells", "joins" when known) to `path`, and its PNG
    plots beside it (`<stem>-depth.png`, `<stem>-filled.png`); returns the files written.
    `depths`, `targets`: default the board's (`report_thresholds`)."""
    path = Path(path)
    depths, targets = report_thresholds(rows, depths=depths, targets=targets)
    arms = {name: _arrays(r) for name, r in rows.items()}
    text = campaign_markdown(rows, depths=depths, targets=targets, resamples=resamples,
                             seed=seed)  # the rows: their urls make its *Best boards*
    written = []
    if plots:
        for value, label in (("depth", "deepest depth"), ("filled", "filled score")):
            png = path.with_name(f"{path.stem}-{value}.png")
            _survival(png, {a: r[value] for a, r in arms.items()}, label)
            written.append(png)
        text += "\n".join(["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in written]
                          + [""])
    atomic_write_text(path, text)
    return [path] + written


def campaign_markdown(rows: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]], *,
                      depths: Sequence[int] | None = None,
                      targets: Sequence[int] | None = None, resamples: int = 2000,
                      seed: int = 0) -> str:
    """The Markdown of `campaign_report` without its plots (what `e2store summary
    --boards` prints); `depths`, `targets` default the board's (`report_thresholds`)."""
    depths, targets = report_thresholds(rows, depths=depths, targets=targets)
    arms = {name: _arrays(r) for name, r in rows.items()}
    lines = ["# Campaign report", "",
             "Intervals are 95%: percentile bootstrap for means and medians "
             f"({resamples} resamples, seed {seed}), Wilson score intervals for fractions. "
             "Comparisons: two-sided Mann-Whitney U, normal approximation with tie and "
             "continuity corrections; effect = P(A > B) + 0.5 P(A = B). "
             "Method notes: docs/campaigns.md.", "", "## Arms", ""]
    head = ["arm", "restarts", "s/restart", "search s", "fill s", "restarts/core-h",
            "placements/core-s", "depth mean", "depth median", "filled mean",
            "filled median"] + [f"depth >= {d}" for d in depths]
    lines += ["A restart's cost is its search and what follows it, its fill (its holes "
              "filled) and finish (its boards' tails re-solved): s/restart is their sum, and "
              "the rates per core count it (the search's own rate is in `solve`'s report).",
              "",
              "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, (name, r) in enumerate(arms.items()):
        st = arm_stats(r["depth"], r["filled"], r["nodes"], r["seconds"], depths=depths,
                       resamples=resamples, seed=seed + 2 * k, fill_seconds=r["fill_seconds"])
        cells = [name, str(st.restarts), f"{st.seconds_per_restart:.4g}",
                 f"{st.search_seconds:.4g}", f"{st.fill_seconds:.4g}",
                 f"{st.restarts_per_hour:.4g}", f"{st.rate:.4g}",
                 _e(st.depth_mean), _e(st.depth_median), _e(st.filled_mean),
                 _e(st.filled_median)] + [_e(st.reach[d], 4) for d in depths]
        lines.append("| " + " | ".join(cells) + " |")
    lines += finish_lines(rows)
    names = list(arms)
    for value, title in (("depth", "deepest depth"), ("filled", "filled score")):
        lines += ["", f"## Comparisons: {title}", ""]
        if len(names) < 2:
            lines.append("One arm: nothing to compare.")
            continue
        lines += ["| A | B | U | z | p | effect P(A>B) | significant | restarts needed "
                  "per arm | more per arm |", "|---|---|---|---|---|---|---|---|---|"]
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                c = compare_arms(arms[a][value], arms[b][value])
                lines.append(f"| {a} | {b} | {c.u:.6g} | {c.z:.3f} | {c.p:.3g} | "
                             f"{c.effect:.4f} | {'yes' if c.significant else 'no'} | "
                             f"{c.restarts_needed if c.restarts_needed else '-'} | "
                             f"{c.more_restarts} |")
    lines += ["", "## Tail: core-hours to a full board", "", TAIL_RULE, ""]
    for name, r in arms.items():
        lines += [f"### {name}", ""] + tail_lines(tail_hours(r["filled"], restart_seconds(r),
                                                             targets)) + [""]
    lines += _best_boards(rows)
    return "\n".join(lines) + "\n"


REACH_SHOWN = 3  # the finish's table: restarts reaching each of the top 3 scores


def finish_lines(rows: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
                 ) -> list[str]:
    """The report's *The finish* (none when no restart was finished): per arm, what the
    finish (a restart's boards filled and their tails re-solved exactly) made of its
    restarts: their filled scores before it and after (`before`, `filled`), the restarts
    it raised, those reaching each of the top scores before and after, and its seconds as
    a share of the restarts' cost."""
    done = {a: np.asarray(r.get("finished", ()), dtype=bool) for a, r in rows.items()}
    if not any(d.any() for d in done.values()):
        return []
    lines = ["", "## The finish", "",
             "Each restart's best boards filled, then the last cells of the scan re-solved "
             "exactly (docs/solver.md, *The finish*): the filled score before it and after, "
             "over the restarts it finished.", "",
             "| arm | finished | before mean | after mean | gain mean | raised | max gain | "
             "before max | after max | reaching, before -> after | finish s/restart | "
             "share of time |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        d = done[name]
        if not d.any():
            lines.append(f"| {name} | 0 | - | - | - | - | - | - | - | - | - | - |")
            continue
        before = np.asarray(r["before"], dtype=np.int64)[d]
        after = np.asarray(r["filled"], dtype=np.int64)[d]
        fin = np.asarray(r.get("finish_seconds", np.zeros(len(d))), dtype=np.float64)
        total = float(restart_seconds(r).sum())
        gain = after - before
        top = int(after.max())
        reach = ", ".join(f"{t}+: {int((before >= t).sum())} -> {int((after >= t).sum())}"
                          for t in range(top - REACH_SHOWN + 1, top + 1))
        lines.append(f"| {name} | {int(d.sum())} | {before.mean():.3f} | {after.mean():.3f} | "
                     f"{gain.mean():.3f} | {int((gain > 0).sum())} | {int(gain.max())} | "
                     f"{int(before.max())} | {top} | {reach} | "
                     f"{fin[d].mean():.3g} | {fin.sum() / total if total > 0 else 0:.1%} |")
    return lines


BEST_LISTED = 3  # boards listed per arm in the report's *Best boards*


def _best_boards(rows: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]]) -> list[str]:
    """The report's *Best boards*: each arm's best restarts (filled score, then depth) with
    their viewer link, when the rows carry `url` (`restart_arrays` adds it, with `seed`
    and `restart`)."""
    if not rows or any("url" not in r for r in rows.values()):
        return []
    lines = ["## Best boards", "",
             "Each arm's best restarts, by filled score then depth, each with its board (the "
             "filled one when filled) in the e2.bucas.name viewer, in the official "
             "orientation.", "",
             "| arm | filled score | depth | seed | restart | board |", "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        filled, depth = np.asarray(r["filled"]), np.asarray(r["depth"])
        order = np.lexsort((np.arange(len(filled)), -depth, -filled))[:BEST_LISTED]
        for i in order.tolist():
            url = str(np.asarray(r["url"], dtype=object)[i])
            link = f"[open in the viewer]({url})" if url else "(no viewer lettering)"
            lines.append(f"| {name} | {int(filled[i])} | {int(depth[i])} | "
                         f"{int(np.asarray(r['seed'])[i])} | {int(np.asarray(r['restart'])[i])} | "
                         f"{link} |")
    return lines + [""]
