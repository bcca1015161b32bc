"""Solving the subtrees of openings in parallel, and merging the reports of shards.

`solve_openings` solves the openings' subtrees over N processes (spawn context; each worker
compiles or loads the kernel once and reuses it), heaviest estimated openings first, and
merges the counts; `merge_reports` sums the JSON reports of shards solved separately (the
Snakemake rules of pipeline/rules/solve.smk).
"""


from __future__ import annotations

import math
import multiprocessing as mp
import os
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from e2store.boards.solutions import check_solutions
from e2store.errors import ChildFailedError, SolverError
from e2store.instance.model import GREY, Instance
from e2store.processes import die_with_parent
from e2store.progress import progress_interval
from e2store.query.openings import Openings, check_openings, read_openings
from e2store.solver import _kernels as K
from e2store.solver import _unrolled
from e2store.solver.closure import closure_counts_dict
from e2store.solver.plan import board_dtype, build_plan, fixed_problem
from e2store.solver.scan import scan_order
from e2store.solver.search import (
    DEFAULT_MAX_STORED,
    NO_LIMIT,
    Search,
    UnrolledSearch,
)
from e2store.zones.geometry import SIDE_STEP


def estimate_costs(instance: Instance, boards: np.ndarray) -> np.ndarray:
    """A cheap relative cost of each opening's subtree: the product over the free cells
    touching the covered ones of (1 + placements that suit the cell's frame and match the
    colours its placed neighbours show), pieces in use ignored."""
    n = len(boards)
    if n == 0:
        return np.zeros(0)
    w, h = instance.width, instance.height
    rot = instance.rotated_table().astype(np.int64)
    grey = ((rot == GREY) * (1 << np.arange(4))).sum(axis=1)
    filled = boards[0] >= 0
    k_col = int(rot.max()) + 1
    log_cost = np.zeros(n)
    for cell in np.flatnonzero(~filled).tolist():
        x, y = cell % w, cell // w
        frame, sides = 0, []
        for s, (dx, dy) in enumerate(SIDE_STEP):
            nx, ny = x + dx, y + dy
            if not (0 <= nx < w and 0 <= ny < h):
                frame |= 1 << s
            elif filled[ny * w + nx]:
                sides.append((s, ny * w + nx))
        if not sides:
            continue
        sel = np.flatnonzero(grey == frame)
        key_p = np.zeros(len(sel), np.int64)
        key_b = np.zeros(n, np.int64)
        for s, nb in sides:
            key_p = key_p * k_col + rot[sel, s]
            key_b = key_b * k_col + rot[boards[:, nb].astype(np.int64), (s + 2) % 4]
        uniq, counts = np.unique(key_p, return_counts=True)
        i = np.clip(np.searchsorted(uniq, key_b), 0, max(len(uniq) - 1, 0))
        hit = (uniq[i] == key_b) if len(uniq) else np.zeros(n, bool)
        log_cost += np.log1p(np.where(hit, counts[i] if len(uniq) else 0, 0))
    return np.exp(log_cost - log_cost.max())


def plan_chunks(costs: np.ndarray, workers: int, per_worker: int = 16) -> list[np.ndarray]:
    """Opening indices cut into chunks, heaviest estimated first: each chunk holds about
    1/(workers*per_worker) of the total cost (a heavy opening alone), so the pool hands out
    big jobs first and evens out with small ones."""
    order = np.argsort(-costs, kind="stable")
    if len(order) == 0:
        return []
    target = float(costs.sum()) / max(1, workers * per_worker)
    max_len = max(1, math.ceil(len(order) / max(1, workers * 4)))
    chunks, cur, acc = [], [], 0.0
    for i in order.tolist():
        cur.append(i)
        acc += float(costs[i])
        if acc >= target or len(cur) >= max_len:
            chunks.append(np.array(cur, dtype=np.int64))
            cur, acc = [], 0.0
    if cur:
        chunks.append(np.array(cur, dtype=np.int64))
    return chunks


@dataclass
class OpeningsResult:
    """Merged result of solving openings: totals, per-opening counts, per-worker stats."""

    instance: str
    width: int
    height: int
    scan: str
    symmetry_break: bool
    openings: int
    workers: int
    shard: tuple[int, int] | None = None
    first_only: bool = False
    solutions: int = 0
    nodes: int = 0
    seconds: float = 0.0
    complete: bool = False
    opening_solutions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    opening_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    opening_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))  # when reported
    per_worker: list[dict] = field(default_factory=list)
    boards: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int16))
    closure_counts: np.ndarray = field(default_factory=lambda: np.zeros(4, np.int64))
    closure: dict | None = None  # with a closure table: the table, probes and cuts

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    @property
    def stored(self) -> int:
        return int(self.boards.shape[0])

    def to_dict(self) -> dict:
        return {"instance": self.instance, "width": self.width, "height": self.height,
                "scan": self.scan, "symmetry_break": self.symmetry_break,
                "openings": self.openings, "workers": self.workers,
                "shard": list(self.shard) if self.shard else None,
                "first_only": self.first_only, "complete": self.complete,
                "solutions": self.solutions, "stored": self.stored, "nodes": self.nodes,
                "seconds": round(self.seconds, 6),
                "nodes_per_second": round(self.nodes_per_second, 1),
                "openings_with_solutions": int((self.opening_solutions > 0).sum()),
                "per_worker": self.per_worker,
                **({} if self.closure is None else {"closure": self.closure})}


class Subtrees:
    """Solves seeded subtrees that all fix the same cells, reusing one search plan.

    The plan (scan, cell classes, buckets) depends only on which cells are fixed, so it is
    built once; each opening then only sets its fixed values and runs the kernel, about
    100x cheaper per opening than a call of `solve`.  `finals` (optional) is handed to the
    solver's search as `solve(finals=...)` would.  `kernel` picks the kernel of complete
    searches (`e2store.solver._unrolled.use_unrolled`): "auto" (default) generates one for this
    plan when it is deep enough to pay for compiling, "generic" never, "unrolled" always
    (when the board has at most 64 pieces and there are no finals).
    """

    def __init__(self, instance: Instance, scan: str | Path | np.ndarray, covered: list[int],
                 finals=None, kernel: str = "auto", closure=None, distinct: bool = False):
        self.instance = instance
        w, h = instance.width, instance.height
        order = (np.asarray(scan, dtype=np.int64).reshape(-1, 2)
                 if isinstance(scan, np.ndarray) else scan_order(scan, w, h))
        self.covered = list(covered)
        self.plan = build_plan(instance, order, {c: 0 for c in self.covered}, distinct)
        self.extra = () if finals is None else (finals,)
        self._cells = np.array(self.covered, dtype=np.int64)
        self._spare: Search | None = None  # reused between openings (not with finals)
        self._fast: UnrolledSearch | None = None  # the generated kernel, made on first use
        # complete searches without finals may run a kernel generated for this plan; with a
        # closure table (`e2store.query.closures`) they must
        self.closure = closure
        self.unrolled = not self.extra and (_unrolled.use_unrolled(kernel, self.plan) or (
            closure is not None and _unrolled.supported(self.plan)))
        if closure is not None and (self.extra or not self.unrolled):
            raise SolverError("a closure table is probed by the generated kernel: not with "
                              "finals, the generic kernel or boards of over 64 pieces")

    @property
    def closure_counts(self) -> np.ndarray:
        """Closure probes and cuts so far (zeros without a closure table)."""
        return self._fast.counts if self._fast is not None else np.zeros(4, np.int64)

    def warm_up(self, board: np.ndarray) -> None:
        """Compile or load every kernel a search under `board` may use."""
        self.search(board).warm_up()
        if self.unrolled:
            self._fast_search()

    def _fast_search(self) -> UnrolledSearch:
        if self._fast is None:
            self._fast = UnrolledSearch(self.instance, self.plan, self.closure)
        return self._fast

    def _check(self, board: np.ndarray) -> None:
        problem = fixed_problem(self.instance, {c: int(board[c]) for c in self.covered})
        if problem is not None:
            raise SolverError(f"opening: {problem}")

    def search(self, board: np.ndarray, buffer_rows: int = 256, checked: bool = False,
               ) -> Search:
        """A fresh search of the subtree under `board`'s covered cells (`checked`: the
        board already passed `check_openings`)."""
        if not checked:
            self._check(board)
        s = self._spare
        if self.extra or s is None or len(s.sols) != buffer_rows:
            fixed = {c: int(board[c]) for c in self.covered}
            s = Search(replace(self.plan, fixed=fixed), buffer_rows, *self.extra)
            if not self.extra:
                self._spare = s
            return s
        # reuse the state arrays (the plan's `fixed` is read only when they are made): a
        # FRESH search re-opens depth 0 and every depth it reaches
        s.state[:] = (0, K.FRESH, 0, 0, -1)
        s.placed.fill(-1)
        s.shown.fill(0)
        cells = self._cells
        vals = board[cells].astype(np.int64)
        s.placed[cells] = vals
        s.shown.reshape(-1, 4)[cells] = self.plan.col[vals]
        s.used[:] = self.plan.used_words((vals >> 2).tolist())
        return s

    def solve(self, board: np.ndarray, first: bool = False, max_stored: int = 0,
              checked: bool = False) -> tuple[int, int, np.ndarray | None]:
        """(solutions, nodes, up to `max_stored` solution boards) of one opening.  A complete
        search (not `first`) runs the generated kernel when `unrolled`, else the generic
        one; both give the same counts and boards."""
        if not first and self.unrolled:
            if not checked:
                self._check(board)
            return self._fast_search().solve(board, max_stored)
        s = self.search(board, max(1, min(256, max_stored)), checked)
        kept, n_kept = [], 0
        while not s.done:
            found = s.run(NO_LIMIT, first)
            if len(found):
                check_solutions(self.instance, found)
                if n_kept < max_stored:
                    kept.append(found[:max_stored - n_kept].copy())
                    n_kept += len(kept[-1])
                if first:
                    break
        boards = np.concatenate(kept) if kept else None
        return int(s.state[K.SOLUTIONS]), int(s.state[K.NODES]), boards




_WORKER: dict = {}


def _init_worker(instance: Instance, scan, covered: list[int], finals,
                 warm: np.ndarray | None, kernel: str = "auto", closure=None,
                 distinct: bool = False, parent: int | None = None) -> None:
    """Pool initializer: build the plan once, load the closure table (each process its
    own copy); compile or load the kernel before any work.  `parent`: the pid of the
    pool's parent, whose death (even by SIGKILL) ends this worker."""
    if parent is not None:
        die_with_parent(parent)
    sub = Subtrees(instance, scan, covered, finals, kernel,
                   None if closure is None else closure.loaded(), distinct)
    _WORKER["subtrees"] = sub
    if warm is not None:
        sub.warm_up(warm)


def _solve_chunk(index: np.ndarray, boards: np.ndarray, first: bool, max_stored: int) -> dict:
    """Solve the openings `boards` (their indices `index`); counts per opening."""
    sub: Subtrees = _WORKER["subtrees"]
    t0 = time.perf_counter()
    counts0 = sub.closure_counts
    sols = np.zeros(len(index), np.int64)
    nodes = np.zeros(len(index), np.int64)
    kept: list[np.ndarray] = []
    kept_pos: list[np.ndarray] = []
    n_kept = 0
    for k, row in enumerate(boards):
        sols[k], nodes[k], found = sub.solve(row, first, max(0, max_stored - n_kept), True)
        if found is not None:
            kept.append(found)
            kept_pos.append(np.full(len(found), index[k], np.int64))
            n_kept += len(found)
        if first and sols[k]:
            sols, nodes, index = sols[:k + 1], nodes[:k + 1], index[:k + 1]
            break
    return {"pid": os.getpid(), "index": index, "solutions": sols, "nodes": nodes,
            "seconds": time.perf_counter() - t0,
            "closure": sub.closure_counts - counts0,
            "boards": np.concatenate(kept) if kept else None,
            "board_pos": np.concatenate(kept_pos) if kept_pos else None}


def solve_openings(instance: Instance, ops: Openings, *, workers: int = 1,
                   scan: str | Path | np.ndarray = "rowscan", first: bool = False,
                   shard: tuple[int, int] | None = None, max_stored: int = DEFAULT_MAX_STORED,
                   progress: bool = False, finals=None, kernel: str = "auto",
                   closure=None, distinct: bool = False) -> OpeningsResult:
    """Solve every opening's subtree (seed = its cells, no further symmetry break) over
    `workers` processes and merge: totals, counts per opening, per-worker stats, and up to
    `max_stored` solutions.  `shard=(k, s)` solves only openings i with i % s == k.
    The counts equal those of `solve(instance, scan, seed=opening, symmetry_break=False)`
    summed over the openings; `finals` is passed to the search as `solve` does; `kernel`
    and `closure` (a block closure table, `e2store.query.closures`; complete searches
    only) to `Subtrees`; `distinct`: the subtrees of a distinct search (the openings hold
    the lowest copies of their classes, `e2store.solver.distinct`), their layouts counted."""
    if closure is not None and first:
        raise SolverError("a closure table is probed by the generated kernel of a complete "
                          "search; it cannot be used with a first-solution search")
    if (ops.instance, ops.width, ops.height) != (instance.id, instance.width, instance.height):
        raise SolverError(f"openings of instance {ops.instance} ({ops.width}x{ops.height}), "
                          f"not of {instance.id} ({instance.width}x{instance.height})")
    if workers < 1:
        raise SolverError(f"workers {workers} (expected >= 1)")
    if ops.multiplicity is not None:
        raise SolverError("these are distinct openings (`e2store openings --distinct`): a "
                          "search from them is not supported yet; write the openings without "
                          "--distinct, or run `e2store solve --all --distinct`")
    _unrolled.check_choice(kernel)
    index = np.arange(ops.count, dtype=np.int64)
    if shard is not None:
        k, s = shard
        if not (s >= 1 and 0 <= k < s):
            raise SolverError(f"shard {k}/{s} (expected K/S with 0 <= K < S)")
        index = index[index % s == k]
    boards = ops.boards[index]
    check_openings(instance, boards)
    if isinstance(scan, np.ndarray):
        scan_name = "custom"
    else:
        scan_name = str(scan)
        scan = scan_order(scan, instance.width, instance.height)  # checked here, not in a worker
    res = OpeningsResult(instance.id, instance.width, instance.height, str(scan_name),
                         ops.symmetry_break, len(index), workers, shard, first)
    res.opening_solutions = np.zeros(len(index), np.int64)
    res.opening_nodes = np.zeros(len(index), np.int64)
    res.opening_seconds = np.zeros(len(index))
    # each chunk in opening order, so that the boards kept are the first in search order
    chunks = [np.sort(c) for c in plan_chunks(estimate_costs(instance, boards), workers)]
    stats: dict[int, dict] = {}
    kept: list[tuple[np.ndarray, np.ndarray]] = []  # (opening positions, boards)
    n_kept = 0
    done = 0
    bar = tqdm(total=len(index), desc=f"openings {instance.name}", unit=" openings",
               disable=not progress, delay=1.0, mininterval=progress_interval())

    def take(out: dict) -> None:
        nonlocal n_kept, done
        pos = out["index"]
        res.opening_solutions[pos] = out["solutions"]
        res.opening_nodes[pos] = out["nodes"]
        st = stats.setdefault(out["pid"], {"worker": len(stats), "pid": out["pid"],
                                           "openings": 0, "solutions": 0, "nodes": 0,
                                           "seconds": 0.0})
        st["openings"] += len(pos)
        st["solutions"] += int(out["solutions"].sum())
        st["nodes"] += int(out["nodes"].sum())
        st["seconds"] += out["seconds"]
        res.opening_seconds[pos] = time.perf_counter() - t0
        res.closure_counts += out["closure"]
        if out["boards"] is not None:
            kept.append((out["board_pos"], out["boards"]))
            n_kept += len(out["boards"])
            if n_kept > max_stored:  # keep the first max_stored in opening order
                order_pos, order_boards = _first_boards(kept, max_stored)
                kept[:] = [(order_pos, order_boards)]
                n_kept = len(order_boards)
        done += len(pos)
        bar.update(len(pos))
        bar.set_postfix(solutions=int(res.opening_solutions.sum()),
                        nodes=int(res.opening_nodes.sum()), refresh=False)

    t0 = time.perf_counter()
    found_first = False
    try:
        if workers == 1 or len(chunks) <= 1:
            _init_worker(instance, scan, ops.covered, finals,
                         boards[0] if len(boards) else None, kernel, closure, distinct)
            for c in chunks:
                take(_solve_chunk(c, boards[c], first, max_stored))
                if first and res.opening_solutions.sum():
                    found_first = True
                    break
        else:
            ctx = mp.get_context("spawn")
            with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                     initargs=(instance, scan, ops.covered, finals, boards[0],
                                               kernel, closure, distinct, os.getpid()),
                                     ) as pool:
                pending = {pool.submit(_solve_chunk, c, boards[c], first, max_stored)
                           for c in chunks}
                while pending:
                    fin, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in fin:
                        try:
                            take(f.result())
                        except BrokenProcessPool:
                            raise ChildFailedError(
                                "a worker process died (out of memory, killed, or a script "
                                "that starts workers without an `if __name__ == "
                                "'__main__':` guard)") from None
                    if first and res.opening_solutions.sum():
                        found_first = True
                        for f in pending:
                            f.cancel()
                        break
    finally:
        bar.close()
    res.seconds = time.perf_counter() - t0
    res.solutions = int(res.opening_solutions.sum())
    res.nodes = int(res.opening_nodes.sum())
    res.complete = done == len(index) or found_first
    if closure is not None:
        res.closure = {**closure.summary(), "used": True,
                       **closure_counts_dict(res.closure_counts)}
    res.per_worker = [{**s, "seconds": round(s["seconds"], 6)}
                      for s in sorted(stats.values(), key=lambda s: s["worker"])]
    dtype = board_dtype(instance.n_pieces)
    res.boards = (_first_boards(kept, max_stored)[1].astype(dtype) if kept
                  else np.zeros((0, instance.width * instance.height), dtype=dtype))
    return res



def solve_with_openings(instance: Instance, path: str | Path, *, workers: int = 1,
                        scan: str | Path | np.ndarray = "rowscan", first: bool = False,
                        shard: tuple[int, int] | None = None, save: str | Path | None = None,
                        keep: int = DEFAULT_MAX_STORED, progress: bool = False, finals=None,
                        kernel: str = "auto", closure=None) -> OpeningsResult:
    """Solve the openings of the file `path` (`write_openings`) over `workers` processes
    (`solve_openings`) and, with `save`, write the solutions kept (at most `keep`) there:
    the whole of `e2store solve --openings FILE` but its report."""
    from e2store.boards.solutions import write_solutions

    res = solve_openings(instance, read_openings(path), workers=workers, scan=scan,
                         first=first, shard=shard, max_stored=keep, progress=progress,
                         finals=finals, kernel=kernel, closure=closure)
    if save is not None:
        write_solutions(save, res.boards, instance, res.scan)
    return res

def _first_boards(kept: list[tuple[np.ndarray, np.ndarray]], limit: int,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The first `limit` boards by opening (stable: in search order inside an opening)."""
    pos = np.concatenate([p for p, _ in kept])
    boards = np.concatenate([b for _, b in kept])
    order = np.argsort(pos, kind="stable")[:limit]
    return pos[order], boards[order]


def merge_reports(reports: Sequence[dict]) -> dict:
    """Sum the JSON reports (`OpeningsResult.to_dict`) of the shards of one openings file:
    solutions, nodes, openings; `seconds` is the sum over shards, `max_shard_seconds` the
    longest.  SolverError unless the shards are 0..S-1 of one instance, scan and S."""
    if not reports:
        raise SolverError("no shard reports to merge")
    first = reports[0]
    same = ("instance", "scan", "symmetry_break", "first_only")
    for r in reports:
        for k in same:
            if r.get(k) != first.get(k):
                raise SolverError(f"shard reports disagree on {k}: {first.get(k)!r} and "
                                  f"{r.get(k)!r}")
    shards = sorted(tuple(r["shard"]) if r.get("shard") else (0, 1) for r in reports)
    s = shards[0][1]
    if shards != [(k, s) for k in range(s)]:
        raise SolverError(f"shard reports {shards} are not shards 0..{s - 1} of {s}, "
                          f"each once")
    seconds = sum(r["seconds"] for r in reports)
    nodes = sum(r["nodes"] for r in reports)
    return {**{k: first[k] for k in ("instance", "width", "height", *same)},
            "shards": s, "openings": sum(r["openings"] for r in reports),
            "complete": all(r["complete"] for r in reports),
            "solutions": sum(r["solutions"] for r in reports), "nodes": nodes,
            "seconds": round(seconds, 6), "max_shard_seconds": max(r["seconds"] for r in reports),
            "nodes_per_second": round(nodes / seconds, 1) if seconds > 0 else 0.0,
            "openings_with_solutions": sum(r["openings_with_solutions"] for r in reports)}
