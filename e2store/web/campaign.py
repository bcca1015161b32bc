"""The explorer's page of a boards dataset (`serve --boards DIR`), a best-score campaign's
(issue 48) while it runs: per shard, its progress (restarts done, placements per second,
best score and depth, when its last part came, and whether it is done, running or was
stopped); per arm, its best board drawn with its mismatched joins and its viewer link;
the best score over time, a line per arm; and the arms compared as the campaign report
compares them (`e2store.campaign.stats`: rate, depth and filled-score distributions,
fractions reaching the top depths with their intervals, the rank test of each pair, the
tail), with the boards page's own parts (`boards_data`: every row by score, the best one).

Each load reads the parts that came since the last (`BoardsSource.read_dataset`); what is
derived from the rows alone (the statistics, pictures and plots) is kept until a new part
comes.  The shards are those of the rows' restarts (k % N) when the campaign tells N: its
receipts (`<results>/best/receipts/<arm>/s<seed>-shard-<k>-of-<n>.json`, beside the
dataset when it is a campaign's `boards/` directory: a job that ended), its jobs' logs
(`<results>/best/logs/...`, the same names in `.log`: a job started), or the lock a
running writer holds in the dataset (`arm=<arm>/.seed=<s>[.shard=<k>of<n>].lock`: gone
when the writer ends, left by one killed; a shard seen so stays known to the server).
Else a row per (arm, seed).  While a writer holds its lock, or a part came in the last
`LIVE_SECONDS` and not every shard is done, the page reloads itself every
`REFRESH_SECONDS`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from e2store.campaign.analysis import num
from e2store.campaign.status import RECEIPTS, Key, campaign_status
from e2store.instance.model import Instance
from e2store.web.boards import BoardsSource, board_svg, boards_data, viewer_url, waiting_page

LIVE_SECONDS = 600  # a part this recent: the campaign is taken as running
REFRESH_SECONDS = 30  # the page of a running campaign reloads itself this often
MAX_DOTS = 2000  # boards per arm drawn as dots on the time plot (beyond: the line alone)


def _fill_seconds(st: dict, arm_ix: np.ndarray, best: np.ndarray) -> np.ndarray:
    """Per row, the seconds after the search it records (fill and finish): on a restart's
    final row (its finished board's, else its filled board's), its `found` less that of
    the restart's deepest board (`restart_arrays` counts it so), 0 elsewhere and where
    either time is unknown."""
    found = np.asarray(st["found"], dtype=np.float64)
    key = np.column_stack([arm_ix, np.asarray(st["seed"], dtype=np.int64),
                           np.asarray(st["restart"], dtype=np.int64)])
    if not len(key):
        return np.zeros(0)
    _, ix = np.unique(key, axis=0, return_inverse=True)
    ix = ix.reshape(-1)
    start = np.zeros(int(ix.max()) + 1)
    start[ix[best]] = found[best]
    source = np.asarray(st["source"], dtype=object)
    finished = np.zeros(len(start), dtype=bool)
    finished[ix[source == "finished"]] = True
    final = (source == "finished") | ((source == "filled") & ~finished[ix])
    known = final & (found > 0) & (start[ix] > 0)
    return np.where(known, np.maximum(0.0, found - start[ix]), 0.0)


def shard_progress(d, receipts: dict[Key, dict], locks: dict[Key, str],
                   seen: Iterable[Key] = ()) -> list[dict]:
    """A row per shard of the dataset `d` (`DatasetBoards`): per (arm, seed), split by
    restart % N when its receipts, locks and the shards `seen` started (`started`, locks
    seen before) tell one shard count N; its restarts (rows of source "best"), nodes,
    seconds (search and fill: a restart's cost, as the report counts it, with each part
    apart) and placements per core-second over them, best score and depth over all its
    rows, the time its last board was found; `state` "done" (its receipt: `ended`,
    `finished`), "running", "stopped" or "" (none of those known)."""
    st = d.boards.stats
    arms = np.asarray(d.arms, dtype=object)
    starts = np.flatnonzero(np.concatenate([[True], arms[1:] != arms[:-1]])) if len(
        arms) else np.zeros(0, np.int64)  # runs of one arm: parts come in arm order
    names = sorted({str(arms[i]) for i in starts})
    code = {a: i for i, a in enumerate(names)}
    arm_ix = np.repeat(np.array([code[str(arms[i])] for i in starts], dtype=np.int64),
                       np.diff(np.append(starts, len(arms))))
    seed = np.asarray(st["seed"], dtype=np.int64)
    restart = np.asarray(st["restart"], dtype=np.int64)
    told = [*receipts, *locks, *seen]
    pair_rows, pair_ix = np.unique(np.column_stack([arm_ix, seed]).reshape(-1, 2), axis=0,
                                   return_inverse=True)
    pair_ix = pair_ix.reshape(-1)
    pairs = {(names[a], int(s)) for a, s in pair_rows.tolist()} | {k[:2] for k in told}
    counts = {p: {k[3] for k in told if k[:2] == p and k[3]} for p in pairs}
    of = {p: n.pop() if len(n) == 1 else None for p, n in counts.items()}
    shard = np.full(len(arms), -1, dtype=np.int64)
    for j, (a, s) in enumerate(pair_rows.tolist()):
        n = of[(names[a], int(s))]
        if n is not None:
            mine = pair_ix == j
            shard[mine] = restart[mine] % n
    group_rows, g = np.unique(np.column_stack([pair_ix, shard]).reshape(-1, 2), axis=0,
                              return_inverse=True)
    g = g.reshape(-1)
    keys: dict[tuple[str, int, int | None], int] = {}
    for j, k in group_rows.tolist():
        a, s = pair_rows[j].tolist()
        keys[(names[a], int(s), None if k < 0 else int(k))] = len(keys)
    for a, s, k, n in told:  # shards with no part yet
        if of[(a, s)] is None or n == of[(a, s)]:
            keys.setdefault((a, s, None if of[(a, s)] is None else k), len(keys))
    m = len(keys)
    best = np.asarray(st["source"], dtype=object) == "best"
    restarts = np.bincount(g, weights=best, minlength=m)
    nodes = np.bincount(g, weights=np.where(best, st["nodes"], 0), minlength=m)
    search = np.bincount(g, weights=np.where(best, st["seconds"], 0.0), minlength=m)
    fill = np.bincount(g, weights=_fill_seconds(st, arm_ix, best), minlength=m)
    seconds = search + fill
    top = {c: np.full(m, -1, dtype=np.int64) for c in ("score", "depth")}
    for c, v in top.items():
        np.maximum.at(v, g, np.asarray(st[c], dtype=np.int64))
    last = np.zeros(m)
    np.maximum.at(last, g, np.asarray(st["found"], dtype=np.float64))
    now = time.time()
    out = []
    for (a, s, k), i in sorted(keys.items(), key=lambda t: (t[0][0], t[0][1], t[0][2] or 0)):
        n = of[(a, s)]
        got = receipts.get((a, s, k, n)) if k is not None else None
        state = locks.get((a, s, k, n), "") if k is not None else max(
            (v for key, v in locks.items() if key[:2] == (a, s)), default="",
            key=lambda v: v == "running")
        if got is not None and state != "running":
            state = "done"
        out.append({
            "arm": a, "seed": s, "shard": None if k is None else [k, n],
            "restarts": int(restarts[i]), "nodes": int(nodes[i]),
            "seconds": float(seconds[i]), "search_seconds": float(search[i]),
            "fill_seconds": float(fill[i]),
            "rate": num(nodes[i] / seconds[i]) if seconds[i] > 0 else None,
            "score": int(top["score"][i]) if top["score"][i] >= 0 else None,
            "depth": int(top["depth"][i]) if top["depth"][i] >= 0 else None,
            "last": float(last[i]) or None, "ago": _ago(now - last[i]) if last[i] else "",
            "when": _when(last[i]), "state": state,
            "ended": (got or {}).get("ended"), "finished": _when((got or {}).get("finished"))})
    return out


def campaign_page(source: BoardsSource, *, pictures: bool = True) -> dict:
    """The page of the boards dataset `source` follows: the boards page's data
    (`boards_data`, its rows with their arm) and `campaign` (`campaign_data`); the
    waiting page while no part is there."""
    try:
        instance, d = source.read_dataset()
    except FileNotFoundError:
        return waiting_page(source.path)
    kept = _kept(source, instance, d)
    return {**kept["page"], "campaign": campaign_data(source, instance, d,
                                                      pictures=pictures)}


def campaign_data(source: BoardsSource, instance: Instance, d, *,
                  pictures: bool = True) -> dict:
    """A dataset `d` (`DatasetBoards`) as a campaign: `shards` (`shard_progress`),
    `arms` (per arm: its statistics, `arm_stats`, its tail, `tail_hours`, and its best
    board with its viewer URL), `comparisons` (each pair of arms on deepest depth and
    filled score, `compare_arms`), `live` and `refresh`; with `pictures`, each arm's best
    board drawn, the best score over time and the distributions as SVG."""
    kept = _kept(source, instance, d)
    if pictures and "drawn" not in kept:
        kept["drawn"] = _drawn(instance, d, kept["rows"], kept["derived"])
    now = campaign_status(source.path)  # receipts, logs and locks: their one reader
    locks = now.writers
    seen = source.cache["shards seen"] = source.cache.get("shards seen", frozenset()) | {
        k for k in locks if k[3] is not None}  # a lock's shard stays known once it is gone
    shards = shard_progress(d, now.receipts, locks, seen | now.started)
    recent = time.time() - max((r["last"] or 0.0 for r in shards), default=0.0) < LIVE_SECONDS
    live = any(r["state"] == "running" for r in shards) or (
        recent and not all(r["state"] == "done" for r in shards))
    traced = {"trace_plot": trace_plot(now.traces)} if pictures and now.traces else {}
    return {**kept["derived"], **traced, "shards": shards,
            "receipts": None if now.results is None
            else str(now.results / RECEIPTS), "live": live,
            "refresh": REFRESH_SECONDS if live else None,
            **(kept["drawn"] if pictures else {})}


def _kept(source: BoardsSource, instance: Instance, d) -> dict:
    """What the page derives from the rows of `d` alone, kept in `source.cache` until a
    read finds a new part: `page` (`boards_data`), `rows` (`restart_arrays`),
    `derived` (`_derived`), and `drawn` once drawn."""
    from e2store.boards.restarts import restart_arrays

    kept = source.cache.get("campaign")
    if kept is None or kept["of"] is not d:
        page = boards_data(source.path, instance, d.boards, pictures=False)
        for r in [*page["rows"], *([page["best_row"]] if page["best_row"] else [])]:
            r["arm"] = str(d.arms[r["row"]])
        rows = restart_arrays(d.boards, d.arms)
        kept = source.cache["campaign"] = {"of": d, "page": page, "rows": rows,
                                           "derived": _derived(instance, d, rows)}
    return kept


def _derived(instance: Instance, d, rows: dict[str, dict[str, np.ndarray]]) -> dict:
    """The campaign's analysis (`e2store.campaign.analyse`: the report's, computed by the
    same call) as JSON, each arm with its boards and its best board (`campaign_data`)."""
    from e2store.boards.sources import best_row
    from e2store.boards.table import Boards
    from e2store.campaign import analyse

    out = analyse(rows).to_dict()  # the report's resamples and seeds; repeats from the keys
    of_arm = np.asarray(d.arms, dtype=str)
    for a in out["arms"]:
        mine = np.flatnonzero(of_arm == a["arm"])
        b = best_row(Boards(np.empty((len(mine), 0)),  # its stats alone: no cells copied
                            {c: d.boards.stats[c][mine] for c in ("score", "depth", "source",
                                                                  "kept")}))
        i = None if b is None else int(mine[b])
        a["boards"] = len(mine)
        a["best"] = None if i is None else {
            "row": i, **d.boards.row(i), "url": viewer_url(instance, d.boards.cells[i])}
    return out


def _drawn(instance: Instance, d, rows: dict[str, dict[str, np.ndarray]],
           derived: dict) -> dict:
    """Each arm's best board drawn, the time plot and the distributions (SVG)."""
    boards = []
    top = max((a["best"]["score"] for a in derived["arms"] if a["best"]), default=None)
    for a in derived["arms"]:
        if a["best"] is not None:
            i = a["best"]["row"]
            boards.append({"arm": a["arm"], "row": i, "url": a["best"]["url"],
                           "best": a["best"]["score"] == top,
                           "svg": board_svg(instance, d.boards, i, f"arm {a['arm']}")})
    return {"pictures": boards, "time_plot": time_plot(d.boards.stats, d.arms),
            "distribution_plot": distribution_plot(rows)}


def time_plot(st: dict, arms) -> str | None:
    """Best score so far against the time its board was found (hours since the first
    board), a line per arm, as inline SVG (boards of unknown time left out; None when no
    board's time is known: boards files before version 3)."""
    from matplotlib.ticker import MaxNLocator

    from e2store.web.reports import figure_svg, new_figure

    found = np.asarray(st["found"], dtype=np.float64)
    arms = np.asarray(arms, dtype=str)
    known = found > 0
    if not known.any():
        return None
    t0 = found[known].min()
    fig = new_figure((8, 3.6))
    ax = fig.subplots()
    end = float((found[known].max() - t0) / 3600)
    for k, name in enumerate(sorted(set(arms.tolist()))):
        mine = np.flatnonzero(known & (arms == name))
        if not len(mine):
            continue
        order = mine[np.argsort(found[mine], kind="stable")]
        x = (found[order] - t0) / 3600
        y = np.asarray(st["score"], dtype=np.int64)[order]
        best = np.maximum.accumulate(y)
        colour = f"C{k % 10}"
        ax.step(np.append(x, end), np.append(best, best[-1]), where="post", color=colour,
                label=f"{name}: best {int(best[-1])}")
        if len(order) <= MAX_DOTS:
            ax.plot(x, y, ".", color=colour, alpha=0.3, markersize=4)
    ax.set_xlabel("hours since the first board")
    ax.set_ylabel("score (matched joins)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # scores are whole: no 462.5
    ax.set_title("Best score so far per arm (dots: each board)", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return figure_svg(fig)


def trace_plot(traces: dict[Key, Path]) -> str | None:
    """Each job's best score over its run from its trace (`e2store best --trace`: the
    filled score when filled), minutes since it began, a line per job coloured by arm, as
    inline SVG; None when no trace has a restart yet."""
    from matplotlib.ticker import MaxNLocator

    from e2store.solver.best import read_trace
    from e2store.web.reports import figure_svg, new_figure

    lines = []
    for key, path in sorted(traces.items(), key=lambda kv: tuple(map(str, kv[0]))):
        rows = [r for r in read_trace(path) if r["score"] is not None]
        if rows:
            lines.append((key, [r["elapsed"] / 60 for r in rows],
                          [r["filled"] if r["filled"] is not None else r["score"]
                           for r in rows]))
    if not lines:
        return None
    arms = sorted({k[0] for k, _, _ in lines})
    fig = new_figure((8, 3.6))
    ax = fig.subplots()
    labelled: set[str] = set()
    for key, x, y in lines:
        k = arms.index(key[0])
        label = None if key[0] in labelled else key[0]
        labelled.add(key[0])
        ax.step(x, y, where="post", color=f"C{k % 10}", alpha=0.8, label=label)
    ax.set_xlabel("minutes since the job began")
    ax.set_ylabel("best score (filled)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Each job's best score over its run (its trace), coloured by arm",
                 fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return figure_svg(fig)


def distribution_plot(rows: dict[str, dict[str, np.ndarray]]) -> str:
    """Per arm, the fraction of its restarts whose deepest depth, and whose filled score,
    reaches at least each value (survival curves, log scale: the upper tail a record hunt
    lives on stays readable however few restarts reach it), as inline SVG."""
    from matplotlib.ticker import MaxNLocator

    from e2store.web.reports import figure_svg, new_figure

    fig = new_figure((10, 3.4))
    axes = fig.subplots(1, 2)
    for ax, (value, label) in zip(axes, (("depth", "deepest depth"),
                                         ("filled", "filled score")), strict=True):
        for k, (name, r) in enumerate(rows.items()):
            v = np.sort(np.asarray(r[value], dtype=np.int64))
            xs, first = np.unique(v, return_index=True)
            reach = (len(v) - first) / len(v)  # fraction of restarts >= each value seen
            ax.step(xs, reach, where="post", color=f"C{k % 10}", marker=".",
                    label=f"{name} ({len(v)} restarts)")
        ax.set_yscale("log")
        ax.set_xlabel(label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("fraction of restarts reaching it")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return figure_svg(fig)


def _when(t: Any) -> str:
    """Epoch seconds as UTC date and time ("" for none)."""
    if not isinstance(t, (int, float, np.floating)) or not t or not math.isfinite(t):
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(t)))


def _ago(s: float) -> str:
    """A duration as "12 s ago", "5 min ago", "3.2 h ago"."""
    s = max(0.0, float(s))
    return (f"{s:.0f} s ago" if s < 120 else f"{s / 60:.0f} min ago" if s < 7200
            else f"{s / 3600:.1f} h ago")
