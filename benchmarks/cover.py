"""Corolles as the pieces of the search (issue 59): `solve --engine dlx` at hamming 0, 1
and 2 against the backtracker without and with a store (the block closure table, its second
run), side by side on the benchmark boards 4x4 to 7x7 (the corner fixed) and jwortmann's
clue puzzles 1-4: solutions (asserted equal where both finish), nodes (dlx: options
tried; backtracker: pieces placed), seconds and peak memory, each case in a fresh process
under a time limit.  For dlx, where its time goes: the model (each region's corolles
enumerated), the table (options as dancing links) and the search, with the options and
the table's size.

    python benchmarks/cover.py [--shared ../shared] [--boards 4 5 6 7 clue1 clue2 clue3
        clue4] [--hamming 0 1 2] [--limit 3600] [--dlx-limit S] [--budget 8G]
        [--cases backtrack store dlx] [--seed-rows R] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import resource
import tempfile
import time
from pathlib import Path

from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]


def _dlx(path: str, hamming: int, budget: int, seed: dict[int, int], out: mp.Queue) -> None:
    """Child: the dlx search, its phases timed (the kernel compiled first, untimed);
    `seed` (cell -> placement) fixed, else the symmetry break's roots."""
    import numpy as np

    from e2store.cover import Xcc, build_model, model_xcc, solve_xcc
    from e2store.cover.model import planned_bytes
    from e2store.cover.search import restricted, xcc_bytes
    from e2store.instance.classes import symmetry_roots
    from e2store.instance.formats import read_instance

    solve_xcc(Xcc(1, 0, np.array([1]), np.array([0]), np.array([0, 1])))  # compile
    inst = read_instance(path)
    t0 = time.perf_counter()
    options, need = planned_bytes(inst, hamming)
    if need > budget:  # refused before a corolle is enumerated, as the command refuses
        out.put({"engine": f"dlx h{hamming}", "options": options, "planned_mib": need / 2**20,
                 "refused": True, "solutions": None})
        return
    base = build_model(inst, hamming)
    t_model = time.perf_counter() - t0
    row = {"engine": f"dlx h{hamming}", "regions": len(base.regions), "solutions": 0,
           "nodes": 0, "model_s": t_model, "table_s": 0.0, "search_s": 0.0, "options": 0,
           "table_mib": 0.0, "planned_mib": need / 2**20}
    for root in [seed] if seed else symmetry_roots(inst):
        t = time.perf_counter()
        x, _, _ = model_xcc(restricted(base, root))
        row["options"] += x.n_options
        row["table_mib"] = max(row["table_mib"], xcc_bytes(x) / 2**20)
        if xcc_bytes(x) > budget:
            out.put({**row, "refused": True})
            return
        row["table_s"] += time.perf_counter() - t
        t = time.perf_counter()
        r = solve_xcc(x)
        row["search_s"] += time.perf_counter() - t
        row["solutions"] += r.solutions
        row["nodes"] += r.nodes
    row["seconds"] = time.perf_counter() - t0
    row["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.put(row)


def _backtrack(path: str, store: str | None, seed: dict[int, int], out: mp.Queue) -> None:
    """Child: the backtracker (with a store: its closure table's second run, the first
    building it untimed); `seed` (cell -> placement) fixed."""
    from e2store.instance.formats import read_instance
    from e2store.query.closures import ClosureBudgetError, ClosureError
    from e2store.solver.search import solve
    from e2store.solver.session import solve_search

    inst = read_instance(path)
    fixed = {(c % inst.width, c // inst.width): v for c, v in seed.items()} or None
    solve(inst, first=True, node_limit=1000)  # the generic kernel compiled or loaded
    if fixed:  # and the seeded search's kernel
        solve_search(inst, fixed=fixed, max_nodes=1000)
    if store is not None:  # builds the table: untimed
        try:
            solve_search(inst, store=store, method="closure", fixed=fixed)
        except (ClosureBudgetError, ClosureError) as e:  # refused as the command refuses it
            out.put({"engine": "backtrack + store", "refused": True, "solutions": None,
                     "why": str(e)})
            return
    t0 = time.perf_counter()
    r = solve_search(inst, store=store, method="closure" if store else "auto", fixed=fixed)
    out.put({"engine": "backtrack" + (" + store" if store else ""),
             "solutions": r.solutions, "nodes": r.nodes,
             "seconds": time.perf_counter() - t0,
             "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def _fresh(target, args: tuple, limit: float) -> dict:
    """`target(*args, queue)` in a spawned process; {"timeout": limit} past the limit."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    t = time.perf_counter()
    p.start()
    res = None
    while res is None:
        try:
            res = q.get(timeout=1.0)
        except queue.Empty:
            if not p.is_alive():  # died with nothing to say (its traceback is on stderr)
                res = {"failed": p.exitcode, "solutions": None}
            elif time.perf_counter() - t > limit:
                p.kill()
                res = {"timeout": limit}
    p.join()
    res["wall_s"] = time.perf_counter() - t
    return res


def _seed(path: str, rows: int) -> dict[int, int]:
    """The first `rows` rows of the backtracker's first solution (cell -> placement)."""
    from e2store.instance.formats import read_instance
    from e2store.solver.session import solve_search

    inst = read_instance(path)
    if not rows:
        return {}
    board = solve_search(inst, first=True, keep=1).boards[0]
    return {c: int(board[c]) for c in range(rows * inst.width)}


def _path(shared: Path, board: str) -> Path:
    if board.startswith("clue"):
        return shared / "instances" / f"{board}_jwortmann.txt"
    return shared / "instances" / "benchmark" / f"pieces_{board}x{board}.txt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--boards", nargs="+",
                    default=["4", "5", "6", "7", "clue1", "clue2", "clue3", "clue4"])
    ap.add_argument("--limit", type=float, default=3600.0, help="seconds per case")
    ap.add_argument("--dlx-limit", type=float, default=None,
                    help="seconds per dlx case (default: --limit)")
    ap.add_argument("--hamming", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--budget", default="8G", help="largest dlx table (K/M/G)")
    ap.add_argument("--cases", nargs="+", default=["backtrack", "store", "dlx"],
                    choices=["backtrack", "store", "dlx"],
                    help="which engines to run (dlx: at each --hamming)")
    ap.add_argument("--seed-rows", type=int, default=0,
                    help="fix the first R rows of the backtracker's first solution")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    budget = int(float(a.budget[:-1]) * units[a.budget[-1]]) if a.budget[-1] in units else int(
        a.budget)
    figures: dict = {"host": cpu_model(), "limit_s": a.limit, "dlx_limit_s": a.dlx_limit,
                     "seed_rows": a.seed_rows, "boards": {}}
    print(f"host: {figures['host']}; each case in a fresh process, at most {a.limit:.0f} s"
          + (f" (dlx: {a.dlx_limit:.0f} s)" if a.dlx_limit else ""))
    for board in a.boards:
        path = str(_path(a.shared, board))
        seed = _seed(path, a.seed_rows)
        rows = []
        with tempfile.TemporaryDirectory(prefix="cover-store-") as store:
            cases = [*([(_backtrack, (path, None, seed))] if "backtrack" in a.cases else []),
                     *([(_backtrack, (path, store, seed))] if "store" in a.cases else []),
                     *((_dlx, (path, h, budget, seed)) for h in a.hamming
                       if "dlx" in a.cases)]
            for target, args in cases:
                row = _fresh(target, args, a.limit if target is _backtrack or a.dlx_limit
                             is None else a.dlx_limit)
                rows.append(row)
                print(f"{board:>6} {json.dumps(row)}", flush=True)
        counts = {r["solutions"] for r in rows if r.get("solutions") is not None}
        assert len(counts) <= 1, (board, rows)  # the same solutions wherever both finish
        figures["boards"][board] = rows
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
