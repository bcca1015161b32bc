"""`e2store best` and `e2store score` as library calls: a best-score run that
writes its boards file (resumed, one writer at a time, every restart saved as it ends, its
best boards filled), the live display of a run, its report, and the scores of boards given
as files or URLs.  The command line parses its options and calls these."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from e2store.instance.model import Instance

from .fill import fill_holes
from .plan import BestPlan, best_plan
from .run import BestRun, restart_row, run_best, sigint_raises, sigint_sets
from .schedules import (
    DEFAULT_BOARDS,
    DEFAULT_BREAKS,
    DEFAULT_ORDER,
    DEFAULT_QUOTA,
    DEFAULT_RESTART_NODES,
    DEFAULT_SCAN,
    DEFAULT_SEED,
)
from .search import RestartResult
from .trace import Trace

FILL_SECONDS = 10.0  # per restart's best board: its holes filled within this time


def solve_best(instance: Instance, output: str | Path = DEFAULT_BOARDS, *,
               scan: str | Path | np.ndarray = DEFAULT_SCAN,
               fixed: dict[tuple[int, int], int] | None = None, clues: str | None = None,
               breaks: str | Sequence[int] = DEFAULT_BREAKS,
               quota: str | Sequence[int] | None = DEFAULT_QUOTA, order: str = DEFAULT_ORDER,
               store: str | Path | None = None, seed: int = DEFAULT_SEED,
               restart_nodes: int = DEFAULT_RESTART_NODES, restarts: int | None = None,
               seconds: float | None = None, max_nodes: int | None = None, workers: int = 1,
               fill: bool = True, finish: bool = True, kernel: str = "auto",
               live: bool = False, arm: str | None = None,
               shard: tuple[int, int] | None = None,
               trace: str | Path | None = None,
               keep_min_score: int | None = None) -> dict[str, Any]:
    """Run a best-score search as `e2store best` does (the options and defaults
    are `best_plan`'s and `run_best`'s) and return its report (`best_report`): every
    restart's best board (and, with `fill`, that board with its holes filled, and with
    `finish` too, the best of its boards finished: `finish_restart`) saved as the
    restart ends: appended to the boards file `output`, or written as the restart's part
    of the boards dataset `output` (a directory, a name ending in `/` or without suffix:
    `e2store.boards.dataset`), in its arm `arm` (default "default").  The file, or
    the dataset's (arm, seed), is held for the whole run (a second writer gets
    `BusyError`); the restarts of `seed` it holds are not run again (a damaged file is
    refused, never rewritten).  `live`: draw the progress line on stderr (the status file
    of `--status` is fed either way).  `shard` (K, N): only restarts k with k % N == K
    (`run_best`), the dataset's lock that of (arm, seed, shard).  A Ctrl-C from the plan
    to the report (in the main thread) stops the run: the report of what it found, its
    `ended` "interrupted", the restarts that ended in `output` (a fill under way ends
    early, its board as filled so far; the kernel's compile stops midway, nothing run; a
    store's tables being built cannot: the run ends after them, nothing run).
    `keep_min_score`: the boards below that score are written without their cells
    (`e2store.boards.keep_boards`: their statistics and keys are)."""
    from e2store.boards.dataset import boards_sink
    from e2store.boards.table import keep_boards, make_boards

    interrupted = threading.Event()  # set by Ctrl-C: the run stops, what ended is kept
    with sigint_sets(interrupted):  # up to the report: no KeyboardInterrupt midway
        plan = best_plan(instance, scan, fixed, breaks, quota, clues=clues, order=order,
                         store=store)
        with boards_sink(output, instance, seed, arm, shard) as sink:  # a second run refused
            n = instance.width * instance.height
            show = BestProgress(workers, seconds, max_nodes, live=live)
            tracer = Trace(trace)  # --trace FILE: a line every few seconds
            filled: list[tuple[int, np.ndarray, RestartResult]] = []
            seen: set[str] = set()  # the keys of the boards finished in this run
            tally = FinishTally()

            def on_result(r: RestartResult, run: BestRun) -> None:
                cells, rows = [r.board], [restart_row(r, plan.full)]
                final: list[tuple[int, np.ndarray, RestartResult]] = []

                def add(source: str, board: np.ndarray, sc: int) -> None:
                    """A row made as its board is: `found` times the fill and finish."""
                    cells.append(board)
                    rows.append(restart_row(r, plan.full, source, score=sc,
                                            holes=int((board < 0).sum()),
                                            mismatches=plan.full - sc))
                    final[:] = [(sc, board, r)]  # the restart's last board: its score

                if fill:  # cut short by Ctrl-C: the board as filled so far
                    f = fill_holes(instance, r.board, seconds=FILL_SECONDS,
                                   keep=set(plan.fixed), stop=interrupted.is_set)
                    add("filled", f.board, f.score)
                    if finish:
                        t = time.perf_counter()
                        b, sc = finish_restart(instance, plan, r, f.board, seen,
                                               stop=interrupted.is_set)
                        tally.add(f.score, sc, time.perf_counter() - t)
                        add("finished", b, sc)
                    if not filled or final[0][0] > filled[0][0]:
                        filled[:] = final
                sink.write(r.restart, keep_boards(make_boards(n, cells, rows), keep_min_score,
                                                  instance.width, instance.height))
                show.restart(r, run, filled[0][0] if filled else None)
                assert run.best is not None
                tracer.restart(len(run.results), run.best.depth, run.best.score,
                               filled[0][0] if filled else None)

            def tick(nodes: int) -> None:
                show.tick(nodes)
                tracer.tick(nodes)

            try:
                run = run_best(instance, scan=scan, seed=seed, restart_nodes=restart_nodes,
                               workers=workers, seconds=seconds, max_nodes=max_nodes,
                               restarts=restarts, done=sink.done, shard=shard,
                               on_result=on_result, tick=tick, kernel=kernel,
                               heartbeat=show.refresh, plan=plan, interrupted=interrupted)
            finally:
                show.close()
                tracer.close()
        if interrupted.is_set():  # Ctrl-C as the run ended, too
            run.ended = "interrupted"
        report = best_report(instance, run, plan, filled[0] if filled else None, sink.path)
        if finish and fill:
            report["finish"] = tally.to_dict()
    if sink.arm is not None:
        report.update(boards_dataset=True, arm=sink.arm)
    if shard is not None:
        report["shard"] = list(shard)
    return report


class FinishTally:
    """What a run's finish made of its restarts: how many it finished, raised, the points
    it added and the seconds it took."""

    def __init__(self) -> None:
        self.restarts = self.raised = self.gain = 0
        self.seconds = 0.0

    def add(self, before: int, after: int, seconds: float) -> None:
        self.restarts += 1
        self.raised += after > before
        self.gain += after - before
        self.seconds += seconds

    def to_dict(self) -> dict[str, Any]:
        return {"restarts": self.restarts, "raised": self.raised, "gain": self.gain,
                "seconds": round(self.seconds, 3)}


def finish_restart(instance: Instance, plan: BestPlan, r: RestartResult, filled: np.ndarray,
                   seen: set[str], stop: Callable[[], bool] | None = None,
                   ) -> tuple[np.ndarray, int]:
    """The best board a restart's finish makes, and its score: its best board (`filled`:
    as `fill_holes` filled it) and the other boards it held (`RestartResult.others`, each
    filled) with their tails re-solved exactly (`grow_tail` over the plan's scan, its fixed
    cells kept; `FINISH_KS`, `FINISH_NODES`, `FINISH_SECONDS`).  A board whose key
    (`board_key`) is in `seen`, finished earlier in the run, is not finished again; each
    board's key, before and after its fill, is added.  Never below `filled`'s score.
    `stop()` true cuts it short (the best so far), and so does a Ctrl-C while it runs
    (`sigint_raises`: in a compile of its kernels too) when `stop()` says so."""
    from e2store.boards.keys import board_key
    from e2store.boards.table import score

    from .finish import grow_tail
    from .schedules import FINISH_KS, FINISH_NODES, FINISH_SECONDS

    w, h = instance.width, instance.height
    keep = set(plan.fixed)
    best, top = filled, score(instance, filled).matched
    try:  # a cold run's first finish compiles its kernels (seconds): Ctrl-C stops that too
        with sigint_raises():
            for i, (cells, _, _) in enumerate(((r.board, 0, 0), *r.others)):
                if stop is not None and stop():
                    break
                key = board_key(cells, w, h)
                if key in seen:
                    continue
                seen.add(key)
                board = filled if i == 0 else fill_holes(
                    instance, cells, seconds=FILL_SECONDS, keep=keep, stop=stop).board
                key = board_key(board, w, h)
                if i and key in seen:
                    continue
                seen.add(key)
                g = grow_tail(instance, board, plan.order, ks=FINISH_KS,
                              max_nodes=FINISH_NODES, seconds=FINISH_SECONDS, keep=keep,
                              stop=stop)
                if g.score > top or (g.score == top and (best < 0).any()
                                     and not (g.board < 0).any()):
                    best, top = g.board, g.score
    except BaseException:
        if stop is None or not stop():
            raise
        # a Ctrl-C's KeyboardInterrupt (or the error numba made of it): the best so far
    return best, top


def best_report(instance: Instance, run: BestRun, plan: BestPlan,
                filled: tuple[int, np.ndarray, RestartResult] | None,
                out: Path) -> dict[str, Any]:
    """The report of a run (`BestRun.to_dict`) with the instance, the joins, the boards
    file and the best board's viewer URL; `filled`: (score, board, restart) of the best
    full board."""
    from e2store.instance.url import UrlError, board_url

    def url(board: np.ndarray) -> str | None:
        try:
            return board_url(instance, board)
        except UrlError:
            return None

    d = run.to_dict()
    d.update(instance_name=instance.name, joins=plan.full, fixed_cells=len(plan.fixed),
             boards_file=str(out), order=plan.order_name)
    if run.best is not None:
        d["best"]["url"] = url(run.best.board)
    if filled is not None:
        score_, board, r = filled
        d["filled"] = {"score": score_, "depth": r.depth, "seed": r.seed,
                       "restart": r.restart, "board": board.tolist(), "url": url(board)}
    return d


class BestProgress:
    """The live line of a best-score run on a terminal (restarts done, deepest depth, best
    score, best filled score, rate, time left) and, for `--status`, one line per worker:
    tqdm bars (`e2store.progress.progress_snapshot` reads them).  Not `live`, the bars
    draw to nothing, but the status file still has them."""

    def __init__(self, workers: int, seconds: float | None, max_nodes: int | None, *,
                 live: bool) -> None:
        from tqdm import tqdm

        from e2store.progress import progress_interval

        self._null = open(os.devnull, "w")  # noqa: SIM115 - closed in close()
        live = live and sys.stderr.isatty()
        self.bar = tqdm(desc="best", unit="node", unit_scale=True, total=max_nodes,
                        mininterval=progress_interval(), leave=False,
                        file=sys.stderr if live else self._null, dynamic_ncols=True)
        self.workers = workers
        self.end = None if seconds is None else time.monotonic() + seconds
        self.per: dict[int, Any] = {}
        self.count: dict[int, int] = {}
        self.found: dict[str, int] = {}

    def _left(self) -> str | None:
        if self.end is None:
            return None
        s = max(0, int(self.end - time.monotonic()))
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"

    def _postfix(self) -> None:
        parts = [f"{k}={v}" for k, v in self.found.items()]
        if (left := self._left()) is not None:
            parts.append(f"left={left}")
        self.bar.set_postfix_str(", ".join(parts), refresh=False)

    def tick(self, nodes: int) -> None:
        """Nodes run since the last call, the restarts in flight included (`run_best`)."""
        self._postfix()
        self.bar.update(nodes)

    def refresh(self) -> None:
        self._postfix()
        self.bar.refresh()

    def restart(self, r: RestartResult, run: BestRun, filled: int | None) -> None:
        """A restart ended: the run's totals, and the line of the worker that ran it."""
        from tqdm import tqdm

        if self.workers > 1:  # its nodes are in the run's bar already (`tick`)
            w = self.per.get(r.worker)
            if w is None:
                w = self.per[r.worker] = tqdm(desc=f"worker {len(self.per) + 1}",
                                              unit="node", file=self._null, leave=False)
                w.start_t = self.bar.start_t  # its rate over the run, as the run's
            self.count[r.worker] = self.count.get(r.worker, 0) + 1
            w.set_postfix(restarts=self.count[r.worker], depth=r.depth, score=r.score,
                          refresh=False)
            w.update(r.nodes)
        b = run.best
        assert b is not None  # a restart just ended
        self.found = {"restarts": len(run.results), "depth": b.depth, "score": b.score}
        if filled is not None:
            self.found["filled"] = filled
        self.refresh()

    def close(self) -> None:
        for w in self.per.values():
            w.close()
        self.bar.close()
        self._null.close()


def score_url(url: str) -> dict[str, Any]:
    """The score of a board URL from its colours alone (grey is `a`, an empty cell
    `aaaa`; `colours_board`): matched joins, joins, holes.  Every lettering of the viewer
    gives the same score: an order relabels colours one to one and keeps `a` grey; an
    unknown `motifs_order` is refused (`parse_url`)."""
    from e2store.boards.table import score
    from e2store.instance.url import colours_board

    return {"board": url, **score(*colours_board(url)).to_dict()}


def score_boards(instance: Instance, sources: Sequence[str], fill: bool = False,
                 top: int | None = None, improve: bool = False) -> list[dict[str, Any]]:
    """The score of every board of `sources` (files of `x y piece r` lines, boards files,
    boards datasets, saved-board and solutions files, board URLs), each with where it
    comes from and its viewer URL (`e2store.boards.sources.score_sources`); with
    `fill`, of the board with its holes filled (`fill_holes`), the partial board's score
    kept as `filled_from`; with `improve`, filled and then its tail re-solved exactly
    (`improve_board`), the filled score kept as `improved_from`; `top`: only the best
    `top` (`e2store score --top`)."""
    from e2store.boards.sources import score_sources

    def filled(cells: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        f = fill_holes(instance, cells)
        return f.board, {"filled_from": f.before, "holes_filled": f.holes}

    def improved(cells: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        board, said = filled(cells)
        return improve_board(instance, board, said)

    return score_sources(instance, sources, top=top,
                         fill=improved if improve else filled if fill else None)


def improve_board(instance: Instance, board: np.ndarray, said: dict[str, Any] | None = None,
                  ) -> tuple[np.ndarray, dict[str, Any]]:
    """A full board's tail re-solved exactly (`grow_tail` over the last cells of the
    best-score search's scan, K = 16, 24, 32 while each completes; Eternity II's clues the
    board holds in place kept), and what to say of it: `improved_from` (the score before),
    `tail_k` (the largest K proven optimal, 0: none), `tail_nodes`, `tail_seconds`."""
    from e2store.solver.scan import scan_order

    from .finish import grow_tail
    from .plan import eternity_ii
    from .schedules import CLUES, DEFAULT_SCAN

    w = instance.width
    keep = set()
    if eternity_ii(instance):
        keep = {y * w + x for (x, y), (p, r) in CLUES["all"].items()
                if int(board[y * w + x]) == p * 4 + r}
    g = grow_tail(instance, board, scan_order(DEFAULT_SCAN, w, instance.height), keep=keep)
    return g.board, {**(said or {}), "improved_from": g.before, "tail_k": g.k,
                     "tail_nodes": g.nodes, "tail_seconds": round(g.seconds, 3)}
