"""A campaign's analysis (`e2store.campaign.analysis.analyse`) as Markdown
(`campaign_markdown`, what `e2store summary --boards` and `e2store campaign report` print)
and as files with plots (`campaign_report`): per arm its statistics, the arms compared, the
finish, the tail, the best boards (docs/campaigns.md).  This module renders; it computes
nothing the analysis holds."""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from e2store.campaign.analysis import (
    TAIL_RULE,
    CampaignAnalysis,
    FinishSummary,
    analyse,
)
from e2store.campaign.config import Campaign
from e2store.campaign.stats import Estimate
from e2store.campaign.tail import ENOUGH, REACH, Z95, Tail, TailTarget
from e2store.campaign.tally import Counts, Rows, tallies, tally_boards
from e2store.files import atomic_write_bytes, atomic_write_text


def _e(e: Estimate, digits: int = 2) -> str:
    return f"{e.value:.{digits}f} [{e.low:.{digits}f}, {e.high:.{digits}f}]"


def _hours(h: float) -> str:
    return "not estimated" if math.isnan(h) else "inf" if math.isinf(h) else f"{h:.4g}"


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


def _survival(path: Path, arms: Mapping[str, Counts], label: str) -> None:
    """A PNG of the fraction of each arm's restarts reaching at least each value (survival
    curves, log scale: the upper tail a record hunt lives on stays readable however few
    restarts reach it; integer ticks)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(8, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for k, (name, (xs, counts)) in enumerate(arms.items()):
        n = int(np.sum(counts))
        if n == 0:
            continue
        reach = np.cumsum(counts[::-1])[::-1]  # restarts at or above each value
        ax.step(xs, reach / n, where="post", color=f"C{k % 10}",
                marker=".", label=f"{name} ({n} restarts)")
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


def campaign_report(rows: Rows, path: str | Path, *, depths: Sequence[int] | None = None,
                    targets: Sequence[int] | None = None, resamples: int = 2000,
                    seed: int = 0, plots: bool = True,
                    analysis: CampaignAnalysis | None = None) -> list[Path]:
    """Write the Markdown report of a campaign (arm -> per-restart arrays "depth",
    "filled", "nodes", "seconds", and "cells", "joins" when known) to `path`, and its PNG
    plots beside it (`<stem>-depth.png`, `<stem>-filled.png`); returns the files written.
    `depths`, `targets`: default the board's (`report_thresholds`); `analysis`: the rows'
    analysis when already made (`analyse`)."""
    path = Path(path)
    rows = tallies(rows)
    if analysis is None:
        analysis = analyse(rows, depths=depths, targets=targets, resamples=resamples,
                           seed=seed)
    text = render_markdown(analysis)
    written = []
    if plots:
        for value, label in (("depth", "deepest depth"), ("filled", "filled score")):
            png = path.with_name(f"{path.stem}-{value}.png")
            _survival(png, {a: getattr(t, value) for a, t in rows.items()}, label)
            written.append(png)
        text += "\n".join(["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in written]
                          + [""])
    atomic_write_text(path, text)
    return [path] + written


def campaign_markdown(rows: Rows, *, depths: Sequence[int] | None = None,
                      targets: Sequence[int] | None = None, resamples: int = 2000,
                      seed: int = 0) -> str:
    """The Markdown of `campaign_report` without its plots (`render_markdown` of the rows'
    analysis); `depths`, `targets` default the board's (`report_thresholds`)."""
    return render_markdown(analyse(rows, depths=depths, targets=targets,
                                   resamples=resamples, seed=seed))


def render_markdown(an: CampaignAnalysis) -> str:
    """A campaign's analysis as the report's Markdown, without its plots."""
    lines = ["# Campaign report", "",
             "Intervals are 95%: percentile bootstrap for means and medians "
             f"({an.resamples} resamples, seed {an.seed}), Wilson score intervals for "
             "fractions. Comparisons: two-sided Mann-Whitney U, normal approximation with tie "
             "and continuity corrections; effect = P(A > B) + 0.5 P(A = B). "
             "Method notes: docs/campaigns.md.", "", "## Arms", ""]
    head = ["arm", "restarts", "s/restart", "search s", "fill s", "restarts/core-h",
            "placements/core-s", "depth mean", "depth median", "filled mean",
            "filled median"] + [f"depth >= {d}" for d in an.depths]
    lines += ["A restart's cost is its search and what follows it, its fill (its holes "
              "filled) and finish (its boards' tails re-solved): s/restart is their sum, and "
              "the rates per core count it (the search's own rate is in `solve`'s report).",
              "",
              "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, arm in an.arms.items():
        st = arm.stats
        cells = [name, str(st.restarts), f"{st.seconds_per_restart:.4g}",
                 f"{st.search_seconds:.4g}", f"{st.fill_seconds:.4g}",
                 f"{st.restarts_per_hour:.4g}", f"{st.rate:.4g}",
                 _e(st.depth_mean), _e(st.depth_median), _e(st.filled_mean),
                 _e(st.filled_median)] + [_e(st.reach[d], 4) for d in an.depths]
        lines.append("| " + " | ".join(cells) + " |")
    if any(a.repeats for a in an.arms.values()):
        lines += ["", "Repeats (final boards equal to one the arm found before, turned "
                  "too): " + ", ".join(f"{n} {a.repeats}" for n, a in an.arms.items()) + "."]
    lines += finish_lines({n: a.finish for n, a in an.arms.items()})
    for value, title in (("depth", "deepest depth"), ("filled", "filled score")):
        lines += ["", f"## Comparisons: {title}", ""]
        pairs = [c for c in an.comparisons if c.value == value]
        if not pairs:
            lines.append("One arm: nothing to compare.")
            continue
        lines += ["| A | B | U | z | p | effect P(A>B) | significant | restarts needed "
                  "per arm | more per arm |", "|---|---|---|---|---|---|---|---|---|"]
        for pc in pairs:
            c = pc.result
            lines.append(f"| {pc.a} | {pc.b} | {c.u:.6g} | {c.z:.3f} | {c.p:.3g} | "
                         f"{c.effect:.4f} | {'yes' if c.significant else 'no'} | "
                         f"{c.restarts_needed if c.restarts_needed else '-'} | "
                         f"{c.more_restarts} |")
    lines += ["", "## Tail: core-hours to a full board", "", TAIL_RULE, ""]
    for name, arm in an.arms.items():
        lines += [f"### {name}", ""] + tail_lines(arm.tail) + [""]
    lines += _best_boards(an)
    return "\n".join(lines) + "\n"


def finish_lines(finishes: Mapping[str, FinishSummary | None]) -> list[str]:
    """The report's *The finish* (none when no restart was finished): per arm, what the
    finish (a restart's boards filled and their tails re-solved exactly) made of its
    restarts (`FinishSummary`)."""
    if not any(f is not None for f in finishes.values()):
        return []
    lines = ["", "## The finish", "",
             "Each restart's best boards filled, then the last cells of the scan re-solved "
             "exactly (docs/solver.md, *The finish*): the filled score before it and after, "
             "over the restarts it finished.", "",
             "| arm | finished | before mean | after mean | gain mean | raised | max gain | "
             "before max | after max | reaching, before -> after | finish s/restart | "
             "share of time |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, f in finishes.items():
        if f is None:
            lines.append(f"| {name} | 0 | - | - | - | - | - | - | - | - | - | - |")
            continue
        reach = ", ".join(f"{t}+: {b} -> {a}" for t, b, a in f.reach)
        lines.append(f"| {name} | {f.finished} | {f.before_mean:.3f} | {f.after_mean:.3f} | "
                     f"{f.gain_mean:.3f} | {f.raised} | {f.max_gain} | "
                     f"{f.before_max} | {f.after_max} | {reach} | "
                     f"{f.seconds_per_restart:.3g} | {f.share:.1%} |")
    return lines


def _best_boards(an: CampaignAnalysis) -> list[str]:
    """The report's *Best boards*: each arm's best restarts (filled score, then depth) with
    their viewer link, when the rows carry `url` (`restart_arrays` adds it, with `seed`
    and `restart`)."""
    if not an.arms or any(not a.best for a in an.arms.values()):
        return []
    lines = ["## Best boards", "",
             "Each arm's best restarts, by filled score then depth, each with its board (the "
             "filled one when filled) in the e2.bucas.name viewer, in the official "
             "orientation.", "",
             "| arm | filled score | depth | seed | restart | board |", "|---|---|---|---|---|---|"]
    for name, arm in an.arms.items():
        for b in arm.best:
            link = f"[open in the viewer]({b['url']})" if b["url"] else "(no viewer lettering)"
            lines.append(f"| {name} | {b['filled']} | {b['depth']} | {b['seed']} | "
                         f"{b['restart']} | {link} |")
    return lines + [""]


def write_campaign_report(campaign: Campaign, output: str | Path, *,
                          saved: str | Path | None = None,
                          log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """A campaign's report, as the pipeline's `best_report` makes it: its dataset
    compacted (seeds of `COMPACT_MIN_PARTS` parts and more, every board recounted first),
    its restarts read and checked (`open_boards`), analysed once (`analyse`: the
    campaign's depths and targets) and written as Markdown with plots to `output`; with
    `saved`, its best boards (`campaign.saved` of them) as Blackwood-style saved-board
    files there.  Returns the analysis as JSON (`CampaignAnalysis.to_dict`) with the files
    written."""
    from e2store.boards import open_boards, write_saved_boards
    from e2store.instance.formats import read_instance

    say = log or (lambda line: None)
    inst = read_instance(campaign.instance)
    with open_boards(campaign.boards, inst) as h:
        if Path(campaign.boards).is_dir():
            done = h.compact()
            say(f"compacted {len(done['compacted'])} files")
        rows = tally_boards(h)  # every part was recounted by compact(): files trusted
        an = analyse(rows, depths=campaign.depths, targets=campaign.targets)
        written = [str(p) for p in campaign_report(rows, output, analysis=an)]
        if saved is not None:
            Path(saved).mkdir(parents=True, exist_ok=True)
            if campaign.saved > 0:
                written += [str(p) for p in write_saved_boards(  # the best alone read
                    inst, h.top(campaign.saved), saved, top=campaign.saved)]
    for w in written:
        say(f"wrote {w}")
    return {**an.to_dict(), "written": written}
